import SQLKit
import Vapor

/// Staff passwords in the console: `/admin/account/password` (anyone, their own, with the current
/// one) and `/admin/staff_users/:id/password` (admins, anyone's, a reset). A password is never
/// shown or logged. Changing it ends every session of that user (a trigger, `migrations/0012`);
/// whoever changed their own stays signed in on a fresh session. Audited without the hash.
struct PasswordController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        let own = AdminPath.segments(AdminPath.ownPassword)
        let reset = [.constant(AdminResource.staffUsers.slug), .parameter("id"), .constant(ResourcePath.password)] as [PathComponent]
        routes.get(own, use: ownForm)
        routes.post(own, use: changeOwn)
        routes.get(reset, use: resetForm)
        routes.post(reset, use: self.reset)
    }

    struct Errors: Encodable { var current: String?; var password: String?; var confirm: String?
        var isEmpty: Bool { current == nil && password == nil && confirm == nil } }

    struct Page: Encodable {
        let layout: LayoutView
        let heading: String
        let action: String
        let needsCurrent: Bool
        let hint: String
        let errors: Errors
    }


    @Sendable
    func ownForm(req: Request) async throws -> View {
        try await Self.render(req, own: true, target: try req.staff.email, action: AdminPath.ownPassword, errors: Errors())
    }

    @Sendable
    func resetForm(req: Request) async throws -> View {
        try req.requireAdmin()
        let (id, email) = try await Self.target(req)
        return try await Self.render(req, own: false, target: email, action: AdminPath.staffPassword(id), errors: Errors())
    }

    @Sendable
    func changeOwn(req: Request) async throws -> Response {
        let staff = try req.staff
        let form = try FormBody(req)
        var errors = Self.check(form)
        // The current password is a guess like a sign-in's: it spends the same budget (per email
        // and per address), so a session cannot be used to try passwords without limit.
        let throttle = LoginThrottle(.staff, email: staff.email, request: req)
        if let wait = try await throttle.reserve(on: req.sql) {
            errors.current = "Too many wrong passwords; try again in \((wait + 59) / 60) minutes."
            let page = try await Self.render(req, own: true, target: staff.email, action: AdminPath.ownPassword, errors: errors)
            let response = try await page.encodeResponse(status: .tooManyRequests, for: req)
            response.headers.replaceOrAdd(name: .retryAfter, value: String(wait))
            return response
        }
        let hash = try await PasswordQueries.hash(ofStaff: staff.id, on: req.sql) ?? ""
        if (try? await req.password.async.verify(form.value("current") ?? "", created: hash)) != true {
            errors.current = "This is not your current password."
        } else {
            try await throttle.succeeded(on: req.sql)
        }
        guard errors.isEmpty else {
            return try await Self.render(req, own: true, target: staff.email, action: AdminPath.ownPassword, errors: errors).encodeResponse(status: .unprocessableEntity, for: req)
        }
        try await Self.save(form.value("password") ?? "", for: staff.id, action: .passwordChange, req: req)
        req.adminSession.signIn(staff)   // the trigger ended every session of this user, this one included
        req.adminSession.flash("Your password was changed. Your other sessions were signed out.")
        return req.redirect(to: AdminPath.dashboard, redirectType: .normal)
    }

    @Sendable
    func reset(req: Request) async throws -> Response {
        try req.requireAdmin()
        let (id, email) = try await Self.target(req)
        let form = try FormBody(req)
        let errors = Self.check(form)
        guard errors.isEmpty else {
            return try await Self.render(req, own: false, target: email, action: AdminPath.staffPassword(id), errors: errors).encodeResponse(status: .unprocessableEntity, for: req)
        }
        try await Self.save(form.value("password") ?? "", for: id, action: .passwordReset, req: req)
        let staff = try req.staff
        if id == staff.id { req.adminSession.signIn(staff) }
        req.adminSession.flash("The password of \(email) was reset; their sessions were signed out. Give it to them in person.")
        return req.redirect(to: AdminPath.record(AdminResource.staffUsers.slug, id), redirectType: .normal)
    }

    /// The new password's rules (as `staff create`): 8 characters to bcrypt's 72 bytes, typed twice.
    static func check(_ form: FormBody) -> Errors {
        var errors = Errors()
        let password = form.value("password") ?? ""
        if password.count < 8 { errors.password = "Use at least 8 characters." }
        else if password.utf8.count > 72 { errors.password = "Use at most 72 bytes." }
        else if password.unicodeScalars.contains("\u{0}") { errors.password = "A password cannot contain a NUL character." }
        if form.value("confirm") != password { errors.confirm = "The two passwords differ." }
        return errors
    }

    /// The new hash and its audit row, in one transaction (the trigger ends the sessions in it too).
    static func save(_ password: String, for id: Int, action: AuditAction, req: Request) async throws {
        let hash = try await req.password.async.hash(password)
        let audit = AuditWriter(staff: try req.staff)
        try await req.transaction { sql in
            let stamp = try await PasswordQueries.setHash(hash, ofStaff: id, on: sql)
            try await audit.record(action, table: "staff_users", ids: [id], before: [:], after: [id: stamp], on: sql)
        }
    }

    private static func target(_ req: Request) async throws -> (Int, String) {
        let id = try req.pathID("id", missing: "No such staff user.")
        guard let email = try await PasswordQueries.email(ofStaff: id, on: req.sql) else {
            throw Abort(.notFound, reason: "No such staff user.")
        }
        return (id, email)
    }

    private static func render(_ req: Request, own: Bool, target: String, action: String, errors: Errors) async throws -> View {
        try await req.view.render("password", Page(
            layout: LayoutView(req, title: own ? "Change your password" : "Reset a password", section: own ? "account" : "staff_users"),
            heading: own ? "Change your password" : "Reset the password of \(target)", action: action, needsCurrent: own,
            hint: own ? "Your other sessions will be signed out." : "Their sessions will be signed out; tell them the new password in person.",
            errors: errors))
    }
}
