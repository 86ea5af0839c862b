@testable import App
import Foundation
import PostgresNIO
import SQLKit
import Testing
import Vapor

/// Every console write of a book — the form, batch actions, review steps, the import, a revert, a
/// cover — goes through the books' `ResourceStore.audited`: snapshots, the change and one typed
/// audit row in one transaction, at no more statements than each path sent on its own.
@Suite("Console: books written through one path")
struct BookWritePathTests {
    static func staff(_ app: Application, _ role: StaffRole = .editor) async throws -> StaffUser {
        let email = "\(role.rawValue)-\(UUID().uuidString.prefix(6))@storytime.test"
        let id = try await Accounts.createStaff(email: email, passwordHash: try "staff password".hashedForTests(), role: role, on: app.sql)
        return StaffUser(id: id, email: email, role: role)
    }

    static func cover(_ app: Application, book: Int, width: Int = 10) async throws {
        try await app.sql.raw("""
            INSERT INTO book_covers (book_id, width, height, dominant_color, files, api_json)
            VALUES (\(bind: book), \(bind: width), 10, '#000000', '{a.webp}', '{}')
            ON CONFLICT (book_id) DO UPDATE SET width = EXCLUDED.width
            """).run()
    }

    struct Entry: Decodable { let kind: String; let before: String?; let after: String? }

    static func audit(_ app: Application, book: Int) async throws -> [Entry] {
        try await app.sql.raw("SELECT kind, before::text, after::text FROM audit_log WHERE table_name = 'books' AND record_id = \(bind: book) ORDER BY id")
            .all(decoding: Entry.self)
    }

    @Test("a review step and a cover's removal: one typed audit row each with the path's own snapshot, at the statements they sent before", .app)
    func reviewAndCoverStatements() async throws {
        let app = try app()
        let (writer, reviewer) = (try await Self.staff(app), try await Self.staff(app))
        let book = try await app.makeBook("One Path", status: "draft")
        let counter = app.appServices.queryCounter
        // In a transaction of its own, as the console runs each (BEGIN and COMMIT are not counted).
        func counted<T: Sendable>(_ work: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
            try await app.db.transaction { db in try await work(db.sql(counting: counter)) }
        }
        // Submit: the locked snapshot, a savepoint, the conditional update, the snapshot after, the audit row.
        var done = false
        let submit = try await app.countQueries {
            done = try await counted { try await ReviewQueries.run(.submit, book, user: writer, action: .reviewSubmitted, on: $0) }
        }
        #expect(done && submit == 5)
        // Submitted again: refused by its condition, nothing audited (no snapshot after, no row).
        let again = try await app.countQueries {
            done = try await counted { try await ReviewQueries.run(.submit, book, user: writer, action: .reviewSubmitted, on: $0) }
        }
        #expect(!done && again == 3)
        let returned = try await counted { try await ReviewQueries.run(.giveBack(comment: "Shorter title"), book, user: reviewer, action: .reviewReturned, on: $0) }
        #expect(returned)
        await #expect(throws: Abort.self) { try await counted { try await ReviewQueries.run(.submit, 999_999, user: writer, action: .reviewSubmitted, on: $0) } }

        try await Self.cover(app, book: book)
        let removal = try await app.countQueries { done = try await counted { try await BookCovers.remove(book: book, staff: writer, on: $0) } }
        #expect(done && removal == 2)   // the locked delete returning the cover, the audit row
        let none = try await app.countQueries { done = try await counted { try await BookCovers.remove(book: book, staff: writer, on: $0) } }
        #expect(!done && none == 1)

        let entries = try await Self.audit(app, book: book)
        #expect(entries.map(\.kind) == ["review_submitted", "review_returned", "cover_removal"])
        // A review step keeps the review's state and comment, before and after alike.
        #expect(entries[1].before == #"{"review_state": "pending", "review_comment": null}"#)
        #expect(entries[1].after == #"{"review_state": "returned", "review_comment": "Shorter title"}"#)
        let removed = entries[2].before ?? ""
        #expect(removed.contains(#""width": 10"#) && entries[2].after == "null")
    }

    @Test("a cover's removal and an upload of the same book take turns (the removal locks the book first, as the upload does; it deadlocked on the cover's row and the book's)", .app)
    func removalWaitsForUpload() async throws {
        let app = try app()
        let staff = try await Self.staff(app)
        let book = try await app.makeBook("Taking Turns", status: "draft")
        try await Self.cover(app, book: book)
        let logger = TestDatabase.logger
        try await DirectConnection.open(url: app.settings.databaseURL, logger: logger, connectTimeout: TestDatabase.connectTimeout) { upload in
            // An upload half-way: the book locked, its cover not written yet.
            _ = try await upload.query("BEGIN", logger: logger)
            _ = try await upload.query("SELECT id FROM books WHERE id = \(book) FOR UPDATE", logger: logger)
            let removal = Task {
                try await app.db.transaction { db in try await BookCovers.remove(book: book, staff: staff, on: db as! any SQLDatabase) }
            }
            // Until PostgreSQL says the removal waits for a lock (no clock: each turn is a statement).
            var waiting = 0
            for _ in 0..<20_000 where waiting == 0 {
                waiting = try await app.count("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
                await Task.yield()
            }
            #expect(waiting == 1)
            // The upload's write of the cover: before, the removal held the cover's row here and waited for the book.
            _ = try await upload.query("""
                INSERT INTO book_covers (book_id, width, height, dominant_color, files, api_json) VALUES (\(book), 20, 10, '#000000', '{b.webp}', '{}')
                ON CONFLICT (book_id) DO UPDATE SET width = EXCLUDED.width
                """, logger: logger)
            _ = try await upload.query("COMMIT", logger: logger)
            let removed = try await removal.value
            #expect(removed)
        }
        // The later removal wins, and its audit row has the cover it removed: the upload's.
        #expect(try await app.count("SELECT count(*) AS n FROM book_covers WHERE book_id = \(bind: book)") == 0)
        let entries = try await Self.audit(app, book: book)
        #expect(entries.map(\.kind) == ["cover_removal"])
        let before = entries.first?.before ?? ""
        #expect(before.contains(#""width": 20"#))
    }
}
