@testable import App
import Foundation
import SQLKit
import Testing
import Vapor

@Suite("Console: deleting a category audits each book it leaves")
struct CategoryDeleteAuditTests {
    /// A row of the audit log about a book or a category.
    struct Entry: Decodable { let tableName: String; let recordId: Int; let kind: String; let before: String?; let after: String?; let createdAt: Date }

    @Test("each book that loses the category gets an update entry (categories before → after), in the delete's transaction; other books none", .app)
    func deleteCategory() async throws {
        let app = try app()
        let moon = try await app.makeCategory("Moon", slug: "moon"), sea = try await app.makeCategory("Sea", slug: "sea")
        let owl = try await app.makeBook("Owl Moon", categories: [moon])
        let boat = try await app.makeBook("Moon Boat", categories: [moon, sea])
        let fish = try await app.makeBook("Fish Tale", categories: [sea])
        let client = try await app.console()
        let since = try await app.count("SELECT COALESCE(max(id), 0) AS n FROM audit_log")
        #expect(try await client.post("/admin/categories/\(moon)/delete", []).status == .seeOther)
        #expect(try await app.count("SELECT count(*) AS n FROM categories WHERE id = \(bind: moon)") == 0)
        let entries = try await app.sql.raw("""
            SELECT table_name, record_id, kind, before::text AS before, after::text AS after, created_at FROM audit_log WHERE id > \(bind: since) ORDER BY id
            """).all(decoding: Entry.self, keyDecodingStrategy: .convertFromSnakeCase)
        #expect(entries.map { "\($0.tableName) \($0.recordId) \($0.kind)" } == ["categories \(moon) delete", "books \(owl) update", "books \(boat) update"])
        #expect(!entries.contains { $0.recordId == fish && $0.tableName == "books" })
        // Each book's entry says what it lost, as any change of a book does (`category_ids`).
        func categories(_ json: String?) throws -> [Int] {
            let object = try JSONSerialization.jsonObject(with: Data((json ?? "{}").utf8)) as? [String: Any]
            return (object?["category_ids"] as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.intValue }
        }
        let books = entries.filter { $0.tableName == "books" }
        #expect(try books.map { try categories($0.before) } == [[moon], [moon, sea].sorted()])
        #expect(try books.map { try categories($0.after) } == [[], [sea]])
        // One transaction: every entry carries the transaction's time.
        #expect(Set(entries.map(\.createdAt)).count == 1)
        // The book's page in the audit log lists it.
        #expect(try await client.get("/admin/audit?table=books&record=\(boat)").html.contains("update"))
    }
}
