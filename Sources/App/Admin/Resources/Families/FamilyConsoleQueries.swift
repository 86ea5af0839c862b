import SQLKit

/// What the console's family pages read besides the family page itself (`FamilySQL`); the
/// changes go through `FamilyQueries`, as the parents' own API's do, under the family's lock.
enum FamilyConsoleQueries {
    /// A member of a family as the member's page shows it (times in UTC).
    struct Member: Codable, Sendable {
        let accountId: Int
        let email: String
        let role: FamilyRole
        let mayAnswerRequests: Bool
        let joined: String
        let verified: Bool
        let locked: Bool
        let devices: Int
    }

    /// `account` when it is a member of `family` (nil: no such member there).
    static func member(_ account: Int, of family: Int, on sql: any SQLDatabase) async throws -> Member? {
        try await sql.raw("""
            SELECT m.account_id, p.email, m.role, m.may_answer_requests,
                   to_char(m.joined_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS joined,
                   p.email_verified_at IS NOT NULL AS verified, p.locked_at IS NOT NULL AS locked,
                   (SELECT count(*) FROM parent_devices d WHERE d.parent_id = p.id AND d.revoked_at IS NULL)::bigint AS devices
              FROM family_members m JOIN parents p ON p.id = m.account_id
             WHERE m.account_id = \(bind: account) AND m.family_id = \(bind: family)
            """).first(decoding: Member.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// A pending invitation of `family` as its revocation page shows it — never its token.
    struct Invitation: Codable, Sendable {
        let id: Int
        let email: String
        let role: FamilyRole
        let invitedBy: String?
        let sent: String
        let expires: String
    }

    static func pendingInvitation(_ id: Int, of family: Int, on sql: any SQLDatabase) async throws -> Invitation? {
        try await sql.raw("""
            SELECT i.id, i.email, i.role, p.email AS invited_by,
                   to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS sent,
                   to_char(i.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS expires
              FROM family_invitations i LEFT JOIN parents p ON p.id = i.invited_by
             WHERE i.id = \(bind: id) AND i.family_id = \(bind: family)
               AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
            """).first(decoding: Invitation.self, keyDecodingStrategy: .convertFromSnakeCase)
    }
}
