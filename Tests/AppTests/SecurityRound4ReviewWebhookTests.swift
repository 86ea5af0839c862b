@testable import App
import Core
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Testing
import Vapor
import VaporTesting

extension WebhookTargets {
    /// The local receivers of the webhook tests (127.0.0.1), allowed as WEBHOOK_ALLOW_PRIVATE would.
    static let localReceiver = WebhookTargets(allowing: [IPRange("127.0.0.1/32")!])
}

/// Security round 4 (issue 43), findings 4 and 5: review that one editor could get round, and
/// webhooks sent inside the network (SSRF).
@Suite("Security round 4: review and webhooks")
struct SecurityRound4ReviewWebhookTests {
    static let fields: [(String, String)] = [("author", "Ann Author"), ("description", ""), ("age_min", "3"), ("age_max", "6"),
                                             ("language", "en"), ("cover_image_url", ""), ("publisher_id", "")]

    static func form(_ title: String, status: String) -> [(String, String)] { [("title", title), ("status", status)] + fields }

    static func book(_ app: Application, _ id: Int) async throws -> (title: String, status: String, review: String?) {
        let row = try await app.sql.raw("SELECT title, status, review_state FROM books WHERE id = \(bind: id)").first()!
        return (try row.decode(column: "title", as: String.self), try row.decode(column: "status", as: String.self),
                try row.decode(column: "review_state", as: String?.self))
    }

    static func version(_ app: Application, _ id: Int) async throws -> Int {
        try await app.sql.raw("SELECT content_version FROM books WHERE id = \(bind: id)").first()!.decode(column: "content_version", as: Int.self)
    }

    // MARK: Finding 4: review

    @Test("an approved draft edited and made active in one save is refused; a live book's content no longer changes without review")
    func approvedThenEditedIsNotLive() async throws {
        try await withApp(adjust: { $0.consoleReview = true }) { app in
            let author = try await app.console(role: .editor), reviewer = try await app.console(role: .editor)
            let book = try await app.makeBook("Quiet Fox", status: "draft")
            #expect(try await author.post("/admin/books/\(book)/review/submit", []).status == .seeOther)
            #expect(try await reviewer.post("/admin/books/\(book)/review/approve", try await ConsoleWorkflowTests.shownVersion(app, book)).status == .seeOther)

            // The attack: new text and "active" in the same save.
            let bypass = try await author.post("/admin/books/\(book)", Self.form("Loud Fox, rewritten", status: "active"))
            #expect(bypass.status == .unprocessableEntity)
            #expect(bypass.html.contains("needs another editor"))
            #expect(try await Self.book(app, book) == ("Quiet Fox", "draft", "approved"))

            // The approved content goes live; then its text cannot change while live, by any path.
            #expect(try await author.post("/admin/books/\(book)", Self.form("Quiet Fox", status: "active")).status == .seeOther)
            #expect(try await Self.book(app, book) == ("Quiet Fox", "active", "approved"))
            #expect(try await author.post("/admin/books/\(book)", Self.form("Loud Fox", status: "active")).status == .unprocessableEntity)
            await #expect(throws: (any Error).self) { try await app.sql.raw("UPDATE books SET description = 'new words' WHERE id = \(bind: book)").run() }
            #expect(try await Self.book(app, book) == ("Quiet Fox", "active", "approved"))

            // As a draft it can change; the approval ends with the change.
            #expect(try await author.post("/admin/books/\(book)", Self.form("Quiet Fox", status: "draft")).status == .seeOther)
            #expect(try await author.post("/admin/books/\(book)", Self.form("Loud Fox", status: "draft")).status == .seeOther)
            #expect(try await Self.book(app, book) == ("Loud Fox", "draft", nil))
            // Writing 'approved' is no approval: only the pending → approved step by a reviewer is.
            try await app.sql.raw("UPDATE books SET review_state = 'approved' WHERE id = \(bind: book)").run()
            #expect(try await Self.book(app, book).review == nil)
        }
    }

    @Test("nobody approves what they rewrote or submitted since the last approval, nor content newer than their page showed")
    func rewriteThenApproveIsRefused() async throws {
        try await withApp(adjust: { $0.consoleReview = true }) { app in
            let author = try await app.console(role: .editor), rewriter = try await app.console(role: .editor)
            let third = try await app.console(role: .admin)
            let book = try await app.makeBook("Small Owl", status: "draft")
            #expect(try await author.post("/admin/books/\(book)/review/submit", []).status == .seeOther)

            // Another editor rewrites the pending submission, then approves it: refused, and the
            // page offers them no Approve button.
            #expect(try await rewriter.post("/admin/books/\(book)", Self.form("Small Owl, my words", status: "draft")).status == .seeOther)
            #expect(!(try await rewriter.get("/admin/books/\(book)/review").html.contains(">Approve<")))
            #expect(try await rewriter.post("/admin/books/\(book)/review/approve", try await ConsoleWorkflowTests.shownVersion(app, book)).status == .conflict)
            #expect(try await Self.book(app, book).review == "pending")
            // Not by SQL either: the trigger holds the rule.
            let rewriterID = try await app.sql.raw("SELECT staff_user_id FROM audit_log WHERE action = 'update' AND record_id = \(bind: book)").first()!
                .decode(column: "staff_user_id", as: Int.self)
            await #expect(throws: (any Error).self) {
                try await app.sql.raw("UPDATE books SET review_state = 'approved', reviewed_by = \(bind: rewriterID) WHERE id = \(bind: book)").run()
            }

            // A reviewer approves the version their page showed, not an edit made since.
            let shown = try await Self.version(app, book)
            #expect(try await third.get("/admin/books/\(book)/review").html.contains(#"name="version" value="\#(shown)""#))
            #expect(try await author.post("/admin/books/\(book)", Self.form("Small Owl, later words", status: "draft")).status == .seeOther)
            // An approval that names no version (a hand-made form) approves nothing.
            #expect(try await third.post("/admin/books/\(book)/review/approve", []).status == .badRequest)
            #expect(try await third.post("/admin/books/\(book)/review/approve", [("version", String(shown))]).status == .conflict)
            #expect(try await third.post("/admin/books/\(book)/review/approve", [("version", String(shown + 1))]).status == .seeOther)
            #expect(try await Self.book(app, book) == ("Small Owl, later words", "draft", "approved"))
        }
    }

    @Test("an edit and an approval released together are decided once: never an approval of the new text by its writer")
    func editAndApproveRace() async throws {
        try await withApp(adjust: { $0.consoleReview = true }) { app in
            let author = try await app.console(role: .editor), rogue = SecurityRound3Tests.Signed(try await app.console(role: .editor))
            for round in 0..<6 {
                let book = try await app.makeBook("Race \(round)", status: "draft")
                #expect(try await author.post("/admin/books/\(book)/review/submit", []).status == .seeOther)
                let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
                    group.addTask { try await rogue.post("/admin/books/\(book)", Self.form("Race \(round), rewritten", status: "draft")).status }
                    group.addTask { try await rogue.post("/admin/books/\(book)/review/approve", try await ConsoleWorkflowTests.shownVersion(app, book)).status }
                    return try await group.reduce(into: [HTTPStatus]()) { $0.append($1) }
                }
                #expect(!statuses.contains(.internalServerError), "\(statuses)")
                let state = try await Self.book(app, book)
                #expect(state.title == "Race \(round), rewritten")
                #expect(state.review != "approved", "round \(round): \(statuses)")
            }
        }
    }

    // MARK: Finding 5: webhooks

    /// A local receiver: `hook` answers 204, `redirect` sends to `landing`; keeps what it got.
    final class Receiver: Sendable {
        let hits = NIOLockedValueBox<[(path: String, host: String?)]>([])
        let server: Application

        init() async throws {
            server = try await Application.make(.testing)
            server.logger.logLevel = .warning
            let hits = self.hits
            for path in ["hook", "landing"] {
                server.post(.constant(path)) { req async -> HTTPStatus in
                    hits.withLockedValue { $0.append((path, req.headers.first(name: .host))) }
                    return .noContent
                }
            }
            server.post("redirect") { req async -> Response in
                hits.withLockedValue { $0.append(("redirect", req.headers.first(name: .host))) }
                return Response(status: .temporaryRedirect, headers: ["Location": "/landing"])
            }
            try await server.server.start(address: .hostname("127.0.0.1", port: 0))
        }

        var port: Int { server.http.server.shared.localAddress!.port! }
        func url(_ path: String, host: String = "127.0.0.1") -> String { "http://\(host):\(port)/\(path)" }
        func stop() async throws { await server.server.shutdown(); try await server.asyncShutdown() }
    }

    /// Runs `body` with a receiver that is stopped however `body` ends.
    static func withReceiver(_ body: (Receiver) async throws -> Void) async throws {
        let receiver = try await Receiver()
        do { try await body(receiver) } catch { try? await receiver.stop(); throw error }
        try await receiver.stop()
    }

    static func enqueue(_ app: Application, to url: String) async throws {
        try await app.sql.raw("INSERT INTO webhook_endpoints (url) VALUES (\(bind: url))").run()
        try await app.sql.raw("SELECT storytime_webhook_enqueue('import.finished', jsonb_build_object('import_id', 1))").run()
    }

    @Test("the endpoint form refuses loopback, private, link-local, reserved, [::1], numeric spellings and names resolving inside")
    func formRefusesInsideTargets() async throws {
        try await withApp { app in
            let admin = try await app.console(role: .admin)
            let inside = ["http://127.0.0.1:8080/hook", "http://[::1]/", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.5/",
                          "http://172.16.3.4/", "http://192.168.1.1/", "http://100.64.0.1/", "http://0.0.0.0:5432/", "http://224.0.0.1/",
                          "http://255.255.255.255/", "http://2130706433/", "http://0x7f.1/", "http://0177.0.0.1:22/", "http://[::ffff:127.0.0.1]/",
                          "http://[64:ff9b::a9fe:a9fe]/", "http://[fd00::1]/", "http://[fe80::1]/", "http://[::]/", "http://localhost:5432/",
                          "https://user@LocalHost/x"]
            for url in inside {
                let page = try await admin.post("/admin/webhook_endpoints", [("url", url), ("events", "")])
                #expect(page.status == .unprocessableEntity, "\(url)")
                #expect(page.html.contains("public internet only"), "\(url)")
            }
            #expect(try await admin.post("/admin/webhook_endpoints", [("url", "http://1.2.3.256/"), ("events", "")]).html.contains("plain IP address"))
            #expect(try await app.count("SELECT count(*) AS n FROM webhook_endpoints") == 0)
            // A public address is accepted as before.
            #expect(try await admin.post("/admin/webhook_endpoints", [("url", "https://93.184.215.14/hook"), ("events", "")]).status == .seeOther)
        }
    }

    @Test("each delivery checks its address again: an inside endpoint is never contacted, and open and closed ports log the same")
    func deliveryRefusesInsideTargets() async throws {
        try await withApp { app in
            try await Self.withReceiver { receiver in
                // Rows written before the fix (or by SQL) still point inside.
                try await Self.enqueue(app, to: receiver.url("hook"))
                try await Self.enqueue(app, to: "http://127.0.0.1:9/hook")   // nothing listens
                let targets = WebhookTargets(allowing: app.settings.webhookAllowPrivate)
                #expect(try await WebhookDelivery.pass(sql: app.sql, client: app.http.client.shared, retry: 3600, targets: targets, clock: app.appServices.clock, logger: app.logger) == 0)
                #expect(receiver.hits.withLockedValue { $0.count } == 0)
                let rows = try await app.sql.raw("SELECT last_status, last_error FROM webhook_deliveries WHERE attempts = 1").all()
                let answers = try rows.map { "\(try $0.decode(column: "last_status", as: Int?.self).map(String.init) ?? "-") \(try $0.decode(column: "last_error", as: String?.self) ?? "-")" }
                #expect(answers.count >= 2 && Set(answers).count == 1, "\(answers)")
                let log = try await app.console(role: .admin).get("/admin/webhooks/deliveries").html
                #expect(!log.contains("refused (errno") && !log.contains("Connection refused") && !log.contains("HTTP 204"))
            }
        }
    }

    @Test("a delivery follows no redirect, and connects to the very address it checked (no second lookup)")
    func noRedirectsNoRebinding() async throws {
        try await withApp { app in
            try await Self.withReceiver { receiver in
                try await Self.enqueue(app, to: receiver.url("redirect"))
                #expect(try await WebhookDelivery.pass(sql: app.sql, client: app.http.client.shared, retry: 3600, targets: .localReceiver, clock: app.appServices.clock, logger: app.logger) == 0)
                #expect(receiver.hits.withLockedValue { $0.map(\.path) } == ["redirect"])
                #expect(try await app.count("SELECT count(*) AS n FROM webhook_deliveries WHERE last_status = 307 AND delivered_at IS NULL") == 1)
                try await app.sql.raw("DELETE FROM webhook_endpoints").run()

                // A name only this resolver knows: delivered, so the connection went to the address
                // checked, with the name kept in Host.
                let name = "hooks.storytime.invalid"
                let fixed = WebhookTargets(allowing: [IPRange("127.0.0.1/32")!], resolve: { host in host == name ? [IPAddress("127.0.0.1")!] : [] })
                try await Self.enqueue(app, to: receiver.url("hook", host: name))
                #expect(try await WebhookDelivery.pass(sql: app.sql, client: app.http.client.shared, retry: 3600, targets: fixed, clock: app.appServices.clock, logger: app.logger) == 1)
                #expect(receiver.hits.withLockedValue { $0.last?.host } == "\(name):\(receiver.port)")
                // A name with one answer inside (among public ones) is refused, allow-list or not.
                try await app.sql.raw("DELETE FROM webhook_endpoints").run()
                let mixed = WebhookTargets(allowing: [], resolve: { _ in [IPAddress("93.184.215.14")!, IPAddress("127.0.0.1")!] })
                try await Self.enqueue(app, to: receiver.url("hook", host: name))
                #expect(try await WebhookDelivery.pass(sql: app.sql, client: app.http.client.shared, retry: 3600, targets: mixed, clock: app.appServices.clock, logger: app.logger) == 0)
                #expect(receiver.hits.withLockedValue { $0.count } == 2)
            }
        }
    }

    @Test("WEBHOOK_ALLOW_PRIVATE takes CIDR ranges and refuses anything else at start-up")
    func allowPrivateSetting() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID())").path
        let secrets = ["DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": String(repeating: "j", count: 32),
                       "SESSION_SECRET": String(repeating: "s", count: 40), "PLAYBACK_SIGNING_KEY": String(repeating: "p", count: 40),
                       "VIDEO_WEBHOOK_SECRET": String(repeating: "v", count: 40), "STAFF_2FA_KEY": String(repeating: "t", count: 40)]
        let loaded = try Settings.load(environment: .production, values: secrets.merging(["WEBHOOK_ALLOW_PRIVATE": "10.0.0.0/8, 127.0.0.1/32"]) { $1 }, directory: folder)
        #expect(loaded.webhookAllowPrivate == [IPRange("10.0.0.0/8")!, IPRange("127.0.0.1")!])
        #expect(try Settings.load(environment: .production, values: secrets, directory: folder).webhookAllowPrivate.isEmpty)
        for bad in ["10.0.0.1/8", "localhost", "10/8x"] {
            #expect(throws: Settings.Invalid.self) {
                try Settings.load(environment: .production, values: secrets.merging(["WEBHOOK_ALLOW_PRIVATE": bad]) { $1 }, directory: folder)
            }
        }
    }
}
