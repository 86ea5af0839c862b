@testable import App
import Foundation
import SQLKit
import Testing
import Vapor

/// Scheduled publishing: an active book is in the parent catalog only inside its schedule —
/// explicit times, or its rights windows (`auto_publish`) — evaluated against the clock.
@Suite struct ScheduledPublishingTests {
    static func titles(_ app: Application, _ token: String) async throws -> Set<String> {
        Set(try await app.get("/api/v1/catalog/books", token: token).dataArray.compactMap { $0["title"] as? String })
    }

    @Test("explicit times: not yet, live, ended — in lists, detail and library adds, on the engine and on SQL, changing at the instant with no job", .app(engine: true))
    func explicitTimes() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let soon = try await app.makeBook("Goes Live Later")
        let instant = try await app.makeBook("Goes Live In A Moment")
        let ended = try await app.makeBook("Already Ended")
        let running = try await app.makeBook("Running Now")
        // The app's clock, stopped; the instant comes by moving it (the app binds its clock into the statements).
        let clock = app.appServices.clock
        clock.set(to: app.now)
        let now = app.now, day: TimeInterval = 86_400
        try await app.sql.raw("UPDATE books SET publish_at = \(bind: now.addingTimeInterval(3600)) WHERE id = \(bind: soon)").run()
        try await app.sql.raw("UPDATE books SET publish_at = \(bind: now.addingTimeInterval(2)) WHERE id = \(bind: instant)").run()
        try await app.sql.raw("UPDATE books SET publish_at = \(bind: now.addingTimeInterval(-2 * day)), unpublish_at = \(bind: now.addingTimeInterval(-day)) WHERE id = \(bind: ended)").run()
        try await app.sql.raw("UPDATE books SET publish_at = \(bind: now.addingTimeInterval(-day)), unpublish_at = \(bind: now.addingTimeInterval(day)) WHERE id = \(bind: running)").run()
        let version = try await app.count("SELECT version AS n FROM catalog_state")
        for engine in [true, false] {
            app.settings.catalogEngine = engine
            #expect(try await Self.titles(app, parent.token).subtracting(["Goes Live In A Moment"]) == ["Running Now"], "engine \(engine)")
            #expect(try await app.get("/api/v1/catalog/books/\(soon)", token: parent.token).status == .notFound, "engine \(engine)")
            #expect(try await app.get("/api/v1/catalog/books/\(ended)", token: parent.token).status == .notFound, "engine \(engine)")
        }
        app.settings.catalogEngine = true
        let early = try await app.send(.POST, "/api/v1/children/\(parent.children[0])/library", token: parent.token, json: #"{"book_id": \#(soon)}"#)
        #expect(early.status == .notFound)
        // Nothing is written when the instant comes (the catalog version stays): the next answer
        // simply includes the book, in the engine that loaded it before its time as in SQL.
        clock.advance(by: 2.2)
        #expect(try await app.count("SELECT version AS n FROM catalog_state") == version)
        for engine in [true, false] {
            app.settings.catalogEngine = engine
            #expect(try await Self.titles(app, parent.token) == ["Running Now", "Goes Live In A Moment"], "engine \(engine)")
        }
        app.settings.catalogEngine = true
        let added = try await app.send(.POST, "/api/v1/children/\(parent.children[0])/library", token: parent.token, json: #"{"book_id": \#(instant)}"#)
        #expect(added.status == .created)
        // The audit log records each transition once, however often (and on however many instances) it runs.
        #expect(try await ScheduleAudit.record(on: app.sql, at: app.now) == 4)   // three went live, one left
        #expect(try await ScheduleAudit.record(on: app.sql, at: app.now) == 0)
        let actions = try await app.sql.raw("SELECT action FROM audit_log WHERE record_id = \(bind: ended) ORDER BY id").all().map { try $0.decode(column: "action", as: String.self) }
        #expect(actions == ["scheduled: went live", "scheduled: left the catalog"])
    }

    @Test("auto_publish follows the rights windows: live from the first start to the last end, recomputed when a window changes", .app(engine: true))
    func withRights() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let book = try await app.makeBook("Follows Its Rights", rights: .none)
        try await app.sql.raw("UPDATE books SET auto_publish = true WHERE id = \(bind: book)").run()
        #expect(try await Self.titles(app, parent.token).isEmpty)   // no window: not live
        try await app.sql.raw("INSERT INTO rights_windows (book_id, starts_at, ends_at) VALUES (\(bind: book), now() + interval '3 days', now() + interval '9 days')").run()
        #expect(try await Self.titles(app, parent.token).isEmpty)
        let bounds = try await app.sql.raw("SELECT live_from > now() AS later, live_until > live_from AS ordered FROM books WHERE id = \(bind: book)").first()!
        #expect(try bounds.decode(column: "later", as: Bool.self) && bounds.decode(column: "ordered", as: Bool.self))
        try await app.sql.raw("INSERT INTO rights_windows (book_id, starts_at) VALUES (\(bind: book), now() - interval '1 day')").run()
        for engine in [true, false] {
            app.settings.catalogEngine = engine
            #expect(try await Self.titles(app, parent.token) == ["Follows Its Rights"], "engine \(engine)")
        }
        try await app.sql.raw("DELETE FROM rights_windows WHERE book_id = \(bind: book) AND ends_at IS NULL").run()
        app.settings.catalogEngine = true
        #expect(try await Self.titles(app, parent.token).isEmpty)

        // The console: the form refuses an end before the start; the book page says scheduled.
        let client = try await app.console(role: .editor)
        let page = try await client.get("/admin/books/\(book)").html
        #expect(page.contains("badge-scheduled") && page.contains("With its rights: live from "))
        let form = try await client.get("/admin/books/\(book)/edit")
        #expect(form.status == .ok)
        let bad = try await client.post("/admin/books/\(book)", [("title", "Follows Its Rights"), ("age_min", "0"), ("age_max", "8"), ("language", "en"),
                                                                  ("status", "active"), ("publish_at", "2027-02-01T00:00"), ("unpublish_at", "2027-01-01T00:00")])
        #expect(bad.status == .unprocessableEntity && bad.html.contains("Leaving must come after going live."))
    }
}
