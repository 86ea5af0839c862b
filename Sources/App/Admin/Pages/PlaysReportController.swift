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
        var conditions: [SQLQueryString] = []
        if let category = filter.category {
            conditions.append("EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = b.id AND bc.category_id = \(bind: category))")
        }
        if let publisher = filter.publisher { conditions.append("b.publisher_id = \(bind: publisher)") }
        let scope: SQLQueryString = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let rows = try await sql.raw("""
            WITH watched AS (
                SELECT p.book_id, p.child_id,
                       CASE WHEN lag(p.position_seconds) OVER w IS NOT NULL AND NOT lag(p.completed) OVER w
                                 AND p.position_seconds >= lag(p.position_seconds) OVER w
                            THEN p.position_seconds - lag(p.position_seconds) OVER w ELSE p.position_seconds END AS seconds
                  FROM plays p WHERE p.played_at > now() - make_interval(days => \(bind: filter.days)::int)
                WINDOW w AS (PARTITION BY p.child_id, p.book_id ORDER BY p.played_at, p.id)
            )
            SELECT b.id, b.title, COALESCE(pb.name, '') AS publisher, count(*) AS plays,
                   count(DISTINCT w.child_id) AS children, sum(w.seconds) / 60 AS minutes
              FROM watched w JOIN books b ON b.id = w.book_id LEFT JOIN publishers pb ON pb.id = b.publisher_id
             \(scope)
             GROUP BY b.id, b.title, pb.name
             ORDER BY \(filter.order == "minutes" ? "minutes DESC, plays DESC" : "plays DESC, minutes DESC" as SQLFragment), b.id
             LIMIT \(bind: limit)
            """).all()
        return try rows.enumerated().map { index, row in
            let id = try row.decode(column: "id", as: Int.self)
            return Row(rank: index + 1, bookID: id, title: try row.decode(column: "title", as: String.self),
                       publisher: try row.decode(column: "publisher", as: String.self),
                       plays: try row.decode(column: "plays", as: Int.self), children: try row.decode(column: "children", as: Int.self),
                       minutes: try row.decode(column: "minutes", as: Int.self), url: AdminPath.record("books", id))
        }
    }

    @Sendable
    func page(req: Request) async throws -> View {
        let query = QueryParameters(query: req.url.query)
        let filter = Filter(query)
        func options(_ sqlText: SQLQueryString, selected: Int?) async throws -> [OptionView] {
            [OptionView(value: "", label: "Any", selected: selected == nil)] + (try await req.sql.raw(sqlText).all().map {
                let id = try $0.decode(column: "id", as: Int.self)
                return OptionView(value: String(id), label: try $0.decode(column: "name", as: String.self), selected: id == selected)
            })
        }
        return try await req.view.render("report_plays", Page(
            layout: LayoutView(req, title: "Most played", section: "reports"),
            rows: try await Self.rows(filter, on: req.sql),
            periods: Self.periods.map { OptionView(value: $0.0, label: $0.1, selected: $0.0 == String(filter.days)) },
            orders: Self.orders.map { OptionView(value: $0.0, label: $0.1, selected: $0.0 == filter.order) },
            categories: try await options("SELECT id, name FROM categories ORDER BY display_order, name, id", selected: filter.category),
            publishers: try await options("SELECT id, name FROM publishers ORDER BY lower(name), id", selected: filter.publisher),
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
