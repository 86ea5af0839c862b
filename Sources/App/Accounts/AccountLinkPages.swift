import Vapor

/// The pages a mailed link opens (`/account/verify?token=…`, `/account/reset?token=…`): a button
/// (or the new password) first, so a mail scanner that follows links uses nothing up; the form
/// posts the token back and the same code as the API's acts on it. No session and no CSRF token:
/// the mailed token is the only secret, and whoever holds it could call the API directly.
struct AccountLinkPages: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        let account = routes.grouped("account")
        account.get("verify", use: verifyForm)
        account.on(.POST, "verify", body: .collect(maxSize: "16kb"), use: verify)
        account.get("reset", use: resetForm)
        account.on(.POST, "reset", body: .collect(maxSize: "16kb"), use: reset)
        account.get("invitation", use: invitation)
    }

    struct Page: Encodable {
        let title: String
        let message: String?
        let error: String?
        /// "verify" or "reset": which form to show; nil: a message only.
        let form: String?
        let token: String
        let stylesheet = AdminPath.stylesheet
    }

    @Sendable
    func verifyForm(req: Request) async throws -> Response {
        try await render(req, Page(title: "Confirm your email", message: "One click and your Storytime address is confirmed.",
                                   error: nil, form: "verify", token: Self.token(req.query[String.self, at: "token"])))
    }

    @Sendable
    func verify(req: Request) async throws -> Response {
        let token = Self.token(try FormBody(req).value("token"))
        do {
            try await SignUpRoutes.verify(token: token, req: req)
            return try await render(req, Page(title: "Email confirmed", message: "Thank you! Go back to the Storytime app: you can add your children now.",
                                              error: nil, form: nil, token: ""))
        } catch let problem as Problem {
            return try await render(req, Page(title: "Confirm your email", message: nil, error: Self.explain(problem), form: nil, token: ""),
                                    status: problem.status)
        }
    }

    @Sendable
    func resetForm(req: Request) async throws -> Response {
        try await render(req, Page(title: "Choose a new password", message: "At least \(ParentPassword.minimumLength) characters; every device will be signed out.",
                                   error: nil, form: "reset", token: Self.token(req.query[String.self, at: "token"])))
    }

    @Sendable
    func reset(req: Request) async throws -> Response {
        let form = try FormBody(req)
        let token = Self.token(form.value("token"))
        do {
            try await SignUpRoutes.reset(token: token, password: form.value("password") ?? "", req: req)
            return try await render(req, Page(title: "Password changed", message: "Sign in again in the Storytime app with your new password.",
                                              error: nil, form: nil, token: ""))
        } catch let problem as Problem {
            // A weak password keeps the form (the link still works); a bad link does not.
            let again = problem.code == "weak_password"
            return try await render(req, Page(title: "Choose a new password", message: nil, error: Self.explain(problem),
                                              form: again ? "reset" : nil, token: again ? token : ""), status: problem.status)
        }
    }

    /// A family invitation's link: what it is and how to accept it. Accepting needs the invited
    /// account signed in, so it happens in the app (which opens this same address as a universal
    /// link when installed, reading the token from it); the page uses nothing up.
    @Sendable
    func invitation(req: Request) async throws -> Response {
        let token = Self.token(req.query[String.self, at: "token"])
        guard !token.isEmpty, let invitation = try await FamilyQueries.pendingInvitation(tokenHash: RefreshSecret.hash(token), lock: false, on: req.sql) else {
            return try await render(req, Page(title: "Family invitation", message: nil,
                                              error: "This invitation has expired, was already used or was withdrawn. Ask for a new one.",
                                              form: nil, token: ""), status: .notFound)
        }
        let role = invitation.role == .parent ? "a parent" : "a caregiver"
        let message = "\(invitation.invitedBy ?? "A Storytime parent") invited \(invitation.email) to join their family as \(role). "
            + "To accept, open this link on a phone or tablet with the Storytime app, or open the app, sign in with \(invitation.email) "
            + "(or create an account with it) and choose Accept invitation. The invitation works once and ends 7 days after it was sent."
        return try await render(req, Page(title: "Join a family on Storytime", message: message, error: nil, form: nil, token: ""))
    }

    private static func token(_ text: String?) -> String {
        String((text ?? "").prefix(200).filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
    }

    private static func explain(_ problem: Problem) -> String {
        problem.code == "invalid_token" ? "This link has expired or was already used. Ask for a new one in the Storytime app." : problem.detail
    }

    private func render(_ req: Request, _ page: Page, status: HTTPStatus = .ok) async throws -> Response {
        let response = try await req.view.render("account_link", page).encodeResponse(for: req)
        response.status = status
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        response.headers.replaceOrAdd(name: "Referrer-Policy", value: "no-referrer")   // the token stays off other sites' logs
        return response
    }
}
