@testable import App
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Testing
import Vapor
import VaporTesting

@Suite("Console workflows: second factor, review, preview, tokens, webhooks, views")
struct ConsoleWorkflowTests {
    /// The key the enrolment page shows for typing by hand.
    static func secret(in html: String) throws -> [UInt8] {
        guard let range = html.range(of: #"id="totp-secret">"#) else { throw TestFailure("no secret on the page") }
        let text = String(html[range.upperBound...].prefix { $0 != "<" }).replacingOccurrences(of: " ", with: "")
        guard let bytes = Data(base32Encoded: text).map { [UInt8]($0) }, bytes.count == 20 else { throw TestFailure("bad secret \(text)") }
        return bytes
    }

    /// The approve form's field: the content version the book's review page shows now.
    static func shownVersion(_ app: Application, _ book: Int) async throws -> [(String, String)] {
        [("version", String(try await app.count("SELECT content_version AS n FROM books WHERE id = \(bind: book)")))]
    }

    static func value(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: #"name="\#(name)" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    @Test("TOTP matches RFC 6238's SHA-1 test vectors (6 digits) and base32 round-trips")
    func totpVectors() {
        let secret = Array("12345678901234567890".utf8)
        #expect(StaffTOTP.code(secret: secret, step: 59 / 30) == "287082")
        #expect(StaffTOTP.code(secret: secret, step: 1_111_111_109 / 30) == "081804")
        #expect(StaffTOTP.code(secret: secret, step: 2_000_000_000 / 30) == "279037")
        #expect(StaffTOTP.matchingStep(of: "287082", secret: secret, at: Date(timeIntervalSince1970: 59)) == 1)
        #expect(StaffTOTP.matchingStep(of: "287083", secret: secret, at: Date(timeIntervalSince1970: 59)) == nil)
        #expect(Data(secret).base32EncodedString() == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        #expect(Data(base32Encoded: Data(secret).base32EncodedString()).map { [UInt8]($0) } == secret)
    }

    @Test("Enrol with a code, sign in with a code (once), with a recovery code (once); required for admins; an admin resets it")
    func secondFactor() async throws {
        try await withApp(adjust: { $0.staffTwoFactor = .admin }) { app in
            // An admin without a second factor can do nothing but enrol.
            let admin = try await app.console(role: .admin, email: "boss@storytime.test")
            let blocked = try await admin.get("/admin/books")
            #expect(blocked.status == .seeOther && blocked.location == "/admin/account/two-factor")
            let enrol = try await admin.get("/admin/account/two-factor")
            #expect(enrol.html.contains("Your role signs in with a second factor"))
            let secret = try Self.secret(in: enrol.html)
            let qr = try await app.testing().sendRequest(.GET, "/admin/account/two-factor/qr.svg",
                                                         headers: ["Cookie": "\(AdminSession.cookieName)=\(admin.cookie!)"])
            #expect(qr.status == .ok && qr.body.string.contains("<svg"))
            let wrong = try await admin.post("/admin/account/two-factor/enable", [("code", "000000")])
            #expect(wrong.status == .badRequest && wrong.html.contains("does not match"))
            // The app's clock stopped (codes are checked against it): a code is read and checked at one
            // instant, however long the request takes on a loaded machine.
            let step = StaffTOTP.step(at: app.freezeClock())
            let enabled = try await admin.post("/admin/account/two-factor/enable", [("code", StaffTOTP.code(secret: secret, step: step))])
            #expect(enabled.status == .ok)
            let codes = enabled.html.components(separatedBy: "<li><code>").dropFirst().map { String($0.prefix { $0 != "<" }) }
            #expect(codes.count == 10)
            #expect(try await app.count("SELECT count(*) AS n FROM staff_recovery_codes WHERE used_at IS NULL") == 10)
            // Stored sealed, not as the base32 an authenticator shows.
            let stored = try await app.sql.raw("SELECT totp_secret FROM staff_users WHERE email = 'boss@storytime.test'").first()!.decode(column: "totp_secret", as: String.self)
            #expect(!stored.contains(Data(secret).base32EncodedString()))
            #expect(try await admin.get("/admin/books").status == .ok)

            // Sign in again: password, then a code of a later step (the enrolment's step is spent).
            let browser = ConsoleClient(app)
            try await browser.get("/admin/login")
            let second = try await browser.post("/admin/login", [("email", "boss@storytime.test"), ("password", "staff password")])
            #expect(second.status == .ok && second.html.contains("autocomplete=\"one-time-code\""))
            let ticket = try #require(Self.value("ticket", in: second.html))
            let replay = try await browser.post("/admin/login/code", [("ticket", ticket), ("code", StaffTOTP.code(secret: secret, step: step))])
            #expect(replay.status == .unauthorized)
            // Thirty seconds later by the app's clock: the next step's code.
            app.appServices.clock.advance(by: 30)
            let later = step + 1
            let next = try await browser.post("/admin/login/code", [("ticket", ticket), ("code", StaffTOTP.code(secret: secret, step: later))])
            #expect(next.status == .seeOther)
            #expect(try await browser.get("/admin/books").status == .ok)

            // A ticket is bound to its browser.
            let thief = ConsoleClient(app)
            try await thief.get("/admin/login")
            #expect(try await thief.post("/admin/login/code", [("ticket", ticket), ("code", StaffTOTP.code(secret: secret, step: later))]).status == .unauthorized)

            // A recovery code works once, and is audited.
            for attempt in 0..<2 {
                let client = ConsoleClient(app)
                try await client.get("/admin/login")
                let page = try await client.post("/admin/login", [("email", "boss@storytime.test"), ("password", "staff password")])
                let answer = try await client.post("/admin/login/code", [("ticket", Self.value("ticket", in: page.html)!), ("code", codes[0].uppercased())])
                #expect(answer.status == (attempt == 0 ? .seeOther : .unauthorized))
            }
            #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action = 'two-factor: recovery code used'") == 1)

            // The same recovery code sent from two browsers at once signs in one of them.
            var racers: [(cookie: String, csrf: String, ticket: String)] = []
            for _ in 0..<2 {
                let client = ConsoleClient(app)
                try await client.get("/admin/login")
                let page = try await client.post("/admin/login", [("email", "boss@storytime.test"), ("password", "staff password")])
                racers.append((client.cookie!, client.csrf!, Self.value("ticket", in: page.html)!))
            }
            let code = codes[1]
            let raced = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
                for racer in racers {
                    group.addTask {
                        let body = "csrf_token=\(QueryEncoding.encode(racer.csrf))&ticket=\(QueryEncoding.encode(racer.ticket))&code=\(QueryEncoding.encode(code))"
                        return try await app.testing().sendRequest(.POST, "/admin/login/code",
                                                                   headers: ["Cookie": "\(AdminSession.cookieName)=\(racer.cookie)", "Content-Type": "application/x-www-form-urlencoded"],
                                                                   body: ByteBuffer(string: body)).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(raced.sorted { $0.code < $1.code } == [.seeOther, .unauthorized])

            // An admin resets another's; the other signs in with the password alone.
            let editor = try await app.console(role: .editor, email: "ed@storytime.test")
            let editorSecret = try Self.secret(in: try await editor.get("/admin/account/two-factor").html)
            #expect(try await editor.post("/admin/account/two-factor/enable", [("code", StaffTOTP.code(secret: editorSecret, step: StaffTOTP.step(at: app.now)))]).status == .ok)
            let edID = try await app.sql.raw("SELECT id FROM staff_users WHERE email = 'ed@storytime.test'").first()!.decode(column: "id", as: Int.self)
            #expect(try await editor.post("/admin/staff_users/\(edID)/two-factor", []).status == .forbidden)
            #expect(try await admin.post("/admin/staff_users/\(edID)/two-factor", []).status == .seeOther)
            let again = ConsoleClient(app)
            try await again.signIn("ed@storytime.test")
            #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action = 'two-factor: reset by an admin' AND record_id = \(bind: edID)") == 1)
        }
    }

    @Test("Review: only an approved book becomes active, approved by someone else; two approvals at once make one")
    func review() async throws {
        try await withApp(adjust: { $0.consoleReview = true }) { app in
            let editor = try await app.console(role: .editor)
            let other = try await app.console(role: .editor)
            let book = try await app.makeBook("Moon Review", status: "draft")
            // The book's own content (makeBook's author): a different author would be an edit after approval.
            let fields: [(String, String)] = [("title", "Moon Review"), ("author", "Ann Author"), ("description", ""), ("age_min", "3"), ("age_max", "6"),
                                              ("language", "en"), ("cover_image_url", ""), ("publisher_id", ""), ("status", "active")]
            let refused = try await editor.post("/admin/books/\(book)", fields)
            #expect(refused.status == .unprocessableEntity || refused.status == .badRequest)
            #expect(refused.html.contains("needs another editor"))
            // Not through SQL either (imports, batches, reverts go the same way).
            await #expect(throws: (any Error).self) { try await app.sql.raw("UPDATE books SET status = 'active' WHERE id = \(bind: book)").run() }
            // A batch and an import that would make it active change nothing and say why (never a 500).
            let batch = try await editor.post("/admin/books/batch", [("action", "set_status"), ("target_set_status", "active"), ("ids[]", String(book))])
            #expect(batch.status == .seeOther)
            #expect(try await editor.get("/admin/books").html.contains("Nothing changed: This book needs another editor"))
            let uploaded = try await editor.upload("/admin/books/import", file: "books.csv", "Title,Ages from,Ages to,Status\r\nImported Active,2,6,active\r\n")
            let importPath = try #require(uploaded.location)
            let run = try await editor.post(importPath + "/run", [("map_title", "0"), ("map_age_min", "1"), ("map_age_max", "2"), ("map_status", "3")])
            #expect(run.status == .seeOther)
            #expect(try await editor.get(importPath).html.contains("Nothing was imported: some rows would make books active"))
            #expect(try await app.count("SELECT count(*) AS n FROM books WHERE title = 'Imported Active' OR (id = \(bind: book) AND status = 'active')") == 0)

            #expect(try await editor.post("/admin/books/\(book)/review/submit", []).status == .seeOther)
            let queue = try await other.get("/admin/reviews")
            #expect(queue.html.contains("Moon Review"))
            #expect(try await editor.post("/admin/books/\(book)/review/approve", try await ConsoleWorkflowTests.shownVersion(app, book)).status == .conflict)   // not one's own
            #expect(try await other.post("/admin/books/\(book)/review/return", [("comment", "")]).status == .badRequest)

            // Two reviewers at once: one approval lands, the other is told.
            let third = try await app.console(role: .admin)
            let sessions = [(other.cookie!, other.csrf!), (third.cookie!, third.csrf!)]
            let version = try await app.count("SELECT content_version AS n FROM books WHERE id = \(bind: book)")
            let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
                for (cookie, csrf) in sessions {
                    group.addTask {
                        try await app.testing().sendRequest(.POST, "/admin/books/\(book)/review/approve",
                                                            headers: ["Cookie": "\(AdminSession.cookieName)=\(cookie)", "Content-Type": "application/x-www-form-urlencoded"],
                                                            body: ByteBuffer(string: "csrf_token=" + QueryEncoding.encode(csrf) + "&version=\(version)")).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .seeOther }.count == 1 && statuses.contains(.conflict))
            #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action = 'review: approved' AND record_id = \(bind: book)") == 1)

            #expect(try await editor.post("/admin/books/\(book)", fields).status == .seeOther)
            #expect(try await app.sql.raw("SELECT status FROM books WHERE id = \(bind: book)").first()!.decode(column: "status", as: String.self) == "active")

            // Changing an approved draft's content needs approval again.
            let draft = try await app.makeBook("Star Review", status: "draft")
            _ = try await editor.post("/admin/books/\(draft)/review/submit", [])
            _ = try await other.post("/admin/books/\(draft)/review/approve", try await ConsoleWorkflowTests.shownVersion(app, draft))
            try await app.sql.raw("UPDATE books SET title = 'Star Review, revised' WHERE id = \(bind: draft)").run()
            #expect(try await app.sql.raw("SELECT review_state FROM books WHERE id = \(bind: draft)").first()!.decode(column: "review_state", as: String?.self) == nil)
        }
    }

    @Test("Preview as a family: a future date shows a scheduled book, another country loses a territorial one; audited")
    func preview() async throws {
        try await withApp(engine: true) { app in
            let viewer = try await app.console(role: .viewer)
            _ = try await app.makeBook("Always Here")
            let later = try await app.makeBook("Coming Soon")
            try await app.sql.raw("UPDATE books SET publish_at = timestamptz '2031-06-01T00:00Z' WHERE id = \(bind: later)").run()
            let french = try await app.makeBook("Only In France", rights: .none)
            try await app.sql.raw("INSERT INTO rights_windows (book_id, starts_at, territories) VALUES (\(bind: french), now() - interval '1 day', ARRAY['FR'])").run()
            let now = try await viewer.get("/admin/preview?country=FR")
            #expect(now.html.contains("Always Here") && now.html.contains("Only In France") && !now.html.contains("Coming Soon"))
            let future = try await viewer.get("/admin/preview?country=US&date=2031-06-02")
            #expect(future.html.contains("Coming Soon") && future.html.contains("Always Here") && !future.html.contains("Only In France"))
            let search = try await viewer.get("/admin/preview?country=US&date=2031-06-02&q=soon")
            #expect(search.html.contains("Coming Soon") && !search.html.contains("Always Here"))
            #expect(try await viewer.get("/admin/preview?country=XYZ").status == .badRequest)
            #expect(try await viewer.get("/admin/preview?date=2031-02-30").status == .badRequest)
            #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action = 'preview as a family'") == 3)
        }
    }

    @Test("Staff API tokens: shown once, stored hashed, scoped, revocable")
    func apiTokens() async throws {
        try await withApp { app in
            let editor = try await app.console(role: .editor)
            let page = try await editor.post("/admin/account/tokens", [("name", "nightly export"), ("scopes[]", "read_catalog")])
            let token = try #require(page.html.range(of: #"id="new-token">"#).map { String(page.html[$0.upperBound...].prefix { $0 != "<" }) })
            #expect(token.hasPrefix("stk_"))
            #expect(try await app.count("SELECT count(*) AS n FROM staff_api_tokens WHERE token_hash = \(bind: StaffTokens.hash(token))") == 1)
            #expect(!(try await editor.get("/admin/account/tokens").html.contains(token)))
            let bearer: HTTPHeaders = ["Authorization": "Bearer \(token)"]
            let list = try await app.testing().sendRequest(.GET, "/admin/books/export.csv", headers: bearer)
            #expect(list.status == .ok && list.body.string.hasPrefix("id,"))
            // Outside its scopes: refused, nothing changes (and no CSRF token is needed to be refused).
            let batch = try await app.testing().sendRequest(.POST, "/admin/books/batch", headers: bearer)
            #expect(batch.status == .forbidden)
            #expect(try await app.testing().sendRequest(.GET, "/admin/account/tokens", headers: bearer).status == .forbidden)
            #expect(try await app.testing().sendRequest(.GET, "/admin/books", headers: ["Authorization": "Bearer stk_nope"]).status == .unauthorized)
            let id = try await app.sql.raw("SELECT id FROM staff_api_tokens").first()!.decode(column: "id", as: Int.self)
            #expect(try await editor.post("/admin/account/tokens/\(id)/revoke", []).status == .seeOther)
            #expect(try await app.testing().sendRequest(.GET, "/admin/books", headers: bearer).status == .unauthorized)
            #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE table_name = 'staff_api_tokens'") == 2)
        }
    }

    /// A local receiver: fails its first request with 500, then answers 204; keeps what it got.
    final class Receiver: Sendable {
        struct Hit: Sendable { let headers: HTTPHeaders; let body: Data }
        let hits = NIOLockedValueBox<[Hit]>([])
        let server: Application

        init(failFirst: Bool = true) async throws {
            server = try await Application.make(.testing)
            server.logger.logLevel = .warning
            server.http.server.configuration.hostname = "127.0.0.1"
            server.http.server.configuration.port = 0
            let hits = self.hits
            server.post("hook") { req async -> Response in
                let count = hits.withLockedValue { list in
                    list.append(Hit(headers: req.headers, body: Data(req.body.data.map { Array($0.readableBytesView) } ?? [])))
                    return list.count
                }
                return Response(status: failFirst && count == 1 ? .internalServerError : .noContent)
            }
            try await server.server.start(address: .hostname("127.0.0.1", port: 0))
        }

        var url: String { "http://127.0.0.1:\(server.http.server.shared.localAddress!.port!)/hook" }
        func stop() async throws { await server.server.shutdown(); try await server.asyncShutdown() }
    }

    @Test("Webhooks: a book going live is delivered signed, retried after a failure, logged and redelivered")
    func webhooks() async throws {
        try await withApp(adjust: { $0.webhookAllowPrivate = WebhookTargets.localReceiver.policy.allowed }) { app in
            let receiver = try await Receiver()
            do {
                let admin = try await app.console(role: .admin)
                let created = try await admin.post("/admin/webhook_endpoints", [("url", receiver.url), ("description", "test"), ("events", "book.went_live, import.finished"), ("active", "on")])
                #expect(created.status == .seeOther)
                #expect(try await admin.post("/admin/webhook_endpoints", [("url", "ftp://x"), ("events", "")]).html.contains("Enter an http(s) URL."))
                #expect(try await admin.post("/admin/webhook_endpoints", [("url", "https://x.example"), ("events", "book.exploded")]).html.contains("Use event types"))
                let secret = try await app.sql.raw("SELECT secret FROM webhook_endpoints").first()!.decode(column: "secret", as: String.self)
                let book = try await app.makeBook("Hook Book", status: "draft")
                let fields: [(String, String)] = [("title", "Hook Book"), ("author", "Ann"), ("description", ""), ("age_min", "3"), ("age_max", "6"),
                                                  ("language", "en"), ("cover_image_url", ""), ("publisher_id", ""), ("status", "active")]
                #expect(try await admin.post("/admin/books/\(book)", fields).status == .seeOther)
                #expect(try await app.count("SELECT count(*) AS n FROM webhook_deliveries WHERE event_type = 'book.went_live'") == 1)
                // Not subscribed: rights changes.
                try await app.sql.raw("INSERT INTO audit_log (staff_email, kind, action, table_name, record_id, after) VALUES ('x', 'create', 'create', 'rights_windows', 1, jsonb_build_object('book_id', \(bind: book)))").run()
                #expect(try await app.count("SELECT count(*) AS n FROM webhook_deliveries") == 1)

                let client = app.http.client.shared
                // A retry an hour away, so "not due yet" holds however slow the machine; then made due by hand.
                #expect(try await WebhookDelivery.pass(sql: app.sql, client: client, retry: 3600, targets: .localReceiver, clock: app.appServices.clock, logger: app.logger) == 0)
                let failed = try await app.sql.raw("SELECT attempts, last_status, next_attempt_at > now() + interval '59 minutes' AS later FROM webhook_deliveries").first()!
                #expect(try failed.decode(column: "attempts", as: Int.self) == 1 && failed.decode(column: "last_status", as: Int.self) == 500)
                #expect(try failed.decode(column: "later", as: Bool.self))
                #expect(try await WebhookDelivery.pass(sql: app.sql, client: client, retry: 1, targets: .localReceiver, clock: app.appServices.clock, logger: app.logger) == 0)   // not due yet
                try await app.sql.raw("UPDATE webhook_deliveries SET next_attempt_at = now()").run()
                #expect(try await WebhookDelivery.pass(sql: app.sql, client: client, retry: 1, targets: .localReceiver, clock: app.appServices.clock, logger: app.logger) == 1)

                let hits = receiver.hits.withLockedValue { $0 }
                #expect(hits.count == 2)
                let last = try #require(hits.last)
                #expect(last.headers.first(name: "webhook-id") == hits[0].headers.first(name: "webhook-id"))
                try WebhookSignature.verify(id: last.headers.first(name: "webhook-id"), timestamp: last.headers.first(name: "webhook-timestamp"),
                                            signatures: last.headers.first(name: "webhook-signature"), body: last.body,
                                            key: WebhookSignature.key(secret: secret)!, now: app.now)
                let event = try JSONSerialization.jsonObject(with: last.body) as! [String: Any]
                #expect(event["type"] as? String == "book.went_live")
                #expect((event["data"] as? [String: Any])?["book_id"] as? Int == book)

                let log = try await admin.get("/admin/webhooks/deliveries")
                #expect(log.html.contains("book.went_live") && log.html.contains("delivered"))
                let delivery = try await app.sql.raw("SELECT id FROM webhook_deliveries").first()!.decode(column: "id", as: Int.self)
                #expect(try await admin.post("/admin/webhooks/deliveries/\(delivery)/redeliver", []).status == .seeOther)
                #expect(try await WebhookDelivery.pass(sql: app.sql, client: client, retry: 1, targets: .localReceiver, clock: app.appServices.clock, logger: app.logger) == 1)
                #expect(receiver.hits.withLockedValue { $0.count } == 3)
                let editor = try await app.console(role: .editor)
                #expect(try await editor.get("/admin/webhooks/deliveries").status == .forbidden)
            } catch {
                try? await receiver.stop()
                throw error
            }
            try await receiver.stop()
        }
    }

    @Test("Two instances delivering at once send each event once (rows are claimed with SKIP LOCKED and a lease)")
    func concurrentDelivery() async throws {
        try await withTwoApps { one, two in
            let receiver = try await Receiver(failFirst: false)
            do {
                try await one.sql.raw("INSERT INTO webhook_endpoints (url) VALUES (\(bind: receiver.url))").run()
                for n in 0..<30 {
                    try await one.sql.raw("SELECT storytime_webhook_enqueue('import.finished', jsonb_build_object('import_id', \(bind: n)::int))").run()
                }
                let delivered = try await withThrowingTaskGroup(of: Int.self) { group in
                    for app in [one, two, one, two] {
                        group.addTask { try await WebhookDelivery.pass(sql: app.sql, client: app.http.client.shared, retry: 1, targets: .localReceiver, clock: app.appServices.clock, logger: app.logger) }
                    }
                    return try await group.reduce(0, +)
                }
                // Each pass takes up to 20; together they send all 30, none twice.
                #expect(delivered == 30)
                let ids = receiver.hits.withLockedValue { $0.compactMap { $0.headers.first(name: "webhook-id") } }
                #expect(ids.count == 30 && Set(ids).count == 30)
                #expect(try await one.count("SELECT count(*) AS n FROM webhook_deliveries WHERE delivered_at IS NOT NULL AND attempts = 1") == 30)
            } catch {
                try? await receiver.stop()
                throw error
            }
            try await receiver.stop()
        }
    }

    @Test("Saved views keep filters, sort and columns; shared ones show to others; Ctrl-K search finds books, publishers and pages; times in the staff's zone")
    func listsAndSearch() async throws {
        try await withApp { app in
            let editor = try await app.console(role: .editor)
            let publisher = try await app.makePublisher("Walker Books")
            _ = try await app.makeBook("Drafty Moon", status: "draft", publisher: publisher)
            _ = try await app.makeBook("Live Sun")
            let query = "status=draft&sort=title&col=title&col=status"
            let saved = try await editor.post("/admin/views", [("resource", "books"), ("name", "Drafts"), ("query", query), ("shared", "on")])
            #expect(saved.status == .seeOther && saved.location == "/admin/books?" + query)
            let list = try await editor.get("/admin/books?" + query)
            #expect(list.html.contains("aria-current=\"page\">Drafts</a>"))
            #expect(list.html.contains("Drafty Moon") && !list.html.contains("Live Sun"))
            #expect(!list.html.contains(#"<th scope="col">Publisher</th>"#) && list.html.contains(#"<th scope="col">Status</th>"#))
            let other = try await app.console(role: .viewer)
            #expect(try await other.get("/admin/books").html.contains(">Drafts</a>"))
            #expect(try await editor.post("/admin/views", [("resource", "staff_users"), ("name", "x"), ("query", "")]).status == .notFound)

            let search = try await app.testing().sendRequest(.GET, "/admin/search?q=walker", headers: ["Cookie": "\(AdminSession.cookieName)=\(editor.cookie!)", "Accept": "application/json"])
            let results = try search.content.decode([QuickSearchController.Result].self)
            #expect(results.contains { $0.kind == "Publisher" && $0.label == "Walker Books" })
            #expect(try await editor.get("/admin/search?q=moon").html.contains("Drafty Moon"))
            #expect(try await editor.get("/admin/search?q=calendar").html.contains("Rights calendar"))

            // The publisher picker: a name with suggestions, not a select of every publisher.
            let form = try await editor.get("/admin/books/new")
            #expect(form.html.contains(#"data-lookup="/admin/lookup/publishers""#) && !form.html.contains(#"<option value="\#(publisher)""#))
            let suggest = try await app.testing().sendRequest(.GET, "/admin/lookup/publishers?q=walk", headers: ["Cookie": "\(AdminSession.cookieName)=\(editor.cookie!)"])
            #expect(try suggest.content.decode([String].self) == ["Walker Books"])
            let book: [(String, String)] = [("title", "Picked Moon"), ("author", "Ann"), ("description", ""), ("age_min", "3"), ("age_max", "6"),
                                            ("language", "en"), ("cover_image_url", ""), ("status", "draft")]
            let unknown = try await editor.post("/admin/books", book + [("publisher_id", "Nobody Press")])
            #expect(unknown.status == .unprocessableEntity && unknown.html.contains("No publisher is called “Nobody Press”") && unknown.html.contains(#"value="Nobody Press""#))
            let picked = try await editor.post("/admin/books", book + [("publisher_id", "walker books")])
            #expect(picked.status == .seeOther)
            #expect(try await app.count("SELECT count(*) AS n FROM books WHERE title = 'Picked Moon' AND publisher_id = \(bind: publisher)") == 1)
            #expect(try await editor.get(picked.location! + "/edit").html.contains(#"value="Walker Books""#))
            let byName = try await editor.get("/admin/books?publisher=Walker+Books&sort=title")
            #expect(byName.html.contains("Picked Moon") && byName.html.contains("Drafty Moon") && !byName.html.contains("Live Sun"))
            #expect(try await editor.get("/admin/books?publisher=\(publisher)").html.contains(#"value="Walker Books""#))

            let admin = try await app.console(role: .admin)
            #expect(try await admin.post("/admin/account", [("time_zone", "Mars/Olympus"), ("theme", "dark")]).status == .badRequest)
            #expect(try await admin.post("/admin/account", [("time_zone", "Asia/Tokyo"), ("theme", "dark")]).status == .seeOther)
            try await app.sql.raw("UPDATE staff_users SET created_at = timestamptz '2026-01-01T00:00Z'").run()
            let tokyo = try await admin.get("/admin/staff_users")
            #expect(tokyo.html.contains("2026-01-01 09:00") && tokyo.html.contains(#"data-theme="dark""#))
        }
    }
}
