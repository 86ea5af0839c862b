import Core
import SQLKit
import Vapor

/// The console's sign-in and sign-out (`AdminPath.login`, `AdminPath.logout`).
struct LoginController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.login), use: form)
        let forms = routes.grouped(CSRFMiddleware(maxBody: CSRFMiddleware.loginLimit))
        forms.post(AdminPath.segments(AdminPath.login), use: login)
        forms.post(AdminPath.segments(AdminPath.logout), use: logout)
    }

    struct LoginPage: Encodable {
        let title = "Sign in"
        let csrfToken: String
        let email: String
        let error: String?
        let next: String
        let flash: [String]
        let action = AdminPath.login
        let stylesheet = AdminPath.stylesheet
    }

    @Sendable
    func form(req: Request) async throws -> Response {
        if req.adminSession.user != nil { return req.redirect(to: AdminPath.dashboard) }
        return try await render(req, email: "", error: nil)
    }

    private func render(_ req: Request, email: String, error: String?, status: HTTPStatus = .ok,
                        headers: HTTPHeaders = [:]) async throws -> Response {
        let next = safeNext(req.query[String.self, at: "next"] ?? (try? FormBody(req).value("next")) ?? nil)
        let signedOut = req.url.query.map { QueryParameters(query: $0).pairs.contains { $0.name == "signed_out" } } ?? false
        let page = LoginPage(csrfToken: req.adminSession.csrfToken, email: email, error: error, next: next,
                             flash: req.adminSession.takeFlash() + (signedOut ? ["You are signed out."] : []))
        let response = try await req.view.render("login", page).encodeResponse(for: req)
        response.status = status
        for (name, value) in headers { response.headers.replaceOrAdd(name: name, value: value) }
        return response
    }

    /// Only console paths of a strict grammar are followed after sign-in (no open redirect, no
    /// header injection).
    private func safeNext(_ next: String?) -> String {
        next.flatMap { ConsolePath.validated($0, under: AdminPath.dashboard) } ?? AdminPath.dashboard
    }

    @Sendable
    func login(req: Request) async throws -> Response {
        let form = try FormBody(req)
        let email = (form.value("email") ?? "").trimmingCharacters(in: .whitespaces)
        let password = form.value("password") ?? ""
        guard !email.isEmpty, !password.isEmpty, !email.unicodeScalars.contains("\u{0}") else {
            return try await render(req, email: email, error: "Enter your email and password.", status: .badRequest)
        }
        let throttle = LoginThrottle(.staff, email: email, request: req)
        if let wait = try await throttle.reserve(on: req.sql) {
            return try await render(req, email: email, error: "Too many failed sign-ins. Try again in \((wait + 59) / 60) minutes.",
                                    status: .tooManyRequests, headers: ["Retry-After": String(wait)])
        }
        let row = try await req.sql.raw("SELECT id, email, role, password_hash FROM staff_users WHERE lower(email) = lower(\(bind: email))").first()
        var user: StaffUser?
        if let row {
            let hash = try row.decode(column: "password_hash", as: String.self)
            if (try? await req.password.async.verify(password, created: hash)) == true,
               let role = StaffRole(rawValue: try row.decode(column: "role", as: String.self)) {
                user = StaffUser(id: try row.decode(column: "id", as: Int.self), email: try row.decode(column: "email", as: String.self), role: role)
            }
        } else {
            _ = try? await req.password.async.hash(password)   // same time for unknown emails
        }
        guard let user else {
            req.appServices.metrics.loginFailed("staff")
            return try await render(req, email: email, error: "Email or password is wrong.", status: .unauthorized)
        }
        try await throttle.succeeded(on: req.sql)
        req.adminSession.signIn(user)
        return req.redirect(to: safeNext(form.value("next")))
    }

    @Sendable
    func logout(req: Request) async throws -> Response {
        req.adminSession.signOut()
        return req.redirect(to: AdminPath.login + "?signed_out")
    }
}
