import Core
import SQLKit
import Vapor

/// The catalog's month calendar (the plan's month grid): for each day, the active books whose
/// rights begin (arriving) and run out (leaving) that day, days in `tz`. A window that continues
/// another (back to back or overlapping) is neither: the book is available across it.
///
/// `GET /catalog/calendar?month=YYYY-MM` gives the 42 days of a Monday-first 6×7 grid, each with
/// its counts and its first three books a kind (for dots and "+N"); `GET /catalog/calendar/:date`
/// lists one day's books in full (`kind=arriving|leaving`, paged). `child_id` narrows "leaving" to
/// that child's library. A month is cached per catalog version (the catalog's freshness rule).
struct CatalogCalendarController: APIRouteCollection {
    func boot(api: APIRoutes) throws {
        let calendar = api.parent.grouped("catalog", "calendar")
        calendar.get(use: month)
        calendar.get(":date", use: day)
    }

    enum Kind: String, CaseIterable { case arriving, leaving }

    struct SmallBook: Content {
        struct Publisher: Content { let id: Int; let name: String }
        let id: Int
        let title: String
        @ExplicitNull var coverImageUrl: String?
        @ExplicitNull var publisher: Publisher?

    }

    struct DayDTO: Content {
        let date: String
        let inMonth: Bool
        let arrivingCount: Int
        let leavingCount: Int
        let arriving: [SmallBook]
        let leaving: [SmallBook]
    }

    struct MonthDTO: Content {
        let month: String
        let timeZone: String
        let days: [DayDTO]
    }

    /// The filters every calendar query shares.
    struct Scope {
        let zone: String
        @ExplicitNull var child: Int?
        /// Only windows that apply in the caller's country count.
        let country: String

        init(_ query: QueryParameters, req: Request) async throws {
            zone = try await req.timeZone(query)
            country = try await req.parentCountry()
            if let child = try query.integer("child_id", in: 1...Int(Int32.max), what: "a positive integer") {
                self.child = try await req.ownedChild(child).id
            } else {
                child = nil
            }
        }

        /// `(kind, day, book_id)` of every arrival and departure from `first` for `days` days.
        func events(first: String, days: Int) -> SQLQueryString {
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
    }

    @Sendable
    func month(req: Request) async throws -> Response {
        let query = QueryParameters(query: req.url.query)
        let scope = try await Scope(query, req: req)
        let monthText: String
        if let text = try query.value("month") {
            guard Instants.month(text) != nil else { throw Problem.invalidParameter("month", "month must be YYYY-MM, such as 2026-11") }
            monthText = text
        } else {
            monthText = try await req.sql.raw("SELECT to_char(now() AT TIME ZONE \(bind: scope.zone), 'YYYY-MM') AS m").first(decoding: MonthRow.self)!.m
        }
        let key = "calendar|\(monthText)|\(scope.zone)|\(scope.country)"
        let generation = scope.child == nil ? try await req.appServices.catalogCache.current(for: req).generation : nil
        if let generation, let hit = req.appServices.catalogCache.entry(key, in: generation) { return Response.json(hit.body) }

        // The grid starts on the Monday on or before the 1st.
        let grid = try await req.sql.raw("""
            SELECT to_char(d - ((extract(isodow FROM d)::int + 6) % 7), 'YYYY-MM-DD') AS first
              FROM (SELECT (\(bind: monthText) || '-01')::date AS d) x
            """).first(decoding: GridRow.self)!.first
        let rows = try await req.sql.raw("""
            WITH events AS (\(scope.events(first: grid, days: 42))),
            ranked AS (
                SELECT e.kind, e.day, b.id, b.title, b.cover_image_url, p.id AS publisher_id, p.name AS publisher_name,
                       count(*) OVER (PARTITION BY e.kind, e.day) AS n,
                       row_number() OVER (PARTITION BY e.kind, e.day ORDER BY lower(b.title), b.id) AS rank
                  FROM events e JOIN books b ON b.id = e.book_id AND \(BookSQL.live("b"))
                  LEFT JOIN publishers p ON p.id = b.publisher_id
            )
            SELECT kind, to_char(day, 'YYYY-MM-DD') AS day, id, title, cover_image_url, publisher_id, publisher_name, n
              FROM ranked WHERE rank <= 3 ORDER BY day, kind, rank
            """).all(decoding: EventBookRow.self, keyDecodingStrategy: .convertFromSnakeCase)
        var counts: [String: (arriving: Int, leaving: Int)] = [:]
        var books: [String: (arriving: [SmallBook], leaving: [SmallBook])] = [:]
        for row in rows {
            let day = row.day, n = row.n
            let book = SmallBook(id: row.id, title: row.title, coverImageUrl: row.coverImageUrl, publisher: try row.publisherId.map {
                guard let name = row.publisherName else {
                    throw DecodingError.valueNotFound(String.self, .init(codingPath: [], debugDescription: "publisher_name is null"))
                }
                return SmallBook.Publisher(id: $0, name: name)
            })
            if row.kind == Kind.arriving.rawValue {
                counts[day, default: (0, 0)].arriving = n
                books[day, default: ([], [])].arriving.append(book)
            } else {
                counts[day, default: (0, 0)].leaving = n
                books[day, default: ([], [])].leaving.append(book)
            }
        }
        let dayRows = try await req.sql.raw("""
            SELECT to_char(g, 'YYYY-MM-DD') AS day FROM generate_series(\(bind: grid)::date, \(bind: grid)::date + 41, interval '1 day') g
            """).all(decoding: DayRow.self)
        let days = dayRows.map { row -> DayDTO in
            let day = row.day
            return DayDTO(date: day, inMonth: day.hasPrefix(monthText), arrivingCount: counts[day]?.arriving ?? 0,
                          leavingCount: counts[day]?.leaving ?? 0, arriving: books[day]?.arriving ?? [], leaving: books[day]?.leaving ?? [])
        }
        let body = try ByteBuffer.json(ItemDTO(data: MonthDTO(month: monthText, timeZone: scope.zone, days: days)))
        if let generation { req.appServices.catalogCache.store(.init(body: body, totalCount: 0, etag: nil), for: key, in: generation) }
        return Response.json(body)
    }

    /// One day's arrivals or departures in full, as book objects, by title.
    @Sendable
    func day(req: Request) async throws -> Response {
        let query = QueryParameters(query: req.url.query)
        guard let date = req.parameters.get("date"), Instants.day(date) != nil else {
            throw Problem.invalidParameter("date", "the date must be YYYY-MM-DD")
        }
        let scope = try await Scope(query, req: req)
        let kind = try query.choice("kind", as: Kind.self, allowed: Kind.allCases) ?? .arriving
        let page = try PageRequest(query)
        let events: SQLQueryString = "SELECT book_id FROM (\(scope.events(first: date, days: 1))) e WHERE e.kind = \(bind: kind.rawValue)"
        let total = try await req.sql.number("""
            SELECT count(*) AS n FROM (\(events)) e JOIN books b ON b.id = e.book_id AND \(BookSQL.live("b"))
            """)
        var items: [BookDTO] = []
        if page.offset < total {
            items = try await req.sql.raw("""
                SELECT \(BookDTO.columns(country: scope.country)) FROM (\(events)) e JOIN books b ON b.id = e.book_id AND \(BookSQL.live("b")) \(BookDTO.joins)
                 ORDER BY lower(b.title), b.id LIMIT \(bind: page.perPage) OFFSET \(bind: page.offset)
                """).all().map(BookDTO.init(row:))
        }
        return try Response.page(items, page: page, total: total, query: query, req: req)
    }
}

/// The rows of the month's statements: the month now in the zone, the grid's first day, a book
/// arriving or leaving on a day (with its day's count of them), a day of the grid.
private struct MonthRow: Decodable { let m: String }
private struct GridRow: Decodable { let first: String }
private struct EventBookRow: Decodable {
    let kind, day: String
    let id: Int
    let title: String
    let coverImageUrl: String?
    let publisherId: Int?
    let publisherName: String?
    let n: Int
}
private struct DayRow: Decodable { let day: String }
