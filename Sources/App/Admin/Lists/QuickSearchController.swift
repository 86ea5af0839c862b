import Core
import SQLKit
import Vapor

/// ⌘K / Ctrl-K: one search across books, publishers, categories and the console's own pages.
/// `/admin/search?q=` is a page (it works without script); the palette asks the same path for
/// JSON (`Accept: application/json`).
struct QuickSearchController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.quickSearch), use: search)
    }

    struct Result: Content {
        let label: String
        let kind: String
        let href: String
    }

    struct Page: Encodable {
        let layout: LayoutView
        let query: String
        let results: [Result]
    }

    static let perKind = 6

    @Sendable
    func search(req: Request) async throws -> Response {
        let staff = try req.staff
        let query = String((ConsoleText.search(req.query[String.self, at: "q"]) ?? "").prefix(100))
        var results: [Result] = []
        if !query.isEmpty {
            // The sections alone: a layout would take the session's flash (the palette asks as you type).
            let folded = query.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            results += LayoutView.navigation(for: staff).filter { $0.label.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).contains(folded) }
                .map { Result(label: $0.label, kind: "Page", href: $0.href) }
            for (resource, column, kind) in [(AdminResource.books, "title", "Book"), (.publishers, "name", "Publisher"), (.categories, "name", "Category")] {
                let rows = try await QuickSearchQueries.matches(query, table: resource.table, column: column, limit: Self.perKind, on: req.sql)
                results += rows.map { Result(label: $0.label, kind: kind, href: AdminPath.record(resource.slug, $0.id)) }
            }
            // Staff accounts: an admin's signed-in session only, never a staff API token (no
            // token scope reads staff, whatever its maker's role).
            if staff.isAdmin, !req.adminSession.isBearer, query.contains("@") {
                let rows = try await QuickSearchQueries.staff(query, limit: Self.perKind, on: req.sql)
                results += rows.map { Result(label: $0.email, kind: "Staff user", href: AdminPath.record(AdminResource.staffUsers.slug, $0.id)) }
            }
        }
        // Exactly JSON (a browser's `*/*` would match Vapor's media type comparison).
        if req.headers.first(name: .accept)?.hasPrefix("application/json") == true {
            return try await results.encodeResponse(for: req)
        }
        return try await req.page("quick_search", Page(layout: LayoutView(req, title: "Search", section: ""), query: query, results: results))
    }
}

/// Suggestions for a picker (`/admin/lookup/<table>?q=`): labels of a lookup declared with
/// `picker`, as JSON, for the forms' and filters' datalists.
struct LookupController: RouteCollection {
    static let pickers: [String: Lookup] = Dictionary(
        ResourceRegistry.all.flatMap { $0.form.fields.compactMap(\.lookup) + $0.list.filters.compactMap { if case .lookup(let l) = $0.kind { l } else { nil } } }
            .filter(\.picker).map { ($0.table, $0) }, uniquingKeysWith: { first, _ in first })

    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.lookup) + [.parameter("table")], use: suggest)
    }

    @Sendable
    func suggest(req: Request) async throws -> [String] {
        guard let lookup = req.parameters.get("table").flatMap({ Self.pickers[$0] }) else { throw Abort(.notFound) }
        let text = String((req.query[String.self, at: "q"] ?? "").trimmingCharacters(in: .whitespaces).prefix(100))
        return text.isEmpty ? [] : try await lookup.suggestions(text, on: req.sql)
    }
}
