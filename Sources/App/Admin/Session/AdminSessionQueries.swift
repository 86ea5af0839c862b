import SQLKit

/// The console session's load: the stored session and its staff member, in one statement.
enum AdminSessionQueries {
    /// A live session; the staff fields are nil when it is signed out or its account is locked.
    struct Loaded: Decodable {
        let data: String
        let userId: Int?
        let email: String?
        let role: String?
        let hasTotp: Bool?
        let timeZone: String?
        let theme: String?
    }

    /// The unexpired session stored under `key` (`AdminSession.storageKey`).
    static func load(key: String, on sql: any SQLDatabase) async throws -> Loaded? {
        try await sql.raw("""
            SELECT s.data::text AS data, u.id AS user_id, u.email, u.role,
                   u.totp_enabled_at IS NOT NULL AS has_totp, u.time_zone, u.theme
              FROM admin_sessions s
              LEFT JOIN staff_users u ON u.id = (s.data->>'staffUserID')::bigint AND u.locked_at IS NULL
             WHERE s.id = \(bind: key) AND s.expires_at > now()
            """).first(decoding: Loaded.self, keyDecodingStrategy: .convertFromSnakeCase)
    }
}
