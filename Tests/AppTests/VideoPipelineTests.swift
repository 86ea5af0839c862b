@testable import App
import Core
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// `POST /webhooks/video`: Standard Webhooks signatures, each webhook-id once, the latest event
/// winning, the catalog following; the console's event history and replay; `App video simulate`.
@Suite("Video pipeline")
struct VideoPipelineTests {
    static func event(_ type: String, book: Int, at time: Date = Date(), data extra: String = "") -> String {
        let stamp = ISO8601DateFormatter.fractional.string(from: time)
        return #"{"type": "video.asset.\#(type)", "timestamp": "\#(stamp)", "data": {"book_id": \#(book), "asset_id": "enc_\#(book)"\#(extra)}}"#
    }

    /// Sends `body` signed with the app's secret (or `secret`), as the pipeline would.
    /// Signed now by the app's clock unless `timestamp` says otherwise.
    static func send(_ app: Application, _ body: String, id: String = "msg_\(UUID().uuidString)", timestamp: Int? = nil,
                     secret: String? = nil, signature: String? = nil) async throws -> TestingHTTPResponse {
        let timestamp = timestamp ?? Int(app.now.timeIntervalSince1970)
        let key = WebhookSignature.key(secret: secret ?? app.settings.videoWebhookSecret)!
        let headers: HTTPHeaders = ["Content-Type": "application/json", "webhook-id": id, "webhook-timestamp": String(timestamp),
                                    "webhook-signature": signature ?? WebhookSignature.sign(id: id, timestamp: timestamp, body: Data(body.utf8), key: key)]
        return try await app.testing().sendRequest(.POST, "/webhooks/video", headers: headers, body: ByteBuffer(string: body))
    }

    static func asset(_ app: Application, book: Int) async throws -> (status: String, duration: Int?, captions: [String], hasCaptions: Bool, reason: String?) {
        let row = try await app.sql.raw("SELECT status, duration_seconds, captions, has_captions, failure_reason FROM video_assets WHERE book_id = \(bind: book)").first()!
        return (try row.decode(column: "status", as: String.self), try row.decode(column: "duration_seconds", as: Int?.self),
                try row.decode(column: "captions", as: [String].self), try row.decode(column: "has_captions", as: Bool.self),
                try row.decode(column: "failure_reason", as: String?.self))
    }

    static func code(_ response: TestingHTTPResponse) -> String? { try? response.json["code"] as? String }
    /// The answer's `Webhook-Outcome`, or (an error) its status and body.
    static func outcome(_ response: TestingHTTPResponse) -> String {
        response.headers.first(name: "Webhook-Outcome") ?? "\(response.status.code) \(response.body.string)"
    }

    @Test("created → processing → ready: the asset, captions by language, the catalog and the audit follow; failed keeps the media", .app)
    func lifecycle() async throws {
        let app = try app()
        let book = try await app.makeBook("Pipeline Pup", video: nil)
        let t0 = Date().addingTimeInterval(-60)
        var response = try await Self.send(app, Self.event("created", book: book, at: t0))
        #expect(response.status == .noContent && response.headers.first(name: "Webhook-Outcome") == "applied")
        #expect(try await Self.asset(app, book: book).status == "pending")
        #expect(try await Self.send(app, Self.event("processing", book: book, at: t0.addingTimeInterval(10))).status == .noContent)
        #expect(try await Self.asset(app, book: book).status == "processing")
        response = try await Self.send(app, Self.event("ready", book: book, at: t0.addingTimeInterval(20),
                                                       data: #", "duration_seconds": 340, "captions": [{"language": "fr"}, {"language": "en"}, {"language": "en"}]"#))
        #expect(response.status == .noContent)
        var asset = try await Self.asset(app, book: book)
        #expect(asset.status == "ready" && asset.duration == 340 && asset.captions == ["en", "fr"] && asset.hasCaptions)
        // The parent API shows it (has_captions: any track).
        let parent = try await app.makeParent()
        let detail = try await app.get("/api/v1/catalog/books/\(book)", token: parent.token).dataObject
        #expect(detail["duration_seconds"] as? Int == 340 && detail["has_captions"] as? Bool == true)
        // Audited as the pipeline, before → after.
        let audits = try await app.sql.raw("""
            SELECT a.staff_email, a.action, a.before->>'status' AS b, a.after->>'status' AS a FROM audit_log a
              JOIN video_assets v ON v.id = a.record_id WHERE a.table_name = 'video_assets' AND v.book_id = \(bind: book) ORDER BY a.id
            """).all()
        #expect(try audits.map { try $0.decode(column: "staff_email", as: String.self) } == Array(repeating: VideoEvents.auditName, count: 3))
        #expect(try audits.map { try $0.decode(column: "action", as: String.self) } == ["pipeline: video.asset.created", "pipeline: video.asset.processing", "pipeline: video.asset.ready"])
        #expect(try audits.last!.decode(column: "b", as: String.self) == "processing" && audits.last!.decode(column: "a", as: String.self) == "ready")
        // A failed re-encode: status and reason, the last ready media kept; the API hides the duration.
        #expect(try await Self.send(app, Self.event("failed", book: book, at: t0.addingTimeInterval(30), data: #", "reason": "corrupt source""#)).status == .noContent)
        asset = try await Self.asset(app, book: book)
        #expect(asset.status == "failed" && asset.reason == "corrupt source" && asset.duration == 340 && asset.captions == ["en", "fr"])
        #expect(try await app.get("/api/v1/catalog/books/\(book)", token: parent.token).dataObject["duration_seconds"] is NSNull)
        // Ready again without captions: has_captions false.
        #expect(try await Self.send(app, Self.event("ready", book: book, at: t0.addingTimeInterval(40), data: #", "duration_seconds": 341"#)).status == .noContent)
        asset = try await Self.asset(app, book: book)
        #expect(asset.status == "ready" && asset.duration == 341 && asset.captions == [] && !asset.hasCaptions && asset.reason == nil)
    }

    @Test("signatures: wrong secret, tampered body, missing headers, stale or future timestamps are refused and change nothing; rotation lists work", .app)
    func signatures() async throws {
        let app = try app()
        let book = try await app.makeBook("Signed Seal", video: "pending", duration: nil)
        let body = Self.event("ready", book: book, data: #", "duration_seconds": 100"#)
        let events = { try await app.count("SELECT count(*) AS n FROM video_events") }
        var response = try await Self.send(app, body, secret: "whsec_" + Data(repeating: 7, count: 32).base64EncodedString())
        #expect(response.status == .unauthorized && Self.code(response) == "invalid_signature")
        #expect(response.headers.contentType?.description.hasPrefix("application/problem+json") == true)
        let key = WebhookSignature.key(secret: app.settings.videoWebhookSecret)!
        // Timestamps from the app's clock, frozen: "stale" is measured from it, not from the wall clock.
        app.appServices.clock.set(to: app.now)
        let now = Int(app.now.timeIntervalSince1970)
        let signedOther = WebhookSignature.sign(id: "msg_x", timestamp: now, body: Data(body.utf8), key: key)
        response = try await Self.send(app, body.replacingOccurrences(of: "100", with: "999"), id: "msg_x", timestamp: now, signature: signedOther)
        #expect(response.status == .unauthorized)
        response = try await Self.send(app, body, timestamp: now - 301)
        #expect(response.status == .badRequest && Self.code(response) == "stale_timestamp")
        response = try await Self.send(app, body, timestamp: now + 301)
        #expect(response.status == .badRequest && Self.code(response) == "stale_timestamp")
        response = try await app.testing().sendRequest(.POST, "/webhooks/video", headers: ["Content-Type": "application/json"], body: ByteBuffer(string: body))
        #expect(response.status == .badRequest && Self.code(response) == "missing_signature")
        #expect(try await events() == 0)
        #expect(try await Self.asset(app, book: book).status == "pending")
        // Several signatures (a secret being rotated): one that matches is enough.
        let id = "msg_rotation"
        let good = WebhookSignature.sign(id: id, timestamp: now, body: Data(body.utf8), key: key)
        response = try await Self.send(app, body, id: id, timestamp: now, signature: "v1,bm90IGl0 v2,abc " + good)
        #expect(response.status == .noContent)
        #expect(try await Self.asset(app, book: book).status == "ready")
        // Signed but malformed: 400 naming the field; an unknown book 422; nothing stored.
        for (json, field) in [(Self.event("exploded", book: book), "type"), (Self.event("ready", book: book), "data.duration_seconds"),
                              (Self.event("ready", book: book, data: #", "duration_seconds": 5, "captions": [{"language": "EN!"}]"#), "data.captions[0].language"),
                              (#"{"type": "video.asset.ready", "timestamp": "yesterday", "data": {}}"#, "timestamp")] {
            response = try await Self.send(app, json)
            #expect(response.status == .badRequest && (try? response.json["field"] as? String) == field, "\(json) \(response.body.string)")
        }
        response = try await Self.send(app, "{\"type\": ,}")
        #expect(response.status == .badRequest && Self.code(response) == "invalid_body")
        response = try await Self.send(app, Self.event("created", book: 9_999_999))
        #expect(response.status == .unprocessableEntity && Self.code(response) == "unknown_book")
        #expect(try await events() == 1)
    }

    @Test("an event stamped more than five minutes ahead is refused and changes nothing (it would win over every later one)", .app)
    func futureEvent() async throws {
        let app = try app()
        let book = try await app.makeBook("Future Fox", video: nil)
        let response = try await Self.send(app, Self.event("ready", book: book, at: Date().addingTimeInterval(3600), data: #", "duration_seconds": 100"#))
        #expect(response.status == .badRequest || response.status == .unprocessableEntity, "\(response.status)")
        #expect(try await app.count("SELECT count(*) AS n FROM video_events WHERE book_id = \(bind: book)") == 0)
        let ok = try await Self.send(app, Self.event("ready", book: book, at: Date().addingTimeInterval(60), data: #", "duration_seconds": 100"#))
        #expect(ok.status == .noContent)
    }

    @Test("each webhook-id once, even sent eight times at once; a late processing after ready is superseded", .app)
    func ordering() async throws {
        let app = try app()
        let book = try await app.makeBook("Order Otter", video: nil)
        let t0 = Date().addingTimeInterval(-120)
        let ready = Self.event("ready", book: book, at: t0.addingTimeInterval(30), data: #", "duration_seconds": 200"#)
        let id = "msg_ready_once"
        let timestamp = Int(Date().timeIntervalSince1970)
        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask { Self.outcome(try await Self.send(app, ready, id: id, timestamp: timestamp)) }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(outcomes.sorted() == ["applied"] + Array(repeating: "duplicate", count: 7), "\(outcomes)")
        #expect(try await app.count("SELECT count(*) AS n FROM video_events WHERE book_id = \(bind: book)") == 1)
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE table_name = 'video_assets' AND staff_email = \(bind: VideoEvents.auditName)") == 1)
        // Sent before "ready", delivered after it: recorded, not applied.
        let late = try await Self.send(app, Self.event("processing", book: book, at: t0.addingTimeInterval(10)))
        #expect(late.status == .noContent && late.headers.first(name: "Webhook-Outcome") == "superseded")
        #expect(try await Self.asset(app, book: book).status == "ready")
        #expect(try await app.count("SELECT count(*) AS n FROM video_events WHERE book_id = \(bind: book) AND outcome = 'superseded'") == 1)
        // The same instant: the later stage wins (ready over processing).
        let same = try await Self.send(app, Self.event("processing", book: book, at: t0.addingTimeInterval(30)))
        #expect(same.headers.first(name: "Webhook-Outcome") == "superseded")
        // A re-encode sent later does win.
        #expect(try await Self.send(app, Self.event("processing", book: book, at: t0.addingTimeInterval(60))).headers.first(name: "Webhook-Outcome") == "applied")
        #expect(try await Self.asset(app, book: book).status == "processing")
    }

    @Test("console: the asset's event history; an admin replays the last event (an editor cannot)", .app)
    func consoleReplay() async throws {
        let app = try app()
        let book = try await app.makeBook("Replay Raccoon", video: nil)
        let t0 = Date().addingTimeInterval(-60)
        #expect(try await Self.send(app, Self.event("processing", book: book, at: t0)).status == .noContent)
        #expect(try await Self.send(app, Self.event("ready", book: book, at: t0.addingTimeInterval(5), data: #", "duration_seconds": 90, "captions": [{"language": "es"}]"#)).status == .noContent)
        let asset = try await app.sql.raw("SELECT id FROM video_assets WHERE book_id = \(bind: book)").first()!.decode(column: "id", as: Int.self)
        // Someone sets it back by hand.
        try await app.sql.raw("UPDATE video_assets SET status = 'pending', duration_seconds = NULL WHERE id = \(bind: asset)").run()
        let editor = try await app.console(role: .editor)
        let page = try await editor.get("/admin/video_assets/\(asset)")
        #expect(page.status == .ok && page.html.contains("Pipeline events") && page.html.contains("video.asset.ready")
                && page.html.contains("video.asset.processing") && page.html.contains("es"))
        #expect(!page.html.contains("Replay last event"))
        #expect(try await editor.get("/admin/video_assets/\(asset)/replay").status == .forbidden)
        #expect(try await editor.post("/admin/video_assets/\(asset)/replay", []).status == .forbidden)
        let admin = try await app.console(role: .admin)
        #expect(try await admin.get("/admin/video_assets/\(asset)").html.contains("Replay last event"))
        let confirm = try await admin.get("/admin/video_assets/\(asset)/replay")
        #expect(confirm.status == .ok && confirm.html.contains("video.asset.ready"))
        #expect(try await admin.post("/admin/video_assets/\(asset)/replay", [], csrf: false).status == .forbidden)
        #expect(try await Self.asset(app, book: book).status == "pending")
        let done = try await admin.post("/admin/video_assets/\(asset)/replay", [])
        #expect(done.status == .seeOther)
        let after = try await Self.asset(app, book: book)
        #expect(after.status == "ready" && after.duration == 90 && after.captions == ["es"])
        let audit = try await app.sql.raw("SELECT staff_email, action FROM audit_log WHERE table_name = 'video_assets' AND record_id = \(bind: asset) ORDER BY id DESC LIMIT 1").first()!
        #expect(try audit.decode(column: "action", as: String.self) == "pipeline replay: video.asset.ready"
                && audit.decode(column: "staff_email", as: String.self).hasPrefix("admin-"))
        #expect(try await app.count("SELECT count(*) AS n FROM video_events WHERE book_id = \(bind: book) AND replayed_at IS NOT NULL") == 1)
    }

    @Test("Standard Webhooks' published example verifies (the specification's test vector)")
    func specificationVector() throws {
        // From the Standard Webhooks reference libraries' tests.
        let key = try #require(WebhookSignature.key(secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let body = #"{"test": 2432232314}"#
        let signature = WebhookSignature.sign(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330, body: Data(body.utf8), key: key)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        try WebhookSignature.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", signatures: signature, body: Data(body.utf8),
                                    key: key, now: Date(timeIntervalSince1970: 1614265330))
        #expect(throws: WebhookSignature.Failure.stale) {
            try WebhookSignature.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", signatures: signature, body: Data(body.utf8), key: key, now: Date())
        }
    }
}
