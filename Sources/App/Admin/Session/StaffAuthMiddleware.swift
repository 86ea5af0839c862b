import Core
import Vapor

/// Console pages need a signed-in staff member; others are sent to the login page. A staff member
/// whose role requires a second factor (`STAFF_2FA_REQUIRED`) and has none is sent to enrol.
struct StaffAuthMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if request.adminSession.user == nil, let bearer = request.headers.bearerAuthorization?.token {
            return try await withToken(bearer, request: request, next: next)
        }
        guard let user = request.adminSession.user else {
            let target = request.url.path + (request.url.query.map { "?" + $0 } ?? "")
            let next = request.method == .GET ? "?next=" + QueryParameters.encodeComponent(target) : ""
            return request.redirect(to: AdminPath.login + next)
        }
        // A role that must have a second factor does nothing else until it has one.
        if !user.hasSecondFactor, request.application.settings.staffTwoFactor.requires(user.role),
           !request.url.path.hasPrefix(AdminPath.twoFactor), request.url.path != AdminPath.logout {
            return request.redirect(to: AdminPath.twoFactor)
        }
        return try await next.respond(to: request)
    }

    /// A staff API token: its staff member within its scopes, answered 401/403 (never a redirect).
    /// The scopes a route allows are those declared for the route the router matched.
    private func withToken(_ token: String, request: Request, next: any AsyncResponder) async throws -> Response {
        guard let (user, scopes) = try await StaffTokens.authenticate(token, on: request.sql) else {
            throw Abort(.unauthorized, headers: ["WWW-Authenticate": "Bearer error=\"invalid_token\""], reason: "The token is unknown or was revoked.")
        }
        guard !scopes.isDisjoint(with: TokenScopedRoutes.scopes(of: request.route)) else {
            throw Abort(.forbidden, reason: "This token's scopes do not allow this request.")
        }
        request.storage[AdminSessionKey.self] = AdminSession(bearer: user, secret: request.application.settings.sessionSecret)
        return try await next.respond(to: request)
    }
}
