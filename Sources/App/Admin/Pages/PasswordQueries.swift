import SQLKit
import Vapor

/// The statements of the console's password pages: a staff user's hash and address, and a new hash.
enum PasswordQueries {
    private struct Hash: Decodable { let passwordHash: String }
    private struct Email: Decodable { let email: String }
    private struct Stamp: Decodable { let s: String }

    /// The staff user's password hash (nil: no such user).
    static func hash(ofStaff id: Int, on sql: any SQLDatabase) async throws -> String? {
        try await sql.raw("SELECT password_hash FROM staff_users WHERE id = \(bind: id)")
            .first(decoding: Hash.self, keyDecodingStrategy: .convertFromSnakeCase)?.passwordHash
    }

    /// The staff user's address (nil: no such user).
    static func email(ofStaff id: Int, on sql: any SQLDatabase) async throws -> String? {
        try await sql.raw("SELECT email FROM staff_users WHERE id = \(bind: id)").first(decoding: Email.self)?.email
    }

    /// Stores the new hash (the trigger of `migrations/0012` ends the user's sessions in `sql`'s
    /// transaction) and returns the audit snapshot of the change (`password_changed_at`, never the hash).
    static func setHash(_ hash: String, ofStaff id: Int, on sql: any SQLDatabase) async throws -> String {
        try await sql.raw("UPDATE staff_users SET password_hash = \(bind: hash), updated_at = now() WHERE id = \(bind: id)").run()
        return try await sql.raw("SELECT jsonb_build_object('password_changed_at', now())::text AS s").first(decoding: Stamp.self)!.s
    }
}
