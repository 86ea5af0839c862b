import Core
import Vapor

/// Console pages need a signed-in staff member; others are sent to the login page.
struct StaffAuthMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard request.adminSession.user != nil else {
            let target = request.url.path + (request.url.query.map { "?" + $0 } ?? "")
            let next = request.method == .GET ? "?next=" + QueryParameters.encodeComponent(target) : ""
            return request.redirect(to: AdminPath.login + next)
        }
        return try await next.respond(to: request)
    }
}
