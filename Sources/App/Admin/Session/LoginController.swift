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
        forms.post(AdminPath.segments(AdminPath.secondFactor), use: secondFactor)
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
        return try await req.page("login", page, status: status, headers: headers)
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
        let row = try await LoginQueries.account(email: email, on: req.sql)
        var user: StaffUser?
        if let row {
            if (try? await req.password.async.verify(password, created: row.passwordHash)) == true, let role = StaffRole(rawValue: row.role) {
                user = StaffUser(id: row.id, email: row.email, role: role)
            }
        } else {
            _ = try? await req.password.async.hash(password)   // same time for unknown emails
        }
        guard let user else {
            req.appServices.metrics.loginFailed("staff")
            return try await render(req, email: email, error: "Email or password is wrong.", status: .unauthorized)
        }
        try await throttle.succeeded(on: req.sql)
        // Said only to whoever knows the password.
        if row?.locked == true {
            return try await render(req, email: email, error: "This account is locked. Ask an admin to unlock it.", status: .forbidden)
        }
        if row?.hasTotp == true {
            let ticket = SecondFactorTicket.make(user: user.id, visitor: req.adminSession.visitorID, secret: req.application.settings.sessionSecret, now: req.now)
            return try await renderCode(req, ticket: ticket, email: user.email, error: nil)
        }
        req.adminSession.signIn(user)
        return req.redirect(to: safeNext(form.value("next")))
    }

    struct CodePage: Encodable {
        let title = "Second factor"
        let csrfToken: String
        let ticket: String
        let email: String
        let error: String?
        let next: String
        let action = AdminPath.secondFactor
        let restart = AdminPath.login
        let stylesheet = AdminPath.stylesheet
    }

    private func renderCode(_ req: Request, ticket: String, email: String, error: String?, status: HTTPStatus = .ok,
                            headers: HTTPHeaders = [:]) async throws -> Response {
        let next = safeNext(try? FormBody(req).value("next"))
        let page = CodePage(csrfToken: req.adminSession.csrfToken, ticket: ticket, email: email, error: error, next: next)
        return try await req.page("login_code", page, status: status, headers: headers)
    }

    /// The second step: a code from the authenticator app, or a recovery code. Throttled apart
    /// from passwords (`staff_code`, per staff member and per address); a recovery code spent is audited.
    @Sendable
    func secondFactor(req: Request) async throws -> Response {
        let form = try FormBody(req)
        let ticket = form.value("ticket") ?? ""
        guard let id = SecondFactorTicket.user(of: ticket, visitor: req.adminSession.visitorID, secret: req.application.settings.sessionSecret, now: req.now),
              let row = try await LoginQueries.unlocked(id, on: req.sql), let role = StaffRole(rawValue: row.role) else {
            return try await render(req, email: "", error: "That sign-in took too long. Enter your email and password again.", status: .unauthorized)
        }
        let user = StaffUser(id: id, email: row.email, role: role, hasSecondFactor: true)
        let code = (form.value("code") ?? "").trimmingCharacters(in: .whitespaces)
        guard !code.isEmpty else {
            return try await renderCode(req, ticket: ticket, email: user.email, error: "Enter the 6-digit code from your authenticator app, or a recovery code.", status: .badRequest)
        }
        let throttle = LoginThrottle(.staffCode, email: user.email, request: req)
        if let wait = try await throttle.reserve(on: req.sql) {
            return try await renderCode(req, ticket: ticket, email: user.email, error: "Too many wrong codes. Try again in \((wait + 59) / 60) minutes.",
                                        status: .tooManyRequests, headers: ["Retry-After": String(wait)])
        }
        guard let accepted = try await TwoFactorStore(req).verify(user: id, code: code) else {
            req.appServices.metrics.loginFailed("staff")
            return try await renderCode(req, ticket: ticket, email: user.email, error: "That code is wrong or was already used.", status: .unauthorized)
        }
        try await throttle.succeeded(on: req.sql)
        if case .recoveryCode(let left) = accepted {
            try await AuditWriter(staff: user).record(.twoFactorRecoveryUsed, table: "staff_users", ids: [id],
                                                      before: [:], after: [id: "{\"recovery_codes_left\": \(left)}"], on: req.sql)
        }
        req.adminSession.signIn(user)
        if case .recoveryCode(let left) = accepted {
            req.adminSession.flash("You signed in with a recovery code; \(left) \(left == 1 ? "is" : "are") left. Make new ones on your two-factor page.")
        }
        return req.redirect(to: safeNext(form.value("next")))
    }

    @Sendable
    func logout(req: Request) async throws -> Response {
        req.adminSession.signOut()
        return req.redirect(to: AdminPath.login + "?signed_out")
    }
}
