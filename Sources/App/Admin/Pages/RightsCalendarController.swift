import Core
import SQLKit
import Vapor

/// `/admin/rights/calendar?month=YYYY-MM`: the rights windows starting and ending each day of a
/// Monday-first 6×7 month grid (days in UTC, as every console time), as publisher-coloured
/// marks — at most four a day, then "+N" — with a legend; `/admin/rights/calendar/YYYY-MM-DD`
/// lists one day's windows with links to their books. Server-rendered, no script.
struct RightsCalendarController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.rightsCalendar), use: month)
        routes.get(AdminPath.segments(AdminPath.rightsCalendar) + [":date"], use: day)
    }

    static let shownPerDay = 4
    /// Colours (CSS classes `publisher-0` … `publisher-11`): a publisher's is fixed by its id.
    static let colours = 12

    struct Mark: Encodable { let kind: String; let title: String; let publisher: String; let colour: String; let href: String }
    struct DayCell: Encodable {
        let date: String
        let number: Int
        let inMonth: Bool
        let today: Bool
        let href: String
        let marks: [Mark]
        let more: Int
        let label: String
    }
    struct LegendItem: Encodable { let publisher: String; let colour: String }
    struct MonthPage: Encodable {
        let layout: LayoutView
        let heading: String
        let weeks: [[DayCell]]
        let legend: [LegendItem]
        let previousURL: String
        let nextURL: String
        let todayURL: String
        let month: String
        let territory: String
        let territoryError: String?
        let weekdays: [String]
    }
    struct Row: Encodable { let kind: String; let at: String; let title: String; let href: String; let publisher: String; let status: String; let window: String }
    struct DayPage: Encodable {
        let layout: LayoutView
        let heading: String
        let rows: [Row]
        let monthURL: String
    }

    private struct Event {
        let kind: String, day: Int, at: String, bookID: Int, title: String, status: String
        let publisherID: Int?, publisher: String, window: String
    }

    static func colour(_ publisherID: Int?) -> String { publisherID.map { "publisher-\($0 % colours)" } ?? "publisher-none" }

    static func monthURL(year: Int, month: Int, territory: String? = nil) -> String {
        AdminPath.rightsCalendar + "?month=" + CivilDays.monthText(year: year, month: month) + (territory.map { "&territory=" + $0 } ?? "")
    }

    /// `territory=FR`: only the windows that apply there (nil: all; an unknown code is shown as
    /// an error beside the field and ignored).
    static func territory(_ query: QueryParameters) -> (code: String?, error: String?) {
        guard let text = (try? query.value("territory")) ?? nil, !text.isEmpty else { return (nil, nil) }
        switch Territories.parse(text) {
        case .success(let codes) where codes.count == 1: return (codes[0], nil)
        case .failure(let unknown): return (nil, unknown.message)
        default: return (nil, "Enter one country code, such as FR.")
        }
    }

    /// Windows starting or ending in `first ..< first + days` (day numbers, UTC), by day, then
    /// starts before ends, then publisher and title.
    private func events(first: Int, days: Int, territory: String?, on sql: any SQLDatabase) async throws -> [Event] {
        let from = Date(timeIntervalSince1970: Double(first) * 86_400), to = Date(timeIntervalSince1970: Double(first + days) * 86_400)
        return try await RightsCalendarQueries.events(from: from, to: to, territory: territory, on: sql).map { row in
            Event(kind: row.kind, day: CivilDays.day(of: row.at, offset: 0), at: CivilDays.text(of: CivilDays.day(of: row.at, offset: 0)),
                  bookID: row.bookId, title: row.title, status: row.status, publisherID: row.publisherId,
                  publisher: row.publisher, window: row.window)
        }
    }

    @Sendable
    func month(req: Request) async throws -> View {
        let query = QueryParameters(query: req.url.query)
        let today = CivilDays.today(in: .gmt, now: req.now)
        let (thisYear, thisMonth, _) = CivilDays.date(of: today)
        // An unreadable month shows this one (a console page, not an API: no error needed).
        let chosen = ((try? query.value("month")) ?? nil).flatMap(Instants.month) ?? (thisYear, thisMonth)
        let firstOfMonth = CivilDays.days(year: chosen.year, month: chosen.month, day: 1)
        let first = firstOfMonth - CivilDays.weekday(of: firstOfMonth)
        let (territory, territoryError) = Self.territory(query)
        let events = try await events(first: first, days: 42, territory: territory, on: req.sql)
        let byDay = Dictionary(grouping: events, by: \.day)
        let cells = (0..<42).map { offset -> DayCell in
            let day = first + offset
            let (_, month, number) = CivilDays.date(of: day)
            let all = byDay[day] ?? []
            let marks = all.prefix(Self.shownPerDay).map {
                Mark(kind: $0.kind, title: $0.title, publisher: $0.publisher, colour: Self.colour($0.publisherID),
                     href: AdminPath.record("books", $0.bookID))
            }
            let starts = all.filter { $0.kind == "starts" }.count
            let label = all.isEmpty ? "no changes" : "\(starts) starting, \(all.count - starts) ending"
            return DayCell(date: CivilDays.text(of: day), number: number, inMonth: month == chosen.month, today: day == today,
                           href: AdminPath.rightsCalendar + "/" + CivilDays.text(of: day) + (territory.map { "?territory=" + $0 } ?? ""), marks: Array(marks),
                           more: max(0, all.count - Self.shownPerDay), label: label)
        }
        var legend: [Int?: String] = [:]
        for event in events { legend[event.publisherID] = event.publisher }
        let previous = chosen.month == 1 ? (chosen.year - 1, 12) : (chosen.year, chosen.month - 1)
        let next = chosen.month == 12 ? (chosen.year + 1, 1) : (chosen.year, chosen.month + 1)
        let names = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
        let page = MonthPage(
            layout: LayoutView(req, title: "Rights calendar", section: "rights"),
            heading: "\(names[chosen.month - 1]) \(chosen.year)",
            weeks: stride(from: 0, to: 42, by: 7).map { Array(cells[$0..<$0 + 7]) },
            legend: legend.sorted { ($0.value.lowercased(), $0.key ?? 0) < ($1.value.lowercased(), $1.key ?? 0) }
                .map { LegendItem(publisher: $0.value, colour: Self.colour($0.key)) },
            previousURL: Self.monthURL(year: previous.0, month: previous.1, territory: territory),
            nextURL: Self.monthURL(year: next.0, month: next.1, territory: territory),
            todayURL: Self.monthURL(year: thisYear, month: thisMonth, territory: territory),
            month: CivilDays.monthText(year: chosen.year, month: chosen.month),
            territory: territory ?? ((try? query.value("territory")) ?? nil) ?? "", territoryError: territoryError,
            weekdays: ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"])
        return try await req.view.render("rights_calendar", page)
    }

    @Sendable
    func day(req: Request) async throws -> View {
        guard let text = req.parameters.get("date"), let date = Instants.day(text) else { throw Abort(.notFound) }
        let day = CivilDays.days(year: date.year, month: date.month, day: date.day)
        let territory = Self.territory(QueryParameters(query: req.url.query)).code
        let rows = try await events(first: day, days: 1, territory: territory, on: req.sql).map {
            Row(kind: $0.kind == "starts" ? "Starts" : "Ends", at: $0.at, title: $0.title, href: AdminPath.record("books", $0.bookID),
                publisher: $0.publisher, status: $0.status, window: $0.window)
        }
        let page = DayPage(layout: LayoutView(req, title: "Rights on \(text)", section: "rights"),
                           heading: "Rights windows starting and ending on \(text) (UTC)" + (territory.map { " that apply in \($0)" } ?? ""), rows: rows,
                           monthURL: Self.monthURL(year: date.year, month: date.month, territory: territory))
        return try await req.view.render("rights_day", page)
    }
}
