@testable import App
import Foundation
import SQLKit
import Testing
import Vapor

@Suite("Console: reverting a change from the audit log")
struct AuditRevertTests {
    static func bookFields(_ title: String, publisher: Int, categories: [Int]) -> [(String, String)] {
        [("title", title), ("author", "Ann"), ("description", ""), ("age_min", "3"), ("age_max", "6"), ("language", "en"),
         ("cover_image_url", ""), ("publisher_id", String(publisher)), ("status", "active")] + categories.map { ("category_ids[]", String($0)) }
    }

    /// The record's latest audit entry: its id, kind and words.
    static func lastAudit(_ app: Application, table: String, record: Int) async throws -> (id: Int, kind: AuditAction, action: String) {
        let row = try #require(try await AuditQueries.entries(.init(table: table, record: record), limit: 1, offset: 0, on: app.sql).first)
        return (row.id, row.kind, row.action)
    }

    @Test("an edit is reverted field by field as a new audited change; refused when the field changed again since; viewers and forged forms cannot", .app)
    func revertUpdate() async throws {
        let app = try app()
        let publisher = try await app.makePublisher("Walker")
        let moon = try await app.makeCategory("Moon", slug: "moon"), sea = try await app.makeCategory("Sea", slug: "sea")
        let client = try await app.console()
        let created = try await client.post("/admin/books", Self.bookFields("Moon Boat", publisher: publisher, categories: [moon]))
        #expect(created.status == .seeOther)
        let book = try await app.count("SELECT max(id) AS n FROM books")
        #expect(try await client.post("/admin/books/\(book)", Self.bookFields("Sun Boat", publisher: publisher, categories: [sea])).status == .seeOther)
        let edit = try await Self.lastAudit(app, table: "books", record: book)
        #expect(edit.kind == .update && edit.action == "update")
        // The audit log offers it; the confirmation says what will happen.
        #expect(try await client.get("/admin/audit?table=books&record=\(book)").html.contains("/admin/audit/\(edit.id)/revert"))
        let confirm = try await client.get("/admin/audit/\(edit.id)/revert")
        #expect(confirm.status == .ok && confirm.html.contains("category_ids, title"))
        // A viewer cannot; a form without the CSRF token is refused.
        let viewer = try await app.console(role: .viewer, email: "viewer@storytime.test")
        #expect(try await viewer.get("/admin/audit/\(edit.id)/revert").status == .forbidden)
        #expect(!(try await viewer.get("/admin/audit?table=books&record=\(book)").html.contains("/revert")))
        #expect(try await client.post("/admin/audit/\(edit.id)/revert", [], csrf: false).status == .forbidden)
        let reverted = try await client.post("/admin/audit/\(edit.id)/revert", [])
        #expect(reverted.status == .seeOther)
        #expect(try await app.sql.raw("SELECT title FROM books WHERE id = \(bind: book)").first()!.decode(column: "title", as: String.self) == "Moon Boat")
        #expect(try await app.count("SELECT count(*) AS n FROM book_categories WHERE book_id = \(bind: book) AND category_id = \(bind: moon)") == 1)
        #expect(try await app.count("SELECT count(*) AS n FROM book_categories WHERE book_id = \(bind: book)") == 1)
        let revert = try await Self.lastAudit(app, table: "books", record: book)
        #expect(revert.kind == .revert && revert.action == "revert #\(edit.id)")
        // The parent API sees the reverted title at once.
        let parent = try await app.makeParent()
        let detail = try await app.get("/api/v1/catalog/books/\(book)", token: parent.token)
        #expect(try detail.json["data"].flatMap { ($0 as? [String: Any])?["title"] as? String } == "Moon Boat")
        // Changed again since: the older change is refused, nothing changes.
        #expect(try await client.post("/admin/books/\(book)", Self.bookFields("Star Boat", publisher: publisher, categories: [moon])).status == .seeOther)
        let second = try await Self.lastAudit(app, table: "books", record: book)
        #expect(try await client.post("/admin/books/\(book)", Self.bookFields("Comet Boat", publisher: publisher, categories: [moon])).status == .seeOther)
        let refused = try await client.post("/admin/audit/\(second.id)/revert", [])
        #expect(refused.status == .conflict && refused.html.contains("Changed again since: title"))
        #expect(try await app.sql.raw("SELECT title FROM books WHERE id = \(bind: book)").first()!.decode(column: "title", as: String.self) == "Comet Boat")
        // An entry that does not exist, or that a revert cannot undo, is a 404.
        #expect(try await client.get("/admin/audit/999999/revert").status == .notFound)
    }

    @Test("a deleted book is restored with its id, values and categories; a created publisher is deleted again (warned when in use); a rights window's edit is reverted", .app)
    func restoreAndUndoCreate() async throws {
        let app = try app()
        let publisher = try await app.makePublisher("Walker")
        let moon = try await app.makeCategory("Moon", slug: "moon")
        let book = try await app.makeBook("Owl Moon", publisher: publisher, categories: [moon])
        let client = try await app.console()
        #expect(try await client.post("/admin/books/\(book)/delete", []).status == .seeOther)
        #expect(try await app.count("SELECT count(*) AS n FROM books WHERE id = \(bind: book)") == 0)
        let deletion = try await Self.lastAudit(app, table: "books", record: book)
        #expect(deletion.kind == .delete && deletion.action == "delete")
        #expect(try await client.post("/admin/audit/\(deletion.id)/revert", []).status == .seeOther)
        #expect(try await app.sql.raw("SELECT title FROM books WHERE id = \(bind: book)").first()?.decode(column: "title", as: String.self) == "Owl Moon")
        #expect(try await app.count("SELECT count(*) AS n FROM book_categories WHERE book_id = \(bind: book) AND category_id = \(bind: moon)") == 1)
        // Restoring twice: it exists again, refused.
        #expect(try await client.post("/admin/audit/\(deletion.id)/revert", []).status == .conflict)

        // A publisher created by mistake is deleted again; when a book uses it, the confirmation
        // warns as the publisher's own delete does, and the book keeps no publisher.
        let made = try await client.post("/admin/publishers", [("name", "Oops Press")])
        #expect(made.status == .seeOther, "\(made.status) \(made.html.prefix(3000))")
        let oops = try #require(try await app.sql.raw("SELECT id FROM publishers WHERE name = 'Oops Press'").first()?.decode(column: "id", as: Int.self))
        let creation = try await Self.lastAudit(app, table: "publishers", record: oops)
        #expect(creation.kind == .create && creation.action == "create")
        let user = try await app.makeBook("Uses Oops", publisher: oops)
        let warned = try await client.get("/admin/audit/\(creation.id)/revert")
        #expect(warned.status == .ok && warned.html.contains(#"class="warning""#) && warned.html.contains("1 book"))
        #expect(try await client.post("/admin/audit/\(creation.id)/revert", []).status == .seeOther)
        #expect(try await app.count("SELECT count(*) AS n FROM publishers WHERE id = \(bind: oops)") == 0)
        #expect(try await app.count("SELECT count(*) AS n FROM books WHERE id = \(bind: user) AND publisher_id IS NULL") == 1)
        // Undone twice: already gone.
        #expect(try await client.post("/admin/audit/\(creation.id)/revert", []).status == .conflict)

        // A rights window (nested under its book) moved by a day, moved back.
        let window = try await app.count("SELECT id AS n FROM rights_windows WHERE book_id = \(bind: book)")
        let originalStart = try await app.sql.raw("SELECT starts_at FROM rights_windows WHERE id = \(bind: window)").first()!.decode(column: "starts_at", as: Date.self)
        try await client.get("/admin/books/\(book)/rights_windows/\(window)/edit")
        #expect(try await client.post("/admin/books/\(book)/rights_windows/\(window)", [("starts_at", "2020-01-01T00:00"), ("ends_at", "")]).status == .seeOther)
        let move = try await Self.lastAudit(app, table: "rights_windows", record: window)
        #expect(move.kind == .update && move.action == "update")
        #expect(try await client.post("/admin/audit/\(move.id)/revert", []).status == .seeOther)
        let restoredStart = try await app.sql.raw("SELECT starts_at FROM rights_windows WHERE id = \(bind: window)").first()!.decode(column: "starts_at", as: Date.self)
        #expect(abs(restoredStart.timeIntervalSince(originalStart)) < 0.001)
    }

    @Test("the kind decides what is undone: a revert is itself reverted; an import's change is neither offered nor undone", .app)
    func byKind() async throws {
        let app = try app()
        let publisher = try await app.makePublisher("Walker")
        let book = try await app.makeBook("Kind Boat", publisher: publisher)
        let client = try await app.console()
        #expect(try await client.post("/admin/books/\(book)", Self.bookFields("Kinder Boat", publisher: publisher, categories: [])).status == .seeOther)
        let edit = try await Self.lastAudit(app, table: "books", record: book)
        #expect(try await client.post("/admin/audit/\(edit.id)/revert", []).status == .seeOther)
        let revert = try await Self.lastAudit(app, table: "books", record: book)
        #expect(revert.kind == .revert)
        #expect(try await client.get("/admin/audit?table=books&record=\(book)").html.contains("/admin/audit/\(revert.id)/revert"))
        #expect(try await client.post("/admin/audit/\(revert.id)/revert", []).status == .seeOther)
        #expect(try await app.sql.raw("SELECT title FROM books WHERE id = \(bind: book)").first()!.decode(column: "title", as: String.self) == "Kinder Boat")
        #expect(try await Self.lastAudit(app, table: "books", record: book).action == "revert #\(revert.id)")
        // An import's change of the same book, before and after as an edit's: not a revert's to undo.
        try await app.sql.raw("""
            INSERT INTO audit_log (staff_email, kind, action, table_name, record_id, before, after)
            VALUES ('x', 'import', 'import #1', 'books', \(bind: book), '{"title": "Kinder Boat"}', '{"title": "Kindest Boat"}')
            """).run()
        let imported = try await Self.lastAudit(app, table: "books", record: book)
        #expect(imported.kind == .import)
        #expect(!(try await client.get("/admin/audit?table=books&record=\(book)").html.contains("/admin/audit/\(imported.id)/revert")))
        #expect(try await client.get("/admin/audit/\(imported.id)/revert").status == .notFound)
        #expect(try await client.post("/admin/audit/\(imported.id)/revert", []).status == .notFound)
    }
}
