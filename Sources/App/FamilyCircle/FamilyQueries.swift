import Foundation
import SQLKit

/// Statements about families, their members and invitations (migrations/0038). Every change
/// locks the family's row first (`lock`), so concurrent accepts, removals and role changes of one
/// family are decided one after another.
enum FamilyQueries {
    /// The family and role of `account` (nil: no such account).
    static func membership(of account: Int, on sql: any SQLDatabase) async throws -> Membership? {
        try await sql.raw("""
            SELECT family_id, role, may_answer_requests FROM family_members WHERE account_id = \(bind: account)
            """).first(decoding: Membership.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// Locks the families `ids` (in id order, so two transactions locking the same two never wait
    /// on each other), then reads `account`'s membership as it now is.
    static func lock(_ ids: [Int], member account: Int, on sql: any SQLDatabase) async throws -> Membership? {
        try await sql.raw("SELECT id FROM families WHERE id = ANY(\(bind: ids)) ORDER BY id FOR UPDATE").run()
        let now = try await membership(of: account, on: sql)
        // Moved to another family between the read that chose `ids` and the lock: not decided here.
        if let now, !ids.contains(now.familyId) {
            throw Problem(status: .conflict, code: "family_changed", detail: "Your family changed while this was asked; look again and retry.")
        }
        return now
    }

    /// Locks the family `account` is in (with `also`, in id order) and returns its membership as
    /// it is under the lock; `parentOnly`: a caregiver is the 403 `parent_role_required`.
    static func lockOwn(_ account: Int, also: [Int] = [], parentOnly: Bool = false, on sql: any SQLDatabase) async throws -> Membership {
        guard let current = try await membership(of: account, on: sql),
              let mine = try await lock([current.familyId] + also, member: account, on: sql) else { throw Problem.unauthorized }
        if parentOnly, mine.role != .parent { throw Problem.parentRoleRequired }
        return mine
    }

    static func members(of family: Int, on sql: any SQLDatabase) async throws -> [FamilyMemberDTO] {
        try await sql.raw("""
            SELECT m.account_id, p.email, m.role, m.may_answer_requests, m.joined_at
              FROM family_members m JOIN parents p ON p.id = m.account_id
             WHERE m.family_id = \(bind: family) ORDER BY m.joined_at, m.account_id
            """).all(decoding: FamilyMemberDTO.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// The family's pending invitations (not accepted, revoked or expired), newest first.
    static func invitations(of family: Int, on sql: any SQLDatabase) async throws -> [FamilyInvitationDTO] {
        try await sql.raw("""
            SELECT i.id, i.email, i.role, p.email AS invited_by, i.created_at, i.expires_at
              FROM family_invitations i LEFT JOIN parents p ON p.id = i.invited_by
             WHERE i.family_id = \(bind: family) AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
             ORDER BY i.id DESC
            """).all(decoding: FamilyInvitationDTO.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    struct Counts: Decodable { let members: Int; let invitations: Int; let children: Int; let parents: Int }

    static func counts(of family: Int, on sql: any SQLDatabase) async throws -> Counts {
        try await sql.raw("""
            SELECT (SELECT count(*) FROM family_members WHERE family_id = \(bind: family)) AS members,
                   (SELECT count(*) FROM family_members WHERE family_id = \(bind: family) AND role = 'parent') AS parents,
                   (SELECT count(*) FROM family_invitations WHERE family_id = \(bind: family) AND accepted_at IS NULL
                       AND revoked_at IS NULL AND expires_at > now()) AS invitations,
                   (SELECT count(*) FROM children WHERE family_id = \(bind: family)) AS children
            """).one(decoding: Counts.self)
    }

    /// A new invitation to `family` for `email` (one pending per address: an earlier one ends),
    /// its token kept as a hash.
    static func invite(family: Int, email: String, role: FamilyRole, by account: Int, tokenHash: Data, lifetime: TimeInterval,
                       on sql: any SQLDatabase) async throws -> FamilyInvitationDTO {
        try await sql.raw("""
            UPDATE family_invitations SET revoked_at = now()
             WHERE family_id = \(bind: family) AND lower(email) = lower(\(bind: email)) AND accepted_at IS NULL AND revoked_at IS NULL
            """).run()
        return try await sql.raw("""
            WITH added AS (
                INSERT INTO family_invitations (family_id, email, role, token_hash, invited_by, expires_at)
                VALUES (\(bind: family), \(bind: email), \(bind: role.rawValue), \(bind: tokenHash), \(bind: account),
                        now() + make_interval(secs => \(bind: lifetime)))
                RETURNING id, email, role, invited_by, created_at, expires_at
            )
            SELECT a.id, a.email, a.role, p.email AS invited_by, a.created_at, a.expires_at FROM added a LEFT JOIN parents p ON p.id = a.invited_by
            """).one(decoding: FamilyInvitationDTO.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    struct Invitation: Decodable { let id: Int; let familyId: Int; let email: String; let role: FamilyRole; let invitedBy: String? }

    /// The pending invitation a token names, locked (nil: unknown, used, revoked or expired).
    static func pendingInvitation(tokenHash: Data, lock: Bool, on sql: any SQLDatabase) async throws -> Invitation? {
        let locking: SQLQueryString = lock ? " FOR UPDATE OF i" : ""
        return try await sql.raw("""
            SELECT i.id, i.family_id, i.email, i.role, p.email AS invited_by
              FROM family_invitations i LEFT JOIN parents p ON p.id = i.invited_by
             WHERE i.token_hash = \(bind: tokenHash) AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()\(locking)
            """).first(decoding: Invitation.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    static func markAccepted(_ invitation: Int, by account: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("UPDATE family_invitations SET accepted_at = now(), accepted_by = \(bind: account) WHERE id = \(bind: invitation)").run()
    }

    /// Ends a pending invitation of `family`; false when there is none by that id.
    static func revoke(invitation: Int, family: Int, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("""
            UPDATE family_invitations SET revoked_at = now()
             WHERE id = \(bind: invitation) AND family_id = \(bind: family) AND accepted_at IS NULL AND revoked_at IS NULL
            RETURNING id
            """).first() != nil
    }

    /// Moves `account` into `family` as `role` (its own family, emptied, goes: migrations/0038).
    static func move(_ account: Int, to family: Int, role: FamilyRole, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            UPDATE family_members SET family_id = \(bind: family), role = \(bind: role.rawValue), may_answer_requests = false, joined_at = now()
             WHERE account_id = \(bind: account)
            """).run()
    }

    static func update(member: Int, role: FamilyRole?, mayAnswerRequests: Bool?, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            UPDATE family_members SET role = COALESCE(\(bind: role?.rawValue)::text, role),
                   may_answer_requests = COALESCE(\(bind: mayAnswerRequests)::boolean, may_answer_requests)
             WHERE account_id = \(bind: member)
            """).run()
    }

    /// Takes `account` out of its family (it founds a new, empty one: migrations/0038) and signs
    /// out the child devices it paired for the family's children; their ids.
    static func remove(_ account: Int, from family: Int, on sql: any SQLDatabase) async throws -> [Int] {
        let devices = try await SessionQueries.revoke(
            devices: "d.parent_id = \(bind: account) AND d.child_id IN (SELECT id FROM children WHERE family_id = \(bind: family))", on: sql)
        try await sql.raw("DELETE FROM family_members WHERE account_id = \(bind: account)").run()
        return devices
    }

    /// A line of the family's log: `account` did `action` (`family.*`), with `details`.
    static func audit(_ account: Int, family: Int, _ action: String, _ details: [String: String], on sql: any SQLDatabase) async throws {
        let json = String(decoding: try JSONEncoder().encode(details), as: UTF8.self)
        try await sql.raw("""
            INSERT INTO parent_audit_log (parent_id, family_id, action, after) VALUES (\(bind: account), \(bind: family), \(bind: action), \(bind: json)::jsonb)
            """).run()
    }
}
