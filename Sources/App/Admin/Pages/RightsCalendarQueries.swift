import SQLKit
import Vapor

/// The statement of the rights calendar (`RightsCalendarController`).
enum RightsCalendarQueries {
    /// A rights window starting or ending (`kind`: "starts" or "ends") at `at`.
    struct Event: Decodable, Sendable {
        let kind: String
        let at: Date
        let bookId: Int
        let title: String
        let status: String
        let publisherId: Int?
        let publisher: String
        let window: String
    }

    /// Windows starting or ending in `from ..< to` that apply in `territory` (nil: all), by day,
    /// then starts before ends, then publisher and title.
    static func events(from: Date, to: Date, territory: String?, on sql: any SQLDatabase) async throws -> [Event] {
        try await sql.raw("""
            SELECT e.kind, e.at, b.id AS book_id, b.title, b.status, p.id AS publisher_id, COALESCE(p.name, 'No publisher') AS publisher,
                   to_char(r.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') || ' → ' ||
                   COALESCE(to_char(r.ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), 'open-ended')
                   || ', ' || \(BookSQL.windowTerritories("r")) AS window
              FROM rights_windows r
              CROSS JOIN LATERAL (VALUES ('starts', r.starts_at), ('ends', r.ends_at)) e(kind, at)
              JOIN books b ON b.id = r.book_id LEFT JOIN publishers p ON p.id = b.publisher_id
             WHERE e.at >= \(bind: from) AND e.at < \(bind: to)
               AND storytime_window_applies(r.territories, r.exclude_territories, \(bind: territory)::text)
             ORDER BY e.at::date, e.kind DESC, p.name NULLS LAST, lower(b.title), b.id
            """).all(decoding: Event.self, keyDecodingStrategy: .convertFromSnakeCase)
    }
}
