import SQLKit

/// Statements about a staff member's second factor: by email, for the command line and the demo
/// seed; by id, for the two-factor pages; every sealed secret, for `staff reseal-2fa`.
enum StaffSecondFactorQueries {
    private struct Enabled: Decodable { let on: Bool }

    /// Whether the staff member has a second factor; false when there is no such staff member.
    static func isEnabled(user: Int, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("SELECT totp_enabled_at IS NOT NULL AS on FROM staff_users WHERE id = \(bind: user)").first(decoding: Enabled.self)?.on ?? false
    }

    private struct Email: Decodable { let email: String }

    /// The staff member's email; nil when there is no such staff member.
    static func email(user: Int, on sql: any SQLDatabase) async throws -> String? {
        try await sql.raw("SELECT email FROM staff_users WHERE id = \(bind: user)").first(decoding: Email.self)?.email
    }

    /// Turns the factor on with an already sealed secret (no code to check: the demo seed and
    /// nothing else); recovery codes are not made — `Your account → New recovery codes` makes them.
    static func enrolWithoutCode(email: String, sealed: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            UPDATE staff_users SET totp_secret = \(bind: sealed), totp_enabled_at = now(), totp_last_step = 0
             WHERE lower(email) = lower(\(bind: email))
            """).run()
    }

    struct Sealed: Decodable { let totp_secret: String? }

    /// The sealed secret of an enrolled staff member; nil when there is none.
    static func sealedSecret(email: String, on sql: any SQLDatabase) async throws -> String? {
        try await sql.raw("""
            SELECT totp_secret FROM staff_users WHERE lower(email) = lower(\(bind: email)) AND totp_enabled_at IS NOT NULL
            """).first(decoding: Sealed.self)?.totp_secret
    }

    /// Replaces a sealed secret by the same secret sealed under another key, unless it changed
    /// meanwhile (a reset, a new enrolment); whether it did.
    @discardableResult
    static func reseal(user: Int, from old: String, to new: String, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("""
            UPDATE staff_users SET totp_secret = \(bind: new) WHERE id = \(bind: user) AND totp_secret = \(bind: old) RETURNING id
            """).first() != nil
    }

    struct Enrolled: Decodable { let id: Int; let email: String; let totp_secret: String }

    /// Every stored sealed secret, locked until the transaction ends (run inside one).
    static func allSealedForUpdate(on sql: any SQLDatabase) async throws -> [Enrolled] {
        try await sql.raw("SELECT id, email, totp_secret FROM staff_users WHERE totp_secret IS NOT NULL ORDER BY id FOR UPDATE")
            .all(decoding: Enrolled.self)
    }
}
