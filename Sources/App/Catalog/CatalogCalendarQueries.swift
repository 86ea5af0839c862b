import Foundation
import Core
import SQLKit

/// The calendar's statements (`CatalogCalendarController`): the month now in the zone, the grid's
/// first day and days, the first books arriving and leaving each day of the grid with their
/// counts, and one day's books in full. Days are in `zone`; only windows that apply in `country`
/// count, and `child` narrows "leaving" to that child's library.
struct CatalogCalendarQueries {
    let sql: any SQLDatabase
    let zone: String
    let child: Int?
    let country: String
    let locales: [String]
    /// The instant of the request (the app's clock): the month now, and which books are live.
    let now: Date

    init(sql: any SQLDatabase, scope: CatalogCalendarController.Scope, now: Date) {
        self.sql = sql
        self.now = now
        zone = scope.zone
        child = scope.child
        country = scope.country
        locales = scope.locales
    }

    /// `(kind, day, book_id)` of every arrival and departure from `first` for `days` days.
    private func events(first: String, days: Int) -> SQLQueryString {
        let from: SQLQueryString = "(\(bind: first)::date::timestamp AT TIME ZONE \(bind: zone))"
        let to: SQLQueryString = "((\(bind: first)::date + \(bind: days)::int)::timestamp AT TIME ZONE \(bind: zone))"
        var leavingScope: SQLQueryString = ""
        if let child { leavingScope = " AND EXISTS (SELECT 1 FROM library_entries le WHERE le.child_id = \(bind: child) AND le.book_id = r.book_id)" }
        let applies = { (window: String) -> SQLQueryString in
            "storytime_window_applies(\(unsafeRaw: window).territories, \(unsafeRaw: window).exclude_territories, \(bind: country))"
        }
        return """
            SELECT DISTINCT 'arriving' AS kind, (r.starts_at AT TIME ZONE \(bind: zone))::date AS day, r.book_id
              FROM rights_windows r
             WHERE r.starts_at >= \(from) AND r.starts_at < \(to) AND \(applies("r"))
               AND NOT EXISTS (SELECT 1 FROM rights_windows o WHERE o.book_id = r.book_id AND o.id <> r.id AND \(applies("o"))
                                  AND o.starts_at < r.starts_at AND (o.ends_at IS NULL OR o.ends_at >= r.starts_at))
            UNION
            SELECT DISTINCT 'leaving', (r.ends_at AT TIME ZONE \(bind: zone))::date, r.book_id
              FROM rights_windows r
             WHERE r.ends_at >= \(from) AND r.ends_at < \(to)\(leavingScope) AND \(applies("r"))
               AND NOT EXISTS (SELECT 1 FROM rights_windows o WHERE o.book_id = r.book_id AND o.id <> r.id AND \(applies("o"))
                                  AND o.starts_at <= r.ends_at AND (o.ends_at IS NULL OR o.ends_at > r.ends_at))
            """
    }

    private struct MonthRow: Decodable { let m: String }
    private struct GridRow: Decodable { let first: String }
    private struct DayRow: Decodable { let day: String }

    /// This month in the zone, `YYYY-MM`.
    func currentMonth() async throws -> String {
        try await sql.raw("SELECT to_char(\(at: now) AT TIME ZONE \(bind: zone), 'YYYY-MM') AS m").first(decoding: MonthRow.self)!.m
    }

    /// The grid's first day (`YYYY-MM-DD`): the Monday on or before the 1st of `month`.
    func gridStart(month: String) async throws -> String {
        try await sql.raw("""
            SELECT to_char(d - ((extract(isodow FROM d)::int + 6) % 7), 'YYYY-MM-DD') AS first
              FROM (SELECT (\(bind: month) || '-01')::date AS d) x
            """).first(decoding: GridRow.self)!.first
    }

    /// A book arriving or leaving on a day of the grid, with that day's count of them.
    struct EventBookRow: Decodable {
        let kind, day: String
        let id: Int
        let title: String
        let coverImageUrl: String?
        let publisherId: Int?
        let publisherName: String?
        let n: Int
    }

    /// The first three live books (by title) arriving and leaving each day of the 42-day grid
    /// from `first`, by day, kind and rank.
    func firstBooks(grid first: String) async throws -> [EventBookRow] {
        try await sql.raw("""
            WITH events AS (\(events(first: first, days: 42))),
            ranked AS (
                SELECT e.kind, e.day, b.id, b.title, b.cover_image_url, p.id AS publisher_id, p.name AS publisher_name,
                       count(*) OVER (PARTITION BY e.kind, e.day) AS n,
                       row_number() OVER (PARTITION BY e.kind, e.day ORDER BY lower(b.title), b.id) AS rank
                  FROM events e JOIN books b ON b.id = e.book_id AND \(BookSQL.live("b", at: now))
                  LEFT JOIN publishers p ON p.id = b.publisher_id
            )
            SELECT kind, to_char(day, 'YYYY-MM-DD') AS day, id, title, cover_image_url, publisher_id, publisher_name, n
              FROM ranked WHERE rank <= 3 ORDER BY day, kind, rank
            """).all(decoding: EventBookRow.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// The grid's 42 days from `first`, `YYYY-MM-DD`.
    func gridDays(first: String) async throws -> [String] {
        try await sql.raw("""
            SELECT to_char(g, 'YYYY-MM-DD') AS day FROM generate_series(\(bind: first)::date, \(bind: first)::date + 41, interval '1 day') g
            """).all(decoding: DayRow.self).map(\.day)
    }

    /// The live books of `kind` (`arriving`/`leaving`) on `date`.
    private func dayEvents(_ date: String, kind: String) -> SQLQueryString {
        "SELECT book_id FROM (\(events(first: date, days: 1))) e WHERE e.kind = \(bind: kind)"
    }

    /// How many live books are `kind` on `date`.
    func dayCount(_ date: String, kind: String) async throws -> Int {
        try await sql.number("""
            SELECT count(*) AS n FROM (\(dayEvents(date, kind: kind))) e JOIN books b ON b.id = e.book_id AND \(BookSQL.live("b", at: now))
            """)
    }

    /// A page of the live books `kind` on `date`, as book objects, by title.
    func dayBooks(_ date: String, kind: String, page: PageRequest) async throws -> [BookDTO] {
        try await sql.raw("""
            SELECT \(BookDTO.columns(country: country, at: now, locales: locales)) FROM (\(dayEvents(date, kind: kind))) e JOIN books b ON b.id = e.book_id AND \(BookSQL.live("b", at: now)) \(BookDTO.joins)
             ORDER BY lower(b.title), b.id LIMIT \(bind: page.perPage) OFFSET \(bind: page.offset)
            """).all().map(BookDTO.init(row:))
    }
}
