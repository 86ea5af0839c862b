@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// The catalog cache must never serve what the database no longer says.
@Suite("Catalog cache invalidation")
struct CatalogCacheTests {
    static func titles(_ app: Application, _ token: String, _ query: String = "") async throws -> [String] {
        try await app.get("/api/v1/catalog/books\(query)", token: token).dataArray.map { $0["title"] as! String }
    }

    @Test("a repeated page is served from memory with one statement; a write through SQL shows up on the next request", arguments: [false, true])
    func sqlWrite(engine: Bool) async throws {
        try await withApp(engine: engine) { app in
            let parent = try await app.makeParent()
            let book = try await app.makeBook("Owl Moon")
            #expect(try await Self.titles(app, parent.token) == ["Owl Moon"])
            let hit = try await app.countQueries { _ = try await app.get("/api/v1/catalog/books", token: parent.token) }
            #expect(hit == 1)
            // as psql would: rename, add, hide
            try await app.sql.raw("UPDATE books SET title = 'Owl Night' WHERE id = \(bind: book)").run()
            #expect(try await Self.titles(app, parent.token) == ["Owl Night"])
            try await app.makeBook("Bear Day")
            let page = try await app.get("/api/v1/catalog/books", token: parent.token)
            #expect(try page.meta["total_count"] == 2)
            try await app.sql.raw("UPDATE books SET status = 'draft' WHERE id = \(bind: book)").run()
            #expect(try await Self.titles(app, parent.token) == ["Bear Day"])
            #expect(try await app.get("/api/v1/catalog/books/\(book)", token: parent.token).status == .notFound)
            // a category rename reaches cached books and the categories list
            let category = try await app.makeCategory("Night", slug: "night")
            try await app.sql.raw("INSERT INTO book_categories (book_id, category_id) SELECT id, \(bind: category) FROM books").run()
            _ = try await app.get("/api/v1/catalog/categories")
            try await app.sql.raw("UPDATE categories SET name = 'Nighttime' WHERE id = \(bind: category)").run()
            let names = try await app.get("/api/v1/catalog/categories").dataArray.map { $0["name"] as! String }
            #expect(names == ["Nighttime"])
            let first = try await app.get("/api/v1/catalog/books", token: parent.token).dataArray.first
            #expect(((first?["categories"] as? [[String: Any]])?.first?["name"] as? String) == "Nighttime")
        }
    }

    @Test("a change made in the console shows up in the next API response", arguments: [false, true])
    func consoleWrite(engine: Bool) async throws {
        try await withApp(engine: engine) { app in
            let parent = try await app.makeParent()
            let books = [try await app.makeBook("Alpha"), try await app.makeBook("Beta")]
            #expect(try await app.get("/api/v1/catalog/books", token: parent.token).meta["total_count"] == 2)
            let console = try await app.console()
            try await console.post("/admin/books/batch", [("action", "set_status"), ("target_set_status", "archived"), ("ids[]", String(books[0]))])
            #expect(try await Self.titles(app, parent.token) == ["Beta"])
        }
    }

    @Test("a change made through another app instance shows up in the next response of this one", arguments: [false, true])
    func secondInstance(engine: Bool) async throws {
        try await withTwoApps(engine: engine) { first, second in
            let parent = try await first.makeParent()
            let book = try await first.makeBook("Alpha")
            let detail = try await first.get("/api/v1/catalog/books/\(book)", token: parent.token).dataObject
            #expect(detail["duration_seconds"] as? Int == 300)
            let console = try await second.console()
            let saved = try await console.post("/admin/video_assets/\(book)", [("book_id", String(book)), ("status", "ready"),
                                                                              ("duration_seconds", "125"), ("has_captions", "on")])
            #expect(saved.status == .seeOther)
            let after = try await first.get("/api/v1/catalog/books/\(book)", token: parent.token).dataObject
            #expect(after["duration_seconds"] as? Int == 125)
        }
    }

    @Test("one console session across instances: signed in on A, a book edited through B with the same cookie, the change in A's API at once")
    func sessionAcrossInstances() async throws {
        try await withTwoApps(engine: true) { a, b in
            let parent = try await a.makeParent()
            let book = try await a.makeBook("Owl Moon", ages: 3...6)
            let onA = try await a.console(role: .editor)
            let onB = ConsoleClient(b)
            onB.cookie = onA.cookie
            let form = try await onB.get("/admin/books/\(book)/edit")   // B knows the session A created; its form carries the same CSRF token
            #expect(form.status == .ok && onB.csrf == onA.csrf)
            let fields: [(String, String)] = [("title", "Owl Moon Rising"), ("author", "Ann Author"), ("description", ""), ("age_min", "3"),
                                              ("age_max", "6"), ("language", "en"), ("cover_image_url", ""), ("publisher_id", ""), ("status", "active")]
            #expect(try await onB.post("/admin/books/\(book)", fields).status == .seeOther)
            #expect(try await a.get("/api/v1/catalog/books/\(book)", token: parent.token).dataObject["title"] as? String == "Owl Moon Rising")
            #expect(try await a.get("/api/v1/catalog/books?q=rising", token: parent.token).meta["total_count"] == 1)
            // Signing out on B ends the session on A too.
            #expect(try await onB.post("/admin/logout", []).status == .seeOther)
            #expect(try await onA.get("/admin").status == .seeOther)
        }
    }

    @Test("rights availability flips when a window starts or ends, without any write", arguments: [false, true])
    func rightsOverTime(engine: Bool) async throws {
        try await withApp(engine: engine) { app in
            let parent = try await app.makeParent()
            let starting = try await app.makeBook("Starting", rights: .none)
            let ending = try await app.makeBook("Ending", rights: .none)
            // The app's clock, stopped: the answers are judged at known instants, and the boundary
            // is crossed by moving the clock, not by waiting for it.
            let clock = app.appServices.clock
            clock.set(to: app.now)
            let boundary = app.now.addingTimeInterval(4)
            try await app.sql.raw("""
                INSERT INTO rights_windows (book_id, starts_at, ends_at) VALUES
                    (\(bind: starting), \(bind: boundary), NULL),
                    (\(bind: ending), \(bind: boundary.addingTimeInterval(-86_400)), \(bind: boundary))
                """).run()
            func rights() async throws -> [String: Bool] {
                let data = try await app.get("/api/v1/catalog/books", token: parent.token).dataArray
                return Dictionary(uniqueKeysWithValues: data.map { ($0["title"] as! String, $0["rights_available"] as! Bool) })
            }
            // Before the boundary.
            for _ in 0..<2 {   // the second is served from the cache
                #expect(try await rights() == ["Starting": false, "Ending": true])
            }
            clock.advance(by: 4.5)
            #expect(try await rights() == ["Starting": true, "Ending": false])
            #expect(try await rights() == ["Starting": true, "Ending": false])
        }
    }
}

@Suite("Catalog cache under concurrency")
struct CatalogCacheConcurrencyTests {
    @Test("concurrent requests never see data older than a change committed before they arrived", arguments: [false, true])
    func concurrent(engine: Bool) async throws {
        try await withApp(engine: engine) { app in
            let parent = try await app.makeParent()
            let book = try await app.makeBook("Before")
            _ = try await app.get("/api/v1/catalog/books", token: parent.token)
            try await app.sql.raw("UPDATE books SET title = 'After' WHERE id = \(bind: book)").run()
            var titles: [[String]] = []
            let statements = try await app.countQueries {
                titles = try await withThrowingTaskGroup(of: [String].self) { group in
                    for _ in 0..<24 {
                        group.addTask { try await CatalogCacheTests.titles(app, parent.token) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(titles.count == 24 && titles.allSatisfy { $0 == ["After"] })
            // SQL: never more than a version read, a count, a page and two facet statements each;
            // engine: version reads and one catch-up (the change log and the changed books).
            #expect(statements <= (engine ? 24 + 3 : 24 * 5))
        }
    }
}
