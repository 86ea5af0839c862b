import SQLKit

/// The family page's parts (over alias `t` of `families`, or by the family's id): who is in it,
/// the invitations still open, the children, and the family's own log. Times in UTC, as the
/// console's lists show them. No invitation's token (only its hash is stored) is ever read.
enum FamilySQL {
    /// The organizer: the family's parent of longest standing (`FamilyRole.organizer`).
    static let organizerEmail: SQLFragment = """
        (SELECT op.email FROM family_members om JOIN parents op ON op.id = om.account_id
          WHERE om.family_id = t.id AND om.role = 'parent' ORDER BY om.joined_at, om.account_id LIMIT 1)
        """

    static let pendingInvitations: SQLFragment = """
        (SELECT count(*) FROM family_invitations i
          WHERE i.family_id = t.id AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now())
        """

    static let related: [AdminRelated] = [
        AdminRelated(title: "Members",
                     columns: [AdminColumn("email", "Email"), AdminColumn("role", "Role", format: .badge),
                               AdminColumn("may_answer", "Answers requests"), AdminColumn("joined", "Joined (UTC)"),
                               AdminColumn("verified", "Address confirmed"), AdminColumn("locked", "Locked")],
                     query: { id in """
                        SELECT m.account_id AS id, p.email, m.role,
                               CASE WHEN m.role = 'parent' THEN 'Yes (a parent)' WHEN m.may_answer_requests THEN 'Yes' ELSE 'No' END AS may_answer,
                               to_char(m.joined_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS joined,
                               CASE WHEN p.email_verified_at IS NOT NULL THEN 'Yes' ELSE 'No' END AS verified,
                               CASE WHEN p.locked_at IS NOT NULL THEN 'Yes' ELSE 'No' END AS locked
                          FROM family_members m JOIN parents p ON p.id = m.account_id
                         WHERE m.family_id = \(bind: id) ORDER BY m.joined_at, m.account_id
                        """ },
                     rowLink: { family, account in AdminPath.familyMember(family, account) },
                     emptyText: "No members."),
        AdminRelated(title: "Pending invitations",
                     columns: [AdminColumn("email", "Address"), AdminColumn("role", "Role", format: .badge),
                               AdminColumn("invited_by", "Invited by"), AdminColumn("sent", "Sent (UTC)"), AdminColumn("expires", "Expires (UTC)")],
                     query: { id in """
                        SELECT i.id, i.email, i.role, COALESCE(p.email, 'a former member') AS invited_by,
                               to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS sent,
                               to_char(i.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS expires
                          FROM family_invitations i LEFT JOIN parents p ON p.id = i.invited_by
                         WHERE i.family_id = \(bind: id) AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
                         ORDER BY i.id DESC
                        """ },
                     rowLink: { family, invitation in AdminPath.familyInvitationRevoke(family, invitation) },
                     emptyText: "No pending invitations."),
        AdminRelated(title: "Children",
                     columns: [AdminColumn("name", "Child"), AdminColumn("library", "Books in their library", format: .number),
                               AdminColumn("added_by", "Added by"), AdminColumn("added", "Added (UTC)")],
                     query: { id in """
                        SELECT c.id, 'Child #' || c.id AS name, (SELECT count(*) FROM library_entries l WHERE l.child_id = c.id)::text AS library,
                               COALESCE(p.email, '—') AS added_by, to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS added
                          FROM children c LEFT JOIN parents p ON p.id = c.added_by
                         WHERE c.family_id = \(bind: id) ORDER BY c.id
                        """ },
                     emptyText: "No children."),
        AdminRelated(title: "Family log (newest 50)",
                     columns: [AdminColumn("at", "When (UTC)"), AdminColumn("member", "Member"), AdminColumn("action", "Did"),
                               AdminColumn("child", "Child")],
                     query: { id in """
                        SELECT a.id, to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS at,
                               COALESCE(p.email, 'a deleted account') AS member, a.action, COALESCE('Child #' || a.child_id, '—') AS child
                          FROM parent_audit_log a LEFT JOIN parents p ON p.id = a.parent_id LEFT JOIN children c ON c.id = a.child_id
                         WHERE a.family_id = \(bind: id) ORDER BY a.created_at DESC, a.id DESC LIMIT 50
                        """ },
                     emptyText: "Nothing yet."),
    ]
}

extension AdminPath {
    /// A member's page in a family: role, removal (`FamilyMembersController`).
    static func familyMember(_ family: Int, _ account: Int) -> String {
        path(AdminResource.families.slug, String(family), FamilyMembersController.members, String(account))
    }

    static func familyMemberRemove(_ family: Int, _ account: Int) -> String {
        familyMember(family, account) + "/" + FamilyMembersController.remove
    }

    static func familyInvitationRevoke(_ family: Int, _ invitation: Int) -> String {
        path(AdminResource.families.slug, String(family), FamilyMembersController.invitations, String(invitation), FamilyMembersController.revoke)
    }
}
