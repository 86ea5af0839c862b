@testable import App
import Foundation
import SQLKit
import Testing
import Vapor

/// Security round 4 (issue 43), finding 4 continued: with review on, everything families see of a
/// book is reviewed content — its uploaded cover, its categories and its publisher as well as its
/// text (`migrations/0036`): refused on a live book, the end of an approval on an approved draft,
/// on every write path.
@Suite("Security round 4: review holds covers, categories and publishers")
struct SecurityRound4ReviewContentTests {
    /// What families see of a book, and its review.
    struct Seen: Decodable, Equatable {
        let status: String
        let review_state: String?
        let content_version: Int
        let publisher_id: Int?
        let categories: [Int]
        let cover: String?
    }

    static func seen(_ app: Application, _ book: Int) async throws -> Seen {
        try await app.sql.raw("""
            SELECT b.status, b.review_state, b.content_version, b.publisher_id,
                   ARRAY(SELECT bc.category_id FROM book_categories bc WHERE bc.book_id = b.id ORDER BY bc.category_id) AS categories,
                   (SELECT c.api_json FROM book_covers c WHERE c.book_id = b.id) AS cover
              FROM books b WHERE b.id = \(bind: book)
            """).first(decoding: Seen.self)!
    }

    static func form(_ title: String, status: String, publisher: Int? = nil, categories: [Int] = []) -> [(String, String)] {
        [("title", title), ("author", "Ann Author"), ("description", ""), ("age_min", "3"), ("age_max", "6"), ("language", "en"),
         ("cover_image_url", ""), ("publisher_id", publisher.map(String.init) ?? ""), ("status", status)]
            + categories.map { ("category_ids[]", String($0)) }
    }

    /// `author` submits the book, `reviewer` approves it; then, when `live`, it is made active.
    static func approve(_ app: Application, _ book: Int, author: ConsoleClient, reviewer: ConsoleClient, live: Bool) async throws {
        #expect(try await author.post("/admin/books/\(book)/review/submit", []).status == .seeOther)
        #expect(try await reviewer.post("/admin/books/\(book)/review/approve", try await ConsoleWorkflowTests.shownVersion(app, book)).status == .seeOther)
        if live { try await app.sql.raw("UPDATE books SET status = 'active' WHERE id = \(bind: book)").run() }
    }

    static let coverHeld = "cover changes only as a draft that is approved again"

    @Test("with review on, a live book's cover is neither replaced nor removed: the cover page says why, nothing is written")
    func liveCoverIsHeld() async throws {
        try await withApp(adjust: { $0.consoleReview = true }) { app in
            let author = try await app.console(role: .editor), reviewer = try await app.console(role: .editor)
            let book = try await app.makeBook("Blue Whale", status: "draft")
            // A draft's cover is written freely, and reviewed with the book.
            #expect(try await CoverTests.upload(author, book: book, try await CoverTests.image(400, 600)).status == .seeOther)
            try await Self.approve(app, book, author: author, reviewer: reviewer, live: true)
            let approved = try await Self.seen(app, book)
            #expect(approved.status == "active" && approved.review_state == "approved" && approved.cover != nil)

            let replaced = try await CoverTests.upload(author, book: book, try await CoverTests.image(500, 500, rgb: (10, 200, 30)))
            #expect(replaced.status == .conflict)
            #expect(replaced.html.contains(Self.coverHeld))
            let removed = try await author.post("/admin/books/\(book)/cover/remove", [])
            #expect(removed.status == .conflict)
            #expect(removed.html.contains(Self.coverHeld))
            #expect(try await Self.seen(app, book) == approved)
            #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE record_id = \(bind: book) AND action LIKE 'cover %'") == 1)
            // Not through SQL either.
            await #expect(throws: (any Error).self) { try await app.sql.raw("DELETE FROM book_covers WHERE book_id = \(bind: book)").run() }
            #expect(try await Self.seen(app, book) == approved)
        }
    }

    @Test("a cover changed after the approval ends it: the book is not made active until someone who did not change it approves again")
    func coverAfterApprovalNeedsANewOne() async throws {
        try await withApp(adjust: { $0.consoleReview = true }) { app in
            let author = try await app.console(role: .editor), reviewer = try await app.console(role: .editor)
            let third = try await app.console(role: .editor)
            let book = try await app.makeBook("Green Frog", status: "draft")
            try await Self.approve(app, book, author: author, reviewer: reviewer, live: false)
            let approved = try await Self.seen(app, book)
            #expect(approved.review_state == "approved")

            // The reviewer uploads a different cover to the approved draft (the book stays a draft).
            #expect(try await CoverTests.upload(reviewer, book: book, try await CoverTests.image(300, 450)).status == .seeOther)
            let changed = try await Self.seen(app, book)
            #expect(changed.status == "draft" && changed.review_state == nil && changed.content_version == approved.content_version + 1)
            let refused = try await author.post("/admin/books/\(book)", Self.form("Green Frog", status: "active"))
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains("needs another editor"))
            #expect(try await Self.seen(app, book).status == "draft")

            // Approved again — not by who submitted it, nor by who changed its cover.
            #expect(try await author.post("/admin/books/\(book)/review/submit", []).status == .seeOther)
            #expect(try await reviewer.post("/admin/books/\(book)/review/approve", try await ConsoleWorkflowTests.shownVersion(app, book)).status == .conflict)
            #expect(try await author.post("/admin/books/\(book)/review/approve", try await ConsoleWorkflowTests.shownVersion(app, book)).status == .conflict)
            #expect(try await third.post("/admin/books/\(book)/review/approve", try await ConsoleWorkflowTests.shownVersion(app, book)).status == .seeOther)
            #expect(try await author.post("/admin/books/\(book)", Self.form("Green Frog", status: "active")).status == .seeOther)
            let live = try await Self.seen(app, book)
            #expect(live.status == "active" && live.review_state == "approved" && live.cover == changed.cover)
        }
    }

    @Test("with review on, a live book's categories and publisher do not change (a save that keeps them goes through); on an approved draft a change ends the approval")
    func categoriesAndPublisherAreContent() async throws {
        try await withApp(adjust: { $0.consoleReview = true }) { app in
            let author = try await app.console(role: .editor), reviewer = try await app.console(role: .editor)
            let calm = try await app.makeCategory("Calm", slug: "calm"), scary = try await app.makeCategory("Scary", slug: "scary")
            let gentle = try await app.makePublisher("Gentle Press"), grim = try await app.makePublisher("Grim Press")
            let book = try await app.makeBook("Red Kite", status: "draft", publisher: gentle, categories: [scary])
            try await Self.approve(app, book, author: author, reviewer: reviewer, live: true)
            let approved = try await Self.seen(app, book)

            #expect(try await author.post("/admin/books/\(book)", Self.form("Red Kite", status: "active", publisher: gentle, categories: [scary])).status == .seeOther)
            for (publisher, categories) in [(gentle, [calm]), (gentle, []), (gentle, [calm, scary]), (grim, [scary]), (nil, [scary])] {
                let page = try await author.post("/admin/books/\(book)", Self.form("Red Kite", status: "active", publisher: publisher, categories: categories))
                #expect(page.status == .unprocessableEntity, "\(String(describing: publisher)) \(categories)")
                #expect(page.html.contains("needs another editor"))
            }
            #expect(try await Self.seen(app, book) == approved)
            await #expect(throws: (any Error).self) {
                try await app.sql.raw("DELETE FROM book_categories WHERE book_id = \(bind: book)").run()
            }
            await #expect(throws: (any Error).self) { try await app.sql.raw("UPDATE books SET publisher_id = \(bind: grim) WHERE id = \(bind: book)").run() }
            #expect(try await Self.seen(app, book) == approved)

            // An approved draft: a category change ends the approval, and its maker may not approve it.
            let draft = try await app.makeBook("Grey Seal", status: "draft", categories: [calm])
            try await Self.approve(app, draft, author: author, reviewer: reviewer, live: false)
            #expect(try await reviewer.post("/admin/books/\(draft)", Self.form("Grey Seal", status: "draft", categories: [calm, scary])).status == .seeOther)
            #expect(try await Self.seen(app, draft).review_state == nil)
            #expect(try await author.post("/admin/books/\(draft)/review/submit", []).status == .seeOther)
            #expect(try await reviewer.post("/admin/books/\(draft)/review/approve", try await ConsoleWorkflowTests.shownVersion(app, draft)).status == .conflict)
        }
    }

    @Test("with review on, a batch or an import changing live books' categories changes nothing and says why; an import that keeps them goes through")
    func batchAndImportAreHeld() async throws {
        try await withApp(adjust: { $0.consoleReview = true }) { app in
            let author = try await app.console(role: .editor), reviewer = try await app.console(role: .editor)
            let calm = try await app.makeCategory("Calm", slug: "calm"), scary = try await app.makeCategory("Scary", slug: "scary")
            var books: [Int] = []
            for title in ["Swan", "Heron"] {
                let book = try await app.makeBook(title, status: "draft", categories: [calm])
                try await Self.approve(app, book, author: author, reviewer: reviewer, live: true)
                books.append(book)
            }
            let approved = try await Self.seen(app, books[0])

            for (action, category) in [("add_category", scary), ("remove_category", calm)] {
                let batch = try await author.post("/admin/books/batch", [("action", action), ("target_\(action)", String(category))] + books.map { ("ids[]", String($0)) })
                #expect(batch.status == .seeOther)
                #expect(try await author.get("/admin/books").html.contains("Nothing changed: This book needs another editor"), "\(action)")
            }
            for book in books { #expect(try await Self.seen(app, book) == approved) }

            // An import: the same categories are no change; another one is refused whole.
            try await app.sql.raw("UPDATE books SET external_id = 'LIVE-' || id WHERE id = ANY(\(bind: books)::bigint[])").run()
            let mapping = [("map_title", "0"), ("map_external_id", "1"), ("map_categories", "2")]
            for (categories, refused) in [("calm", false), ("calm;scary", true)] {
                let csv = "Title,ISBN,Category\r\nSwan,LIVE-\(books[0]),\(categories)\r\n"
                let importPath = try #require(try await author.upload("/admin/books/import", file: "books.csv", csv).location)
                #expect(try await author.post(importPath + "/run", mapping).status == .seeOther)
                #expect(try await author.get(importPath).html.contains("Nothing was imported") == refused, "\(categories)")
                #expect(try await Self.seen(app, books[0]) == approved)
            }
        }
    }
}
