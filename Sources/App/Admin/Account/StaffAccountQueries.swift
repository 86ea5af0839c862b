import Foundation
import SQLKit

/// The statements of a staff member's own account: time zone and theme, and API tokens.
enum StaffAccountQueries {
    private struct ZoneName: Decodable { let name: String }

    /// The time zones a staff member may choose, by name.
    static func timeZoneNames(on sql: any SQLDatabase) async throws -> [String] {
        try await sql.raw("SELECT name FROM pg_timezone_names WHERE name !~ '^(posix|Etc/|SystemV)' ORDER BY name")
            .all(decoding: ZoneName.self).map(\.name)
    }

    static func saveSettings(user: Int, timeZone zone: String, theme: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("UPDATE staff_users SET time_zone = \(bind: zone), theme = \(bind: theme) WHERE id = \(bind: user)").run()
    }

    static func saveTheme(user: Int, theme: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("UPDATE staff_users SET theme = \(bind: theme) WHERE id = \(bind: user)").run()
    }

    struct TokenRow: Decodable {
        let id: Int; let name: String; let email: String; let scopes: [String]; let createdAt: Date; let lastUsedAt: Date?; let revokedAt: Date?
    }

    /// The tokens `user` sees: their own, everyone's for an admin; live ones first.
    static func tokens(of user: StaffUser, on sql: any SQLDatabase) async throws -> [TokenRow] {
        try await sql.raw("""
            SELECT k.id, k.name, u.email, k.scopes, k.created_at, k.last_used_at, k.revoked_at
              FROM staff_api_tokens k JOIN staff_users u ON u.id = k.staff_user_id
             WHERE \(bind: user.isAdmin) OR k.staff_user_id = \(bind: user.id)
             ORDER BY k.revoked_at IS NOT NULL, k.id DESC LIMIT 500
            """).all(decoding: TokenRow.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    private struct Created: Decodable { let id: Int }

    /// A new token of `user` (at their role now); its id.
    static func createToken(user: StaffUser, name: String, scopes: [String], hash: String, on sql: any SQLDatabase) async throws -> Int {
        try await sql.raw("""
            INSERT INTO staff_api_tokens (staff_user_id, name, scopes, token_hash, role)
            VALUES (\(bind: user.id), \(bind: name), \(bind: scopes)::text[], \(bind: hash), \(bind: user.role.rawValue))
            RETURNING id
            """).first(decoding: Created.self)!.id
    }

    /// Revokes a live token `user` may revoke (their own; any for an admin); false when there is none.
    static func revokeToken(_ id: Int, by user: StaffUser, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("""
            UPDATE staff_api_tokens SET revoked_at = now()
             WHERE id = \(bind: id) AND revoked_at IS NULL AND (\(bind: user.isAdmin) OR staff_user_id = \(bind: user.id)) RETURNING id
            """).first() != nil
    }
}
