@testable import App
import Core
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// The engine's carry end to end: the same searches and browses asked again after each of many
/// real changes (the kinds the console and the pipeline make), by a parent in a country some
/// books are not licensed in and for their child with controls, answered by the engine — from
/// what it kept through the change — exactly as the SQL path answers them.
@Suite("Engine carry")
struct EngineCarryTests {
    @Test("an answer, expansion or highlight computed while a change is planned (at the old version, unchecked) is not kept through it", .app)
    func computedWhilePlanning() async throws {
        let app = try app()
        let engine = app.appServices.catalogEngine
        let parent = try await app.makeParent()
        let owl = try await app.makeBook("Owl Moon")
        try await app.makeBook("Owl Babies")
        try await app.makeBook("Bear Snores")
        try await engine.build(on: app.db)
        func titles(_ query: String) async throws -> [String] {
            try await app.get("/api/v1/catalog/books?\(query)", token: parent.token).dataArray.compactMap { $0["title"] as? String }.sorted()
        }
        // Kept before the change: an answer the change reaches (planned to go) and one it does not.
        #expect(try await titles("q=bear") == ["Bear Snores"])
        let queries = ["q=owl", "q=owl&age=4", "q=moo", ""]
        engine.afterPlanning.withLockedValue {
            $0 = { for query in queries { _ = engine.page(try! CatalogParameters(QueryParameters(query: query)), now: Date()) } }
        }
        try await app.sql.raw("UPDATE books SET title = 'Cat Nap' WHERE id = \(bind: owl)").run()
        #expect(try await titles("q=owl") == ["Owl Babies"])
        #expect(try await titles("q=owl&age=4") == ["Owl Babies"])
        #expect(try await titles("q=moo").isEmpty)
        #expect(try await titles("q=cat") == ["Cat Nap"])
        #expect(try await titles("").count == 3)
        #expect(try await titles("q=bear") == ["Bear Snores"])
        let page = try await app.get("/api/v1/catalog/books?q=owl", token: parent.token)
        let highlights = (try page.json["meta"] as? [String: Any])?["highlights"] as? [Any]
        let shown = try page.dataArray.count
        #expect(highlights?.count == 1 && shown == 1)   // one per book shown
        engine.afterPlanning.withLockedValue { $0 = nil }
    }

    @Test("after 30 random changes of 10 kinds, 25 kept queries × the parent's catalog and a child's answer as the SQL does", .app)
    func keptThroughChanges() async throws {
        let app = try app()
        let seeder = DemoSeeder(books: 1200, reference: Date().addingTimeInterval(-400 * 86400), seedsDirectory: TestDatabase.projectDirectory + "seeds",
                                hashPassword: { try $0.hashedForTests() })
        _ = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in }
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent(country: "JP")
        let child = parent.children[0]
        let (words, slugs, categoryIDs, publishers) = try await CatalogEngineTests.vocabulary(app)
        #expect(try await FamilyControlsTests.put(app, child, #"{"max_age": 8, "blocked_categories": [\#(categoryIDs[0])]}"#, token: parent.token).status == .ok)
        var random = CatalogEngineTests.Random(state: 20261127)
        let queries = (0..<25).map { _ in CatalogEngineTests.randomQuery(&random, words: words, slugs: slugs, categoryIDs: categoryIDs, publishers: publishers) }
        var seen: [Int] = []
        var compared = 0, kinds: [Int: Int] = [:]
        for round in 0...30 {
            if round > 0 {
                // A book a kept answer showed, half the time.
                let book = !seen.isEmpty && random.chance(50) ? random.pick(seen) : random.int(1...1200)
                let word = random.pick(words)
                let kind = random.int(0...9)
                kinds[kind, default: 0] += 1
                let change: SQLQueryString = switch kind {
                case 0: "UPDATE books SET updated_at = now() WHERE id = \(bind: book)"
                case 1: "UPDATE books SET cover_image_url = 'https://example.com/covers/' || id || '-' || \(bind: round) WHERE id = \(bind: book)"
                case 2: "UPDATE books SET description = description || ' ' || \(bind: word) WHERE id = \(bind: book)"
                case 3: "UPDATE books SET title = title || ' ' || \(bind: word) WHERE id = \(bind: book)"
                case 4: "UPDATE books SET status = CASE status WHEN 'active' THEN 'archived' ELSE 'active' END WHERE id = \(bind: book) AND status <> 'draft'"
                case 5: "INSERT INTO book_categories (book_id, category_id) VALUES (\(bind: book), \(bind: random.pick(categoryIDs))) ON CONFLICT DO NOTHING"
                case 6: "UPDATE rights_windows SET exclude_territories = CASE WHEN exclude_territories = '{}' THEN '{JP}'::text[] ELSE '{}'::text[] END WHERE book_id = \(bind: book)"
                case 7: "UPDATE books SET live_until = now() - interval '1 day' WHERE id = \(bind: book)"
                case 8: "UPDATE books SET age_min = 0, age_max = least(18, age_max + 3) WHERE id = \(bind: book)"
                default: "UPDATE rights_windows SET ends_at = now() + interval '3 years' WHERE book_id = \(bind: book) AND ends_at IS NULL"
                }
                try await app.sql.raw(change).run()
            }
            for query in queries {
                for path in ["/api/v1/catalog/books?" + query, "/api/v1/catalog/books?" + query + "&child_id=\(child)"] {
                    let (sql, engine) = try await CatalogEngineTests.both(app, path, token: parent.token)
                    #expect(sql.status == .ok && engine.status == .ok, "\(path)")
                    let a = try CatalogEngineTests.jsonObject(sql), b = try CatalogEngineTests.jsonObject(engine)
                    #expect(a == b, "round \(round), \(path)\nSQL:    \(sql.body.string.prefix(400))\nengine: \(engine.body.string.prefix(400))")
                    compared += 1
                    if round == 0 { seen += ((try? engine.dataArray) ?? []).compactMap { $0["id"] as? Int } }
                }
            }
        }
        #expect(compared == 31 * 50 && seen.count > 50 && kinds.count >= 8, "\(compared) compared, \(seen.count) books seen, kinds \(kinds)")
    }
}
