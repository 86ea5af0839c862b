import SQLKit

/// The console sign-in's statements: the staff account an email or a second-factor ticket names.
enum LoginQueries {
    struct Account: Decodable {
        let id: Int
        let email: String
        let role: String
        let passwordHash: String
        let hasTotp: Bool
        let locked: Bool
    }

    /// The account of `email` (any case), locked or not.
    static func account(email: String, on sql: any SQLDatabase) async throws -> Account? {
        try await sql.raw("""
            SELECT id, email, role, password_hash, totp_enabled_at IS NOT NULL AS has_totp, locked_at IS NOT NULL AS locked
              FROM staff_users WHERE lower(email) = lower(\(bind: email))
            """).first(decoding: Account.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    struct Unlocked: Decodable { let id: Int; let email: String; let role: String }

    /// The account `id` when it is not locked.
    static func unlocked(_ id: Int, on sql: any SQLDatabase) async throws -> Unlocked? {
        try await sql.raw("SELECT id, email, role FROM staff_users WHERE id = \(bind: id) AND locked_at IS NULL").first(decoding: Unlocked.self)
    }
}
