import Core
import SQLKit

/// The quick search's statements: records whose label contains the query, best matches first.
enum QuickSearchQueries {
    struct Match: Decodable { let id: Int; let label: String }

    /// Up to `limit` rows of `table` whose `column` contains `query` (those starting with it
    /// first, then the shortest).
    static func matches(_ query: String, table: String, column: String, limit: Int, on sql: any SQLDatabase) async throws -> [Match] {
        try await sql.raw("""
            SELECT id, \(ident: column) AS label FROM \(ident: table) t
             WHERE \(TextMatch.contains(SQLFragment(stringLiteral: "t.\(column)"), query))
             ORDER BY lower(\(ident: column)) LIKE lower(\(bind: TextMatch.escaped(query) + "%")) DESC, length(\(ident: column)), id LIMIT \(bind: limit)
            """).all(decoding: Match.self)
    }

    struct Staff: Decodable { let id: Int; let email: String }

    /// Up to `limit` staff accounts whose email contains `query`.
    static func staff(_ query: String, limit: Int, on sql: any SQLDatabase) async throws -> [Staff] {
        try await sql.raw("SELECT id, email FROM staff_users WHERE email ILIKE \(bind: "%" + TextMatch.escaped(query) + "%") ORDER BY email LIMIT \(bind: limit)")
            .all(decoding: Staff.self)
    }
}
