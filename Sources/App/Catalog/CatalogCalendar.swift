import Core
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

    /// The filters every calendar query shares (`CatalogCalendarQueries`).
    struct Scope {
        let zone: String
        @ExplicitNull var child: Int?
        /// Only windows that apply in the caller's country count.
        let country: String
        /// The family's locales (docs/localization.md): the books' titles and descriptions.
        let locales: [String]

        init(_ query: QueryParameters, req: Request) async throws {
            zone = try await req.timeZone(query)
            country = try await req.parentCountry()
            locales = try await req.catalogLanguage(version: try await req.appServices.catalogCache.current(for: req).countriesVersion)
            if let child = try query.integer("child_id", in: 1...Int(Int32.max), what: "a positive integer") {
                self.child = try await req.ownedChild(child).id
            } else {
                child = nil
            }
        }
    }

    @Sendable
    func month(req: Request) async throws -> Response {
        let query = QueryParameters(query: req.url.query)
        let scope = try await Scope(query, req: req)
        let queries = CatalogCalendarQueries(sql: req.sql, scope: scope, now: req.now)
        let monthText: String
        if let text = try query.value("month") {
            guard Instants.month(text) != nil else { throw Problem.invalidParameter("month", "month must be YYYY-MM, such as 2026-11") }
            monthText = text
        } else {
            monthText = try await queries.currentMonth()
        }
        let key = "calendar|\(monthText)|\(scope.zone)|\(scope.country)|\(scope.locales.joined(separator: ","))"
        let generation = scope.child == nil ? try await req.appServices.catalogCache.current(for: req).generation : nil
        if let generation, let hit = req.appServices.catalogCache.entry(key, in: generation) { return Response.json(hit.body).languageHeaders(req) }

        // The grid starts on the Monday on or before the 1st.
        let grid = try await queries.gridStart(month: monthText)
        let rows = try await queries.firstBooks(grid: grid)
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
        let days = try await queries.gridDays(first: grid).map { day -> DayDTO in
            DayDTO(date: day, inMonth: day.hasPrefix(monthText), arrivingCount: counts[day]?.arriving ?? 0,
                   leavingCount: counts[day]?.leaving ?? 0, arriving: books[day]?.arriving ?? [], leaving: books[day]?.leaving ?? [])
        }
        let body = try ByteBuffer.json(ItemDTO(data: MonthDTO(month: monthText, timeZone: scope.zone, days: days)))
        if let generation { req.appServices.catalogCache.store(.init(body: body, totalCount: 0, etag: nil), for: key, in: generation) }
        return Response.json(body).languageHeaders(req)
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
        let queries = CatalogCalendarQueries(sql: req.sql, scope: scope, now: req.now)
        let total = try await queries.dayCount(date, kind: kind.rawValue)
        let items = page.offset < total ? try await queries.dayBooks(date, kind: kind.rawValue, page: page) : []
        return try Response.page(items, page: page, total: total, query: query, req: req).languageHeaders(req)
    }
}
