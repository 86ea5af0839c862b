import Core
import SQLKit
import Vapor

/// A staff member's own account (`/admin/account`): time zone and theme, links to password and
/// two-factor pages, and their API tokens (`/admin/account/tokens`; admins see and revoke everyone's).
struct StaffAccountController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(AdminPath.segments(AdminPath.account), use: page)
        routes.post(AdminPath.segments(AdminPath.account), use: save)
        routes.post(AdminPath.segments(AdminPath.account) + [.constant("theme")], use: theme)
        routes.get(AdminPath.segments(AdminPath.apiTokens), use: tokens)
        routes.post(AdminPath.segments(AdminPath.apiTokens), use: createToken)
        routes.post(AdminPath.segments(AdminPath.apiTokens) + [.parameter("id"), .constant("revoke")], use: revokeToken)
    }

    static let themes = [("auto", "As my system"), ("light", "Light"), ("dark", "Dark")]

    struct Page: Encodable {
        let layout: LayoutView
        let zones: [OptionView]
        let themes: [OptionView]
        let error: String?
        let passwordURL = AdminPath.ownPassword
        let twoFactorURL = AdminPath.twoFactor
        let tokensURL = AdminPath.apiTokens
        let action = AdminPath.account
    }

    private func render(_ req: Request, zone: String, theme: String, error: String? = nil, status: HTTPStatus = .ok) async throws -> Response {
        let names = try await StaffAccountQueries.timeZoneNames(on: req.sql)
        let page = Page(layout: LayoutView(req, title: "Your account", section: "account"),
                        zones: names.map { OptionView(value: $0, label: $0, selected: $0 == zone) },
                        themes: Self.themes.map { OptionView(value: $0.0, label: $0.1, selected: $0.0 == theme) }, error: error)
        return try await req.page("account", page, status: status)
    }

    @Sendable
    func page(req: Request) async throws -> Response {
        let user = try req.staff
        return try await render(req, zone: user.timeZone, theme: user.theme)
    }

    @Sendable
    func save(req: Request) async throws -> Response {
        let user = try req.staff
        let form = try FormBody(req)
        let zone = form.value("time_zone") ?? "", theme = form.value("theme") ?? ""
        guard zone.utf8.count <= 64, TimeZone(identifier: zone) != nil, try await req.appServices.timeZoneNames.contains(zone, on: req.sql) else {
            return try await render(req, zone: zone, theme: theme, error: "Choose a time zone from the list.", status: .badRequest)
        }
        guard Self.themes.contains(where: { $0.0 == theme }) else {
            return try await render(req, zone: zone, theme: "auto", error: "Choose a theme.", status: .badRequest)
        }
        try await StaffAccountQueries.saveSettings(user: user.id, timeZone: zone, theme: theme, on: req.sql)
        req.adminSession.flash("Saved: times show in \(zone).")
        return req.redirect(to: AdminPath.account)
    }

    /// The header's light/dark switch: saves the choice and goes back to the page it was on.
    @Sendable
    func theme(req: Request) async throws -> Response {
        let user = try req.staff
        let form = try FormBody(req)
        let theme = form.value("theme") ?? ""
        guard Self.themes.contains(where: { $0.0 == theme }) else { throw Abort(.badRequest, reason: "Unknown theme.") }
        try await StaffAccountQueries.saveTheme(user: user.id, theme: theme, on: req.sql)
        return req.redirect(to: form.value("back").flatMap { ConsolePath.validated($0, under: AdminPath.dashboard) } ?? AdminPath.dashboard)
    }

    struct TokenView: Encodable {
        let id: Int
        let name: String
        let owner: String?
        let scopes: String
        let created: String
        let lastUsed: String
        let revoked: Bool
        let revokeURL: String
    }

    struct TokensPage: Encodable {
        let layout: LayoutView
        let tokens: [TokenView]
        let scopes: [OptionView]
        let newToken: String?
        let error: String?
        let action = AdminPath.apiTokens
        let isAdmin: Bool
    }

    private func renderTokens(_ req: Request, newToken: String? = nil, error: String? = nil, status: HTTPStatus = .ok) async throws -> Response {
        let user = try req.staff
        let rows = try await StaffAccountQueries.tokens(of: user, on: req.sql)
        let time = StaffTime(user)
        let page = TokensPage(layout: LayoutView(req, title: "API tokens", section: "account"), tokens: rows.map {
            TokenView(id: $0.id, name: $0.name, owner: user.isAdmin ? $0.email : nil, scopes: $0.scopes.joined(separator: ", "),
                      created: time.format($0.createdAt), lastUsed: $0.lastUsedAt.map(time.format) ?? "never",
                      revoked: $0.revokedAt != nil, revokeURL: AdminPath.apiTokens + "/\($0.id)/revoke")
        }, scopes: StaffTokens.Scope.allCases.map { OptionView(value: $0.rawValue, label: $0.label, selected: false) },
           newToken: newToken, error: error, isAdmin: user.isAdmin)
        return try await req.page("api_tokens", page, status: status, headers: ["Cache-Control": "no-store"])
    }

    @Sendable func tokens(req: Request) async throws -> Response { try await renderTokens(req) }

    @Sendable
    func createToken(req: Request) async throws -> Response {
        let user = try req.staff
        let form = try FormBody(req)
        let name = (form.value("name") ?? "").trimmingCharacters(in: .whitespaces)
        let scopes = form.values("scopes[]").filter { StaffTokens.Scope(rawValue: $0) != nil }
        guard (1...80).contains(name.count) else { return try await renderTokens(req, error: "Name the token (what uses it), up to 80 characters.", status: .badRequest) }
        guard !scopes.isEmpty else { return try await renderTokens(req, error: "Choose at least one scope.", status: .badRequest) }
        let token = StaffTokens.newToken()
        try await req.transaction { sql in
            let id = try await StaffAccountQueries.createToken(user: user, name: name, scopes: Array(Set(scopes)).sorted(), hash: StaffTokens.hash(token), on: sql)
            try await AuditWriter(staff: user).record(.apiTokenCreated, table: "staff_api_tokens", ids: [id], before: [:],
                                                      after: [id: String(decoding: try JSONEncoder().encode(["name": name, "scopes": scopes.joined(separator: ",")]), as: UTF8.self)], on: sql)
        }
        return try await renderTokens(req, newToken: token)
    }

    @Sendable
    func revokeToken(req: Request) async throws -> Response {
        let user = try req.staff
        guard let id = req.parameters.get("id", as: Int.self) else { throw Abort(.notFound) }
        let revoked = try await req.transaction { sql -> Bool in
            guard try await StaffAccountQueries.revokeToken(id, by: user, on: sql) else { return false }
            try await AuditWriter(staff: user).record(.apiTokenRevoked, table: "staff_api_tokens", ids: [id], before: [:], after: [:], on: sql)
            return true
        }
        guard revoked else { throw Abort(.notFound) }
        req.adminSession.flash("The token was revoked; requests with it are refused from now on.")
        return req.redirect(to: AdminPath.apiTokens)
    }
}
