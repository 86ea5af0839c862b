import Core
import SQLKit
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

/// Every state-changing console request carries the session's `csrf_token`, or is refused (403).
/// The form body is read here, before the route, so this is where its size is limited (413).
struct CSRFMiddleware: AsyncMiddleware {
    /// Forms: a book's 10,000-character description, percent-encoded, fits with room to spare.
    static let formLimit = 160 * 1024
    /// The sign-in form: an email and a password.
    static let loginLimit = 8 * 1024
    var maxBody = Self.formLimit

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if request.method != .GET && request.method != .HEAD {
            if let length = request.headers.first(name: .contentLength).flatMap(Int.init), length > maxBody {
                throw Abort(.payloadTooLarge, reason: "The form is larger than \(maxBody / 1024) kB.")
            }
            if request.body.data == nil { _ = try await request.body.collect(max: maxBody).get() }
            let form = try FormBody(request)
            guard request.adminSession.verifyCSRF(form.value("csrf_token")) else {
                throw Abort(.forbidden, reason: "The form has expired or did not come from this console. Go back, reload the page and try again.")
            }
            request.storage[FormBodyKey.self] = form
        }
        return try await next.respond(to: request)
    }
}

/// Editors and admins change the catalog; viewers only read.
func requireEditor(_ req: Request) throws {
    guard try req.staff.canEdit else { throw Abort(.forbidden, reason: "Your role (viewer) can only read the catalog.") }
}

func requireAdmin(_ req: Request) throws {
    guard try req.staff.isAdmin else { throw Abort(.forbidden, reason: "Only admins can do this.") }
}

/// An urlencoded form body as ordered pairs (repeated names such as `category_ids[]` kept).
struct FormBody: Sendable {
    let parameters: QueryParameters

    init(_ request: Request) throws {
        if let stored = request.storage[FormBodyKey.self] { self = stored; return }
        guard let buffer = request.body.data else { parameters = QueryParameters(pairs: []); return }
        parameters = QueryParameters(query: String(decoding: buffer.readableBytesView, as: UTF8.self))
    }

    func value(_ name: String) -> String? { parameters.pairs.first { $0.name == name }?.value }
    func values(_ name: String) -> [String] { parameters.pairs.filter { $0.name == name }.map(\.value) }
}

struct FormBodyKey: StorageKey { typealias Value = FormBody }

/// `/admin/login` and `/admin/logout`.
struct LoginController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get("login", use: form)
        let forms = routes.grouped(CSRFMiddleware(maxBody: CSRFMiddleware.loginLimit))
        forms.post("login", use: login)
        forms.post("logout", use: logout)
    }

    struct LoginPage: Encodable {
        let title = "Sign in"
        let csrfToken: String
        let email: String
        let error: String?
        let next: String
        let flash: [String]
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
        next.flatMap { ConsolePath.validated($0) } ?? AdminPath.dashboard
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
            req.application.metrics.loginFailed("staff")
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
