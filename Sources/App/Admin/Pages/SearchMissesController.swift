import Core
import SQLKit
import Vapor

/// `/admin/reports/searches`: what families searched for and did not find, per cause, over the
/// last weeks — only queries at least `minFamilies` families ran (one family's typing is not a
/// gap in the catalog, and a single family's searches are not shown to staff). Each row offers
/// "add a synonym" with the query filled in.
struct SearchMissesController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.searchMissesReport), use: page)
    }

    static let minFamilies = 3
    static let periods = [("4", "Last 4 weeks"), ("1", "This week"), ("13", "Last 13 weeks"), ("26", "Last 26 weeks")]
    static let causes: [(SearchMisses.Cause, String, String)] = [
        (.notInCatalog, "Not in the catalog", "No active book matches, in any country or schedule."),
        (.licensedElsewhere, "Licensed elsewhere", "Books match, but not in the family's country."),
        (.notLiveYet, "Not live now", "Books match, but their schedule keeps them out of the catalog now."),
        (.hiddenByControls, "Hidden by family controls", "Books match, but the child's controls hide them."),
    ]

    struct Row: Encodable { let query: String; let searches: Int; let families: Int; let countries: String; let synonymURL: String }
    struct Group: Encodable { let cause: String; let label: String; let help: String; let searches: Int; let rows: [Row] }
    struct Page: Encodable { let layout: LayoutView; let groups: [Group]; let periods: [OptionView]; let minFamilies: Int }

    @Sendable
    func page(req: Request) async throws -> View {
        let requested = (try? req.query.get(String.self, at: "period")) ?? "4"
        let weeks = Self.periods.first { $0.0 == requested }.map { Int($0.0)! } ?? 4
        let rows = try await SearchMissesQueries.misses(weeks: weeks, minFamilies: Self.minFamilies, on: req.sql)
        var byCause: [String: [Row]] = [:]
        for row in rows {
            byCause[row.cause, default: []].append(Row(
                query: row.query, searches: row.searches, families: row.families, countries: row.countries,
                synonymURL: AdminPath.path("synonyms", "new") + "?words=" + (row.query + ", ").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!))
        }
        let groups = Self.causes.map { cause, label, help in
            let rows = byCause[cause.rawValue] ?? []
            return Group(cause: cause.rawValue, label: label, help: help, searches: rows.reduce(0) { $0 + $1.searches }, rows: rows)
        }
        return try await req.view.render("report_searches", Page(
            layout: LayoutView(req, title: "Searches that found nothing", section: "searches"), groups: groups,
            periods: Self.periods.map { OptionView(value: $0.0, label: $0.1, selected: Int($0.0) == weeks) }, minFamilies: Self.minFamilies))
    }
}
