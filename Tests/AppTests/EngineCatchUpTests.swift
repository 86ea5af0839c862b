@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// What a catch-up shows: the category names a change brings, read again only when a category changed.
@Suite("Engine catch-up")
struct EngineCatchUpTests {
    @Test("freshness: a category renamed, then a book changed alone (the names known are reused), then a category added with a book in it in one change", .app)
    func categoryNamesAcrossChanges() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let bedtime = try await app.makeCategory("Bedtime", slug: "bedtime", order: 1)
        let owl = try await app.makeBook("Owl Moon", categories: [bedtime])
        let bear = try await app.makeBook("Bear Snores", categories: [bedtime])
        try await app.appServices.catalogEngine.build(on: app.db)
        func names(_ id: Int) async throws -> [String] {
            let book = try await app.get("/api/v1/catalog/books/\(id)", token: parent.token).json["data"] as? [String: Any]
            return (book?["categories"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }
        func ids(inCategory category: String) async throws -> [Int] {
            try await app.get("/api/v1/catalog/books?category=\(category)", token: parent.token).dataArray.compactMap { $0["id"] as? Int }
        }
        #expect(try await names(owl) == ["Bedtime"])
        try await app.sql.raw("UPDATE categories SET name = 'Sleepy Time' WHERE id = \(bind: bedtime)").run()
        #expect(try await names(owl) == ["Sleepy Time"])
        try await app.sql.raw("UPDATE books SET title = 'Bear Snores On' WHERE id = \(bind: bear)").run()
        let versionBefore = app.appServices.catalogEngine.currentVersion
        #expect(try await names(bear) == ["Sleepy Time"])
        #expect(app.appServices.catalogEngine.currentVersion > versionBefore)
        // One statement, one transaction: the category's row and the book's in one catch-up.
        try await app.sql.raw("""
            WITH c AS (INSERT INTO categories (name, slug, display_order) VALUES ('Animals', 'animals', 2) RETURNING id)
            INSERT INTO book_categories (book_id, category_id) SELECT \(bind: owl), id FROM c
            """).run()
        #expect(try await names(owl) == ["Sleepy Time", "Animals"])
        #expect(try await ids(inCategory: "animals") == [owl])
        #expect(try await names(bear) == ["Sleepy Time"])
    }
}
