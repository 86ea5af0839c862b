import Core
import SQLKit
import Vapor

/// `/admin/reports/plays`: the most played books of a period, by plays or by minutes watched,
/// narrowed to a category or a publisher; `/admin/reports/plays.csv` the same rows as CSV.
///
/// Minutes follow the viewing-history rule (docs/api.md): a play adds its position, or only what it
/// added to the previous play of the same child and book when that one was unfinished. Only plays
/// inside the period count, so a viewing resumed from before the period counts in full.
struct PlaysReportController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.playsReport), use: page)
        routes.get(AdminPath.segments(AdminPath.playsReport + ".csv"), use: csv)
    }

    static let periods = [("7", "Last 7 days"), ("30", "Last 30 days"), ("90", "Last 90 days"), ("365", "Last year")]
    static let orders = [("plays", "Plays"), ("minutes", "Minutes watched")]
    static let limit = 100

    struct Row: Encodable {
        let rank: Int
        let bookID: Int
        let title: String
        let publisher: String
        let plays: Int
        let children: Int
        let minutes: Int
        let url: String
    }

    struct Page: Encodable {
        let layout: LayoutView
        let rows: [Row]
        let periods: [OptionView]
        let orders: [OptionView]
        let categories: [OptionView]
        let publishers: [OptionView]
        let csvURL: String
    }

    struct Filter {
        let days: Int
        let order: String
        let category: Int?
        let publisher: Int?

        init(_ query: QueryParameters) {
            let days = (try? query.value("period")).flatMap { $0 }.flatMap(Int.init) ?? 30
            self.days = PlaysReportController.periods.contains { $0.0 == String(days) } ? days : 30
            let order = (try? query.value("order")).flatMap { $0 } ?? "plays"
            self.order = order == "minutes" ? "minutes" : "plays"
            category = (try? query.integer("category", in: 1...Int(Int32.max), what: "")) ?? nil
            publisher = (try? query.integer("publisher", in: 1...Int(Int32.max), what: "")) ?? nil
        }
    }

    static func rows(_ filter: Filter, on sql: any SQLDatabase) async throws -> [Row] {
        let rows = try await PlaysReportQueries.mostPlayed(days: filter.days, byMinutes: filter.order == "minutes",
                                                           category: filter.category, publisher: filter.publisher, limit: limit, on: sql)
        return rows.enumerated().map { index, row in
            Row(rank: index + 1, bookID: row.id, title: row.title, publisher: row.publisher, plays: row.plays,
                children: row.children, minutes: row.minutes, url: AdminPath.record("books", row.id))
        }
    }

    @Sendable
    func page(req: Request) async throws -> View {
        let query = QueryParameters(query: req.url.query)
        let filter = Filter(query)
        func options(_ rows: [PlaysReportQueries.Option], selected: Int?) -> [OptionView] {
            [OptionView(value: "", label: "Any", selected: selected == nil)]
                + rows.map { OptionView(value: String($0.id), label: $0.name, selected: $0.id == selected) }
        }
        return try await req.view.render("report_plays", Page(
            layout: LayoutView(req, title: "Most played", section: "reports"),
            rows: try await Self.rows(filter, on: req.sql),
            periods: Self.periods.map { OptionView(value: $0.0, label: $0.1, selected: $0.0 == String(filter.days)) },
            orders: Self.orders.map { OptionView(value: $0.0, label: $0.1, selected: $0.0 == filter.order) },
            categories: options(try await PlaysReportQueries.categories(on: req.sql), selected: filter.category),
            publishers: options(try await PlaysReportQueries.publishers(on: req.sql), selected: filter.publisher),
            csvURL: AdminPath.playsReport + ".csv" + (req.url.query.map { "?" + $0 } ?? "")))
    }

    @Sendable
    func csv(req: Request) async throws -> Response {
        let rows = try await Self.rows(Filter(QueryParameters(query: req.url.query)), on: req.sql)
        var text = CSV.line(["rank", "book_id", "title", "publisher", "plays", "children", "minutes"])
        for row in rows {
            text += CSV.line([String(row.rank), String(row.bookID), row.title, row.publisher, String(row.plays), String(row.children), String(row.minutes)])
        }
        let response = Response(status: .ok, body: .init(string: text))
        response.headers.contentType = HTTPMediaType(type: "text", subType: "csv", parameters: ["charset": "utf-8"])
        response.headers.replaceOrAdd(name: .contentDisposition, value: "attachment; filename=\"most-played.csv\"")
        return response
    }
}
