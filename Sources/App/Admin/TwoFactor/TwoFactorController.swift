import SQLKit
import Vapor

/// A staff member's own second factor (`/admin/account/two-factor`): enrol by scanning a QR code
/// (drawn by the server, no script) and confirming one code, then ten recovery codes shown once;
/// new recovery codes or turning it off take a current code. Every code typed on these pages spends
/// the sign-in's code budget (`staff_code`, per staff member and per address), like the sign-in's
/// second step. Admins reset another's from their staff page (`/admin/staff_users/:id/two-factor`).
/// Everything is audited.
struct TwoFactorController: RouteCollection {
    static let resetPath = "two-factor"

    func boot(routes: any RoutesBuilder) throws {
        let own = AdminPath.segments(AdminPath.twoFactor)
        routes.get(own, use: page)
        routes.get(AdminPath.segments(AdminPath.twoFactorQR), use: qr)
        routes.post(own + [.constant("enable")], use: enable)
        routes.post(own + [.constant("recovery-codes")], use: regenerate)
        routes.post(own + [.constant("disable")], use: disable)
        let reset = [.constant(AdminResource.staffUsers.slug), .parameter("id"), .constant(Self.resetPath)] as [PathComponent]
        routes.get(reset, use: resetForm)
        routes.post(reset, use: self.reset)
    }

    struct Page: Encodable {
        let layout: LayoutView
        let enabled: Bool
        let required: Bool
        let secret: String?
        let qrURL: String
        let codesLeft: Int
        let newCodes: [String]
        let hasNewCodes: Bool
        let error: String?
        let paths = Paths()
        struct Paths: Encodable {
            let enable = AdminPath.twoFactor + "/enable"
            let regenerate = AdminPath.twoFactor + "/recovery-codes"
            let disable = AdminPath.twoFactor + "/disable"
            let dashboard = AdminPath.dashboard
        }
    }

    /// The secret being enrolled: kept sealed in the session until confirmed, so the QR code and
    /// the page show the same one.
    private func pendingSecret(_ req: Request) throws -> [UInt8] {
        let box = StaffSecretKeys(req.application.settings).current
        if let sealed = req.adminSession.pendingTOTP, let secret = box.open(sealed) { return secret }
        let secret = [UInt8].random(count: 20)
        req.adminSession.pendingTOTP = try box.seal(secret)
        return secret
    }

    private func render(_ req: Request, newCodes: [String] = [], error: String? = nil, status: HTTPStatus = .ok,
                        headers: HTTPHeaders = [:]) async throws -> Response {
        let user = try req.staff
        let store = TwoFactorStore(req)
        let enabled = try await StaffSecondFactorQueries.isEnabled(user: user.id, on: req.sql)
        let secret = enabled ? nil : try pendingSecret(req)
        let page = Page(layout: LayoutView(req, title: "Two-factor sign-in", section: "account"), enabled: enabled,
                        required: req.application.settings.staffTwoFactor.requires(user.role),
                        secret: secret.map { Data($0).base32EncodedString().chunked(4) }, qrURL: AdminPath.twoFactorQR,
                        codesLeft: enabled ? try await store.recoveryCodesLeft(user: user.id) : 0, newCodes: newCodes, hasNewCodes: !newCodes.isEmpty, error: error)
        var headers = headers
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return try await req.page("two_factor", page, status: status, headers: headers)
    }

    @Sendable
    func page(req: Request) async throws -> Response { try await render(req) }

    @Sendable
    func qr(req: Request) async throws -> Response {
        let user = try req.staff
        let svg = try await QRCode.svg(StaffTOTP.link(secret: try pendingSecret(req), account: user.email))
        return Response(status: .ok, headers: ["Content-Type": "image/svg+xml", "Cache-Control": "no-store"], body: .init(string: svg))
    }

    @Sendable
    func enable(req: Request) async throws -> Response {
        let user = try req.staff
        let code = try FormBody(req).value("code") ?? ""
        let throttle = LoginThrottle(.staffCode, email: user.email, request: req)
        if let refused = try await overBudget(req, throttle) { return refused }
        guard let codes = try await TwoFactorStore(req).enable(user: user.id, secret: try pendingSecret(req), code: code) else {
            return try await render(req, error: "That code does not match. Check your phone's clock and enter the code shown now.", status: .badRequest)
        }
        try await throttle.succeeded(on: req.sql)
        req.adminSession.pendingTOTP = nil
        try await audit(req, .twoFactorEnabled, target: user.id)
        return try await render(req, newCodes: codes)
    }

    /// New recovery codes (the old ones stop working), with a current code.
    @Sendable
    func regenerate(req: Request) async throws -> Response {
        let user = try req.staff
        if let refused = try await confirm(req, user: user) { return refused }
        let codes = TwoFactorStore.newRecoveryCodes()
        try await req.transaction { sql in try await TwoFactorStore.replaceRecoveryCodes(codes, user: user.id, on: sql) }
        try await audit(req, .twoFactorNewCodes, target: user.id)
        return try await render(req, newCodes: codes)
    }

    @Sendable
    func disable(req: Request) async throws -> Response {
        let user = try req.staff
        guard !req.application.settings.staffTwoFactor.requires(user.role) else {
            return try await render(req, error: "Your role must sign in with a second factor here; it cannot be turned off.", status: .forbidden)
        }
        if let refused = try await confirm(req, user: user) { return refused }
        try await req.transaction { sql in try await TwoFactorStore.disable(user: user.id, on: sql) }
        try await audit(req, .twoFactorDisabled, target: user.id)
        req.adminSession.flash("Two-factor sign-in is off.")
        return req.redirect(to: AdminPath.twoFactor)
    }

    /// A current code from the form, checked within the code budget: nil when it is right, else
    /// the page to answer (a wrong code 400, over the budget 429 without checking the code).
    private func confirm(_ req: Request, user: StaffUser) async throws -> Response? {
        let throttle = LoginThrottle(.staffCode, email: user.email, request: req)
        if let refused = try await overBudget(req, throttle) { return refused }
        guard try await TwoFactorStore(req).verify(user: user.id, code: try FormBody(req).value("code") ?? "") != nil else {
            return try await render(req, error: "Enter a current code from your authenticator app.", status: .badRequest)
        }
        try await throttle.succeeded(on: req.sql)
        return nil
    }

    /// Counts a code attempt; the 429 page when the staff member or the address is over the budget.
    private func overBudget(_ req: Request, _ throttle: LoginThrottle) async throws -> Response? {
        guard let wait = try await throttle.reserve(on: req.sql) else { return nil }
        return try await render(req, error: "Too many wrong codes. Try again in \((wait + 59) / 60) minutes.", status: .tooManyRequests,
                                headers: ["Retry-After": String(wait)])
    }

    @Sendable
    func resetForm(req: Request) async throws -> View {
        try req.requireAdmin()
        let (id, email) = try await target(req)
        let page = ConfirmPage(layout: LayoutView(req, title: "Reset two-factor sign-in", section: AdminResource.staffUsers.slug),
                               heading: "Reset two-factor sign-in of \(email)?",
                               message: "Their authenticator app and recovery codes stop working. They sign in with their password and enrol again\(req.application.settings.staffTwoFactor == .none ? "" : " (at once, if their role requires it)").",
                               warning: nil, action: AdminPath.record(AdminResource.staffUsers.slug, id) + "/" + Self.resetPath,
                               cancelURL: AdminPath.record(AdminResource.staffUsers.slug, id), button: "Reset two-factor")
        return try await req.view.render("confirm", page)
    }

    @Sendable
    func reset(req: Request) async throws -> Response {
        try req.requireAdmin()
        let (id, email) = try await target(req)
        try await req.transaction { sql in
            try await TwoFactorStore.disable(user: id, on: sql)
            try await AuditWriter(staff: try req.staff).record(.twoFactorReset, table: "staff_users", ids: [id], before: [:], after: [:], on: sql)
        }
        req.adminSession.flash("Two-factor sign-in of \(email) was reset.")
        return req.redirect(to: AdminPath.record(AdminResource.staffUsers.slug, id))
    }

    private func target(_ req: Request) async throws -> (Int, String) {
        guard let id = req.parameters.get("id", as: Int.self),
              let email = try await StaffSecondFactorQueries.email(user: id, on: req.sql) else { throw Abort(.notFound) }
        return (id, email)
    }

    private func audit(_ req: Request, _ action: AuditAction, target: Int) async throws {
        try await AuditWriter(staff: try req.staff).record(action, table: "staff_users", ids: [target], before: [:], after: [:], on: req.sql)
    }
}

extension String {
    /// "ABCDEFGH" → "ABCD EFGH": a secret typed by hand.
    func chunked(_ size: Int) -> String {
        stride(from: 0, to: count, by: size).map { i in
            let start = index(startIndex, offsetBy: i)
            return String(self[start..<(index(start, offsetBy: size, limitedBy: endIndex) ?? endIndex)])
        }.joined(separator: " ")
    }
}
