import Core
import SQLKit
import Vapor

/// Saved views: a list's query (filters, search, sort, page size, columns) under a name, personal
/// or shared with all staff. Opening one is following a link; saving the same name again replaces
/// it (one statement, so two saves at once leave one view). Sharing is an editor's or an admin's:
/// a viewer saves views for themselves only, and a view's owner demoted to viewer shares it no more.
enum SavedViews {
    struct Link: Encodable {
        let name: String
        let href: String
        let shared: Bool
        let current: Bool
    }

    static func list(resource: String, staff: StaffUser, current: String, listURL: String, on sql: any SQLDatabase) async throws -> [Link] {
        try await SavedViewsQueries.visible(resource: resource, staff: staff.id, on: sql).map { row in
            Link(name: row.name, href: listURL + (row.query.isEmpty ? "" : "?" + row.query), shared: row.shared, current: row.query == current)
        }
    }
}

struct SavedViewsController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.post(AdminPath.segments(AdminPath.savedViews), use: save)
    }

    @Sendable
    func save(req: Request) async throws -> Response {
        let staff = try req.staff
        let form = try FormBody(req)
        guard let resource = ResourceRegistry.navigation.first(where: { $0.slug == form.value("resource") }),
              !resource.access.requiresAdmin || staff.isAdmin else { throw Abort(.notFound) }
        let name = (form.value("name") ?? "").trimmingCharacters(in: .whitespaces)
        // Only a query string goes back into the list's URL: re-encoded pair by pair.
        let query = QueryParameters(pairs: QueryParameters(query: form.value("query") ?? "").pairs.filter { $0.name != "page" && $0.name != "csrf_token" }).encoded
        let list = AdminPath.list(resource.slug)
        guard (1...80).contains(name.count) else {
            req.adminSession.flash("Name the view (up to 80 characters) to save it.")
            return req.redirect(to: list + (query.isEmpty ? "" : "?" + query))
        }
        guard query.utf8.count <= 2000 else { throw Abort(.badRequest, reason: "This view's filter is too long to save.") }
        let shared = form.value("shared") == "on"
        guard !shared || staff.canEdit else {
            req.adminSession.flash("Viewers save views for themselves only: untick “Share with all staff”, or ask an editor to share it.")
            return req.redirect(to: list + (query.isEmpty ? "" : "?" + query))
        }
        try await SavedViewsQueries.save(staff: staff.id, resource: resource.slug, name: name, query: query, shared: shared, on: req.sql)
        req.adminSession.flash("Saved the view “\(name)”.")
        return req.redirect(to: list + (query.isEmpty ? "" : "?" + query))
    }
}
