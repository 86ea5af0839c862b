import SQLKit

extension AdminResource {
    /// Families, for support (admins only): who is in a family and as what, its pending
    /// invitations, its children and its own log. A family's page links each member to their page
    /// (`FamilyMembersController`: change the role, remove from the family) and each invitation to
    /// its revocation; the member's account (lock, sign out, country) is in `Accounts`. Families
    /// are made by the app (every account founds one): none is created, edited or deleted here.
    static let families = AdminResource(
        slug: "families", table: "families", singular: "Family", plural: "Families",
        displayName: "'Family #' || t.id",
        list: .init(
            columns: [
                AdminColumn("family", "Family", sql: "'#' || t.id", format: .link),
                AdminColumn("organizer", "Organizer", sql: FamilySQL.organizerEmail),
                AdminColumn("members", "Members", sql: "(SELECT count(*) FROM family_members m WHERE m.family_id = t.id)", format: .number),
                AdminColumn("caregivers", "Caregivers", sql: "(SELECT count(*) FROM family_members m WHERE m.family_id = t.id AND m.role = 'caregiver')", format: .number),
                AdminColumn("children", "Children", sql: "(SELECT count(*) FROM children c WHERE c.family_id = t.id)", format: .number),
                AdminColumn("invitations", "Pending invitations", sql: FamilySQL.pendingInvitations, format: .number),
                AdminColumn("id", "Number", sortable: true, format: .number),
                AdminColumn("created_at", "Created", sortable: true, format: .datetime),
            ],
            search: AdminSearch(label: "A member's email") { text in
                let words = text.trimmingCharacters(in: .whitespaces)
                guard !words.isEmpty else { return nil }
                return """
                    EXISTS (SELECT 1 FROM family_members sm JOIN parents sp ON sp.id = sm.account_id
                             WHERE sm.family_id = t.id AND \(TextMatch.contains("sp.email", words)))
                    """
            },
            filters: [
                AdminFilter(name: "circle", label: "Members", kind: .choices([
                    Choice(value: "alone", label: "One member"), Choice(value: "several", label: "Several members"),
                    Choice(value: "caregivers", label: "With caregivers"),
                ])) { value in
                    switch value {
                    case "alone": "(SELECT count(*) FROM family_members m WHERE m.family_id = t.id) = 1"
                    case "several": "(SELECT count(*) FROM family_members m WHERE m.family_id = t.id) > 1"
                    case "caregivers": "EXISTS (SELECT 1 FROM family_members m WHERE m.family_id = t.id AND m.role = 'caregiver')"
                    default: nil
                    }
                },
            ],
            defaultSort: "created_at",
            defaultDescending: true
        ),
        form: .init(fields: []),
        detail: .init(
            columns: [
                AdminColumn("id", "Number", format: .number),
                AdminColumn("organizer", "Organizer (the parent of longest standing: the children's country and day follow theirs)",
                            sql: FamilySQL.organizerEmail),
                AdminColumn("created_at", "Created", format: .datetime),
            ],
            related: FamilySQL.related,
            snapshot: "jsonb_build_object('id', t.id, 'created_at', t.created_at)"
        ),
        access: .init(
            allowCreate: false,
            allowEdit: false,
            allowDelete: false,
            requiresAdmin: true
        )
    )
}
