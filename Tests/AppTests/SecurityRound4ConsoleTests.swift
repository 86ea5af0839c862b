@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Round 4's attacks on the console's access control (issue 43: findings 2, 6, 8 and 14), each
/// replayed over HTTP; each now gets the safe answer.
@Suite("Security round 4: console")
struct SecurityRound4ConsoleTests {
    /// A staff API token made on the tokens page by `client` (shown once on that page).
    static func token(_ client: ConsoleClient, scopes: [String]) async throws -> String {
        let page = try await client.post("/admin/account/tokens", [("name", "automation")] + scopes.map { ("scopes[]", $0) })
        return try #require(page.html.range(of: #"id="new-token">"#).map { String(page.html[$0.upperBound...].prefix { $0 != "<" }) })
    }

    static func get(_ app: Application, _ path: String, token: String) async throws -> TestingHTTPResponse {
        try await app.testing().sendRequest(.GET, path, headers: ["Authorization": "Bearer \(token)"])
    }

    static func staffID(_ app: Application, _ email: String) async throws -> Int {
        try await app.sql.raw("SELECT id FROM staff_users WHERE email = \(bind: email)").one().decode(column: "id", as: Int.self)
    }

    @Test("the Outbox shows which link a mail carried and until when, never the link or its token; SMTP gets the real mail, the table keeps no body after", .app)
    func outboxShowsNoLinks() async throws {
        let app = try app()
        _ = try await app.makeParent(email: "victim@example.com")
        #expect(try await app.send(.POST, "/api/v1/auth/password-reset", json: #"{"email":"victim@example.com"}"#).status == .accepted)
        let body = try await app.sql.raw("SELECT text_body FROM mail_outbox WHERE kind = 'reset'").one().decode(column: "text_body", as: String.self)
        let link = try #require(OutboxController.link(in: body))
        let token = try #require(link.split(separator: "=").last.map(String.init))
        #expect(token.count >= 20)

        let admin = try await app.console(role: .admin)
        let page = try await admin.get("/admin/outbox")
        #expect(page.status == .ok)
        #expect(page.html.contains("victim@example.com") && page.html.contains("Password reset link, works until"))
        #expect(!page.html.contains(token) && !page.html.contains("token=") && !page.html.contains(link))
        #expect(page.headers.first(name: .cacheControl) == "no-store")

        // Delivered: the family's mailbox gets the link; the outbox keeps only the text without it.
        let sink = try await SMTPSink()
        defer { sink.stop() }
        let server = try #require(SMTPServer(url: sink.url))
        try await MailDelivery.pass(database: app.db, client: SMTPClient(server: server, group: app.eventLoopGroup),
                                    from: "hello@storytime.test", retry: 1, clock: app.appServices.clock, logger: app.logger)
        #expect(try await sink.mails(to: "victim@example.com").first?.token == token)
        let stored = try await app.sql.raw("SELECT text_body || html_body AS bodies, display_text FROM mail_outbox WHERE kind = 'reset'").one()
        #expect(try stored.decode(column: "bodies", as: String.self).isEmpty)
        #expect(!(try stored.decode(column: "display_text", as: String.self)).contains(token))
        let after = try await admin.get("/admin/outbox")
        #expect(after.html.contains("Password reset link, works until") && !after.html.contains(token))
    }

    @Test("a read_catalog token reads the catalog only — not families, staff, mail, webhooks, history or the account pages, however the path is spelled", .app)
    func tokenScopesPerRouteGroup() async throws {
        let app = try app()
        let admin = try await app.console(role: .admin)
        let token = try await Self.token(admin, scopes: ["read_catalog"])
        for path in ["/admin", "/admin/books", "/admin/books/export.csv", "/admin/categories", "/admin/publishers", "/admin/rights/calendar"] {
            #expect(try await Self.get(app, path, token: token).status == .ok, "\(path)")
        }
        for path in ["/admin/parents", "/admin/parents/export.csv", "/admin/staff_users", "/admin/staff_users/export.csv", "/admin/outbox",
                     "/admin/webhook_endpoints", "/admin/webhooks/deliveries", "/admin/audit", "/admin/reports/plays", "/admin/reports/searches",
                     "/admin/account", "/admin/account/tokens", "/admin//account/tokens", "/admin//account", "/admin/account//tokens",
                     "/admin/account/two-factor"] {
            #expect(try await Self.get(app, path, token: token).status == .forbidden, "\(path)")
        }
        // Writes need their own scope, on the catalog's lists only.
        let batch = try await Self.token(admin, scopes: ["batch"])
        let parent = try await app.makeParent(email: "family@example.com")
        for path in ["/admin/parents/batch", "/admin/staff_users/batch"] {
            let post = try await app.testing().sendRequest(.POST, path, headers: ["Authorization": "Bearer \(batch)", "Content-Type": "application/x-www-form-urlencoded"],
                                                           body: ByteBuffer(string: "action=lock&ids[]=\(parent.id)"))
            #expect(post.status == .forbidden, "\(path)")
        }
        #expect(try await app.count("SELECT count(*) AS n FROM parents WHERE locked_at IS NOT NULL") == 0)
        #expect(try await app.testing().sendRequest(.POST, "/admin/books/batch", headers: ["Authorization": "Bearer \(token)"]).status == .forbidden)
    }

    @Test("quick search lists staff emails to an admin's signed-in session only, never to a token (an admin's read_catalog token gets no staff, as JSON or page)", .app)
    func quickSearchShowsNoStaffToTokens() async throws {
        let app = try app()
        let admin = try await app.console(role: .admin, email: "boss@storytime.test")
        _ = try await app.console(role: .editor, email: "ed@storytime.test")
        let token = try await Self.token(admin, scopes: ["read_catalog"])
        for accept in ["application/json", "text/html"] {
            let found = try await app.testing().sendRequest(.GET, "/admin/search?q=%40storytime", headers: ["Authorization": "Bearer \(token)", "Accept": accept])
            #expect(found.status == .ok, "\(accept)")
            #expect(!found.body.string.contains("ed@storytime.test") && !found.body.string.contains(accept == "text/html" ? "kind\">Staff user<" : "\"Staff user\""), "\(accept): \(found.body.string.prefix(300))")
        }
        // The admin signed in still finds them.
        let page = try await admin.get("/admin/search?q=%40storytime")
        #expect(page.status == .ok && page.html.contains("ed@storytime.test"))
    }

    @Test("a token acts with the lower of its maker's role then and now, and ends with a password change, a second-factor reset, a demotion and a lock", .app)
    func tokensFollowTheirOwner() async throws {
        let app = try app()
        let admin = try await app.console(role: .admin, email: "boss@storytime.test")
        // An admin's token shows the admin's navigation (so the check below can fail).
        #expect(try await Self.get(app, "/admin/books", token: try await Self.token(admin, scopes: ["read_catalog"])).body.string.contains(#"href="/admin/staff_users""#))

        var editor = try await app.console(role: .editor, email: "ed@storytime.test")
        let id = try await Self.staffID(app, "ed@storytime.test")
        let made = try await Self.token(editor, scopes: ["read_catalog"])
        try await app.sql.raw("UPDATE staff_users SET role = 'admin' WHERE id = \(bind: id)").run()
        let promoted = try await Self.get(app, "/admin/books", token: made)
        #expect(promoted.status == .ok && !promoted.body.string.contains(#"href="/admin/staff_users""#))
        #expect(try await Self.get(app, "/admin/staff_users", token: made).status == .forbidden)
        try await app.sql.raw("UPDATE staff_users SET role = 'editor' WHERE id = \(bind: id)").run()
        #expect(try await Self.get(app, "/admin/books", token: made).status == .unauthorized, "a demotion ends it")

        // A password change (an admin's reset, the owner's own, the command line: all are this update).
        editor = ConsoleClient(app)
        try await editor.signIn("ed@storytime.test")
        var live = try await Self.token(editor, scopes: ["read_catalog"])
        try await app.sql.raw("UPDATE staff_users SET password_hash = \(bind: try "another password".hashedForTests()) WHERE id = \(bind: id)").run()
        #expect(try await Self.get(app, "/admin/books", token: live).status == .unauthorized, "a password change ends it")

        // A second-factor reset by an admin.
        editor = ConsoleClient(app)
        try await editor.signIn("ed@storytime.test", password: "another password")
        live = try await Self.token(editor, scopes: ["read_catalog"])
        try await app.sql.raw("UPDATE staff_users SET totp_secret = 'sealed', totp_enabled_at = now() WHERE id = \(bind: id)").run()
        #expect(try await Self.get(app, "/admin/books", token: live).status == .ok)
        try await admin.get("/admin/staff_users/\(id)/two-factor")
        #expect(try await admin.post("/admin/staff_users/\(id)/two-factor", []).status == .seeOther)
        #expect(try await Self.get(app, "/admin/books", token: live).status == .unauthorized, "a second-factor reset ends it")

        // A lock (an admin's batch action): signed out, tokens ended, no sign-in until unlocked.
        editor = ConsoleClient(app)
        try await editor.signIn("ed@storytime.test", password: "another password")
        live = try await Self.token(editor, scopes: ["read_catalog"])
        try await admin.get("/admin/staff_users")
        #expect(try await admin.post("/admin/staff_users/batch", [("action", "lock"), ("ids[]", String(id))]).status == .seeOther)
        #expect(try await Self.get(app, "/admin/books", token: live).status == .unauthorized, "a lock ends it")
        #expect(try await editor.get("/admin/books").status == .seeOther)
        let again = ConsoleClient(app)
        try await again.get("/admin/login")
        let refused = try await again.post("/admin/login", [("email", "ed@storytime.test"), ("password", "another password")])
        #expect(refused.status == .forbidden && refused.html.contains("locked"))
        #expect(try await app.count("SELECT count(*) AS n FROM staff_api_tokens WHERE revoked_at IS NULL AND staff_user_id = \(bind: id)") == 0)
    }

    @Test("codes typed on the two-factor page spend the staff code budget: after 5 wrong ones the right one is refused (429); `staff unlock` clears it", .app)
    func twoFactorPageCodesAreThrottled() async throws {
        let app = try app()
        let editor = try await app.console(role: .editor, email: "codes@storytime.test")
        let enrol = try await editor.get("/admin/account/two-factor")
        let secret = try ConsoleWorkflowTests.secret(in: enrol.html)
        // Enrolment: wrong codes, then the right one over the budget.
        for _ in 0..<LoginThrottle.perEmail {
            #expect(try await editor.post("/admin/account/two-factor/enable", [("code", "000000")]).status == .badRequest)
        }
        // The app's clock stopped (codes are checked against it): the code stays this step's through the
        // `staff unlock` child process, which a full parallel run on two cores can slow to minutes.
        let step = StaffTOTP.step(at: app.freezeClock())
        let locked = try await editor.post("/admin/account/two-factor/enable", [("code", StaffTOTP.code(secret: secret, step: step))])
        #expect(locked.status == .tooManyRequests && locked.html.contains("Too many wrong codes"))
        #expect(Int(locked.headers.first(name: .retryAfter) ?? "") ?? 0 > 0)
        #expect(try await app.count("SELECT count(*) AS n FROM staff_users WHERE email = 'codes@storytime.test' AND totp_enabled_at IS NOT NULL") == 0)

        // `App staff unlock` ends the code lock-out too.
        let unlock = try CommandLineTests.run(["staff", "unlock", "--email", "codes@storytime.test"], databaseURL: app.settings.databaseURL)
        #expect(unlock.status == 0, "\(unlock.error)")
        #expect(try await editor.post("/admin/account/two-factor/enable", [("code", StaffTOTP.code(secret: secret, step: step))]).status == .ok)

        // New recovery codes: the same budget.
        for _ in 0..<LoginThrottle.perEmail {
            #expect(try await editor.post("/admin/account/two-factor/recovery-codes", [("code", "000000")]).status == .badRequest)
        }
        let before = try await app.sql.raw("SELECT string_agg(code_hash, ',' ORDER BY code_hash) AS codes FROM staff_recovery_codes").one().decode(column: "codes", as: String.self)
        let refused = try await editor.post("/admin/account/two-factor/recovery-codes", [("code", StaffTOTP.code(secret: secret, step: step + 1))])
        #expect(refused.status == .tooManyRequests)
        let after = try await app.sql.raw("SELECT string_agg(code_hash, ',' ORDER BY code_hash) AS codes FROM staff_recovery_codes").one().decode(column: "codes", as: String.self)
        #expect(before == after)
        // The sign-in's second step shares the budget: it is locked too.
        #expect(try await app.count("SELECT count(*) AS n FROM login_throttle WHERE scope = 'staff_code_email' AND key = 'codes@storytime.test' AND attempts > \(bind: LoginThrottle.perEmail)") == 1)
    }

    @Test("a viewer saves private views only (shared needs an editor or an admin); a viewer's old shared view is no longer shown to others", .app)
    func viewersShareNoViews() async throws {
        let app = try app()
        let viewer = try await app.console(role: .viewer)
        let editor = try await app.console(role: .editor)
        try await viewer.get("/admin/books")
        let shared = try await viewer.post("/admin/views", [("resource", "books"), ("name", "Everyone's"), ("query", "q=owl"), ("shared", "on")])
        #expect(shared.status == .seeOther)
        #expect(try await viewer.get(shared.location ?? "/admin/books").html.contains("Viewers save views for themselves only"))
        #expect(try await app.count("SELECT count(*) AS n FROM saved_views WHERE shared") == 0)
        #expect(!(try await viewer.get("/admin/books").html.contains(#"name="shared""#)))
        #expect(try await viewer.post("/admin/views", [("resource", "books"), ("name", "Mine"), ("query", "q=owl")]).status == .seeOther)
        #expect(try await app.count("SELECT count(*) AS n FROM saved_views WHERE NOT shared") == 1)
        // Editors still share.
        try await editor.get("/admin/books")
        #expect(try await editor.post("/admin/views", [("resource", "books"), ("name", "Team view"), ("query", "q=fox"), ("shared", "on")]).status == .seeOther)
        // A shared view whose owner is a viewer now (saved before, or demoted since) is theirs alone.
        try await app.sql.raw("UPDATE saved_views SET shared = true WHERE name = 'Mine'").run()
        let list = try await editor.get("/admin/books").html
        #expect(list.contains("Team view") && !list.contains(">Mine<"))
    }
}
