import SQLKit

/// The saved views' statements: a list's views as a staff member sees them, and saving one.
enum SavedViewsQueries {
    struct Saved: Decodable { let name: String; let query: String; let shared: Bool }

    /// Up to 50 views of `resource`: the staff member's own and those shared by an editor or an
    /// admin (a viewer's shared flag counts for nothing), by name.
    static func visible(resource: String, staff: Int, on sql: any SQLDatabase) async throws -> [Saved] {
        try await sql.raw("""
            SELECT v.name, v.query, v.shared FROM saved_views v JOIN staff_users u ON u.id = v.staff_user_id
             WHERE v.resource = \(bind: resource) AND (v.staff_user_id = \(bind: staff) OR (v.shared AND u.role <> 'viewer'))
             ORDER BY lower(v.name), v.id LIMIT 50
            """).all(decoding: Saved.self)
    }

    /// Saves a view; one of the same name (any case) replaces it, in the same statement.
    static func save(staff: Int, resource: String, name: String, query: String, shared: Bool, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            INSERT INTO saved_views (staff_user_id, resource, name, query, shared)
            VALUES (\(bind: staff), \(bind: resource), \(bind: name), \(bind: query), \(bind: shared))
            ON CONFLICT (staff_user_id, resource, lower(name)) DO UPDATE SET query = EXCLUDED.query, shared = EXCLUDED.shared
            """).run()
    }
}
