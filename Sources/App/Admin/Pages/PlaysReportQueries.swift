import SQLKit
import Vapor

/// The statements of the "most played" report (`PlaysReportController`).
enum PlaysReportQueries {
    struct Played: Decodable, Sendable {
        let id: Int
        let title: String
        let publisher: String
        let plays: Int
        let children: Int
        let minutes: Int
    }

    /// The most played books of the last `days` days, by plays or by minutes watched (`byMinutes`),
    /// narrowed to a category or a publisher; at most `limit`.
    static func mostPlayed(days: Int, byMinutes: Bool, category: Int?, publisher: Int?, limit: Int,
                           on sql: any SQLDatabase) async throws -> [Played] {
        var conditions: [SQLQueryString] = []
        if let category {
            conditions.append("EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = b.id AND bc.category_id = \(bind: category))")
        }
        if let publisher { conditions.append("b.publisher_id = \(bind: publisher)") }
        let scope: SQLQueryString = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return try await sql.raw("""
            WITH watched AS (
                -- Each play of the period counted as everywhere else: after the book's previous
                -- play, whenever it was (before the period, or folded by retention).
                SELECT p.book_id, p.child_id, \(PlaySeconds.ofPlay) AS seconds
                  FROM plays p \(PlaySeconds.previous)
                 WHERE p.played_at > now() - make_interval(days => \(bind: days)::int)
            )
            SELECT b.id, b.title, COALESCE(pb.name, '') AS publisher, count(*) AS plays,
                   count(DISTINCT w.child_id) AS children, sum(w.seconds) / 60 AS minutes
              FROM watched w JOIN books b ON b.id = w.book_id LEFT JOIN publishers pb ON pb.id = b.publisher_id
             \(scope)
             GROUP BY b.id, b.title, pb.name
             ORDER BY \(byMinutes ? "minutes DESC, plays DESC" : "plays DESC, minutes DESC" as SQLFragment), b.id
             LIMIT \(bind: limit)
            """).all(decoding: Played.self)
    }

    struct Option: Decodable, Sendable { let id: Int; let name: String }

    /// The categories, in their display order, for the filter.
    static func categories(on sql: any SQLDatabase) async throws -> [Option] {
        try await sql.raw("SELECT id, name FROM categories ORDER BY display_order, name, id").all(decoding: Option.self)
    }

    /// The publishers, by name, for the filter.
    static func publishers(on sql: any SQLDatabase) async throws -> [Option] {
        try await sql.raw("SELECT id, name FROM publishers ORDER BY lower(name), id").all(decoding: Option.self)
    }
}
