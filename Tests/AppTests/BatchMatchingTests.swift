@testable import App
import Foundation
import SQLKit
import Testing
import Vapor

@Suite("Console: batch actions on everything matching a filter")
struct BatchMatchingTests {
    @Test("select all 2,500 matching: a dry run that changes nothing, then a job in chunks with progress, every book audited, the rest untouched", .app, .timeLimit(.minutes(10)))
    func matching() async throws {
        let app = try app()
        let space = try await app.makeCategory("Space", slug: "space")
        try await app.sql.raw("""
            INSERT INTO books (title, author, age_min, age_max, status)
            SELECT 'Batchable ' || g, 'Ann', 2, 6, 'active' FROM generate_series(1, 2500) g
            UNION ALL SELECT 'Other ' || g, 'Ann', 2, 6, 'active' FROM generate_series(1, 40) g
            """).run()
        let client = try await app.console()
        let list = try await client.get("/admin/books?q=batchable&sort=title&page=2")
        #expect(list.html.contains("Everything matching this filter") && list.html.contains(#"name="matching_query" value="q=batchable""#))
        let fields: [(String, String)] = [("action", "add_category"), ("target_add_category", String(space)), ("scope", "matching"),
                                          ("matching_query", "q=batchable&page=2"), ("return_to", "/admin/books")]
        let dryRun = try await client.post("/admin/books/batch", fields)
        #expect(dryRun.status == .ok && dryRun.html.contains("This will change 2,500 books") && dryRun.html.contains("Add to category “Space”"))
        #expect(try await app.count("SELECT count(*) AS n FROM book_categories") == 0)
        let started = try await client.post("/admin/books/batch", fields + [("confirmed", "yes")])
        let jobPath = try #require(started.location)
        #expect(started.status == .seeOther && jobPath.hasPrefix("/admin/batches/"))
        // Waits for the job itself (its task), not for its page: under a full parallel run the
        // page's poll outlasted a 3-minute limit. (Sleeping between looks: the limit can cancel it.)
        while !app.appServices.jobs.runningTasks.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        let page = try await client.get(jobPath)
        #expect(page.html.contains("Done.") && page.html.contains("2500 of 2500") && page.html.contains("3 chunks"))
        #expect(!page.html.contains("http-equiv=\"refresh\""))
        // A job still running (its row as the job leaves it between chunks) refreshes its page every second.
        let job = try #require(Int(jobPath.split(separator: "/").last ?? ""))
        try await app.sql.raw("UPDATE batch_jobs SET status = 'running', processed = 1000, updated_at = now() WHERE id = \(bind: job)").run()
        let running = try await client.get(jobPath)
        #expect(running.html.contains("Running…") && running.html.contains("1000 of 2500") && running.html.contains(#"<meta http-equiv="refresh" content="1">"#))
        try await app.sql.raw("UPDATE batch_jobs SET status = 'done', processed = 2500 WHERE id = \(bind: job)").run()
        #expect(try await app.count("SELECT count(*) AS n FROM book_categories bc JOIN books b ON b.id = bc.book_id WHERE b.title LIKE 'Batchable %'") == 2500)
        #expect(try await app.count("SELECT count(*) AS n FROM book_categories bc JOIN books b ON b.id = bc.book_id WHERE b.title LIKE 'Other %'") == 0)
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action = 'batch: add to category'") == 2500)
        // A viewer cannot start one; an empty filter match changes nothing.
        let viewer = try await app.console(role: .viewer, email: "viewer@storytime.test")
        #expect(try await viewer.post("/admin/books/batch", fields + [("confirmed", "yes")]).status == .forbidden)
        let none = try await client.post("/admin/books/batch", [("action", "set_status"), ("target_set_status", "draft"), ("scope", "matching"),
                                                               ("matching_query", "q=nothing-like-this"), ("confirmed", "yes")])
        #expect(none.status == .seeOther && !(none.location ?? "").contains("/batches/"))
        #expect(try await app.count("SELECT count(*) AS n FROM books WHERE status = 'draft'") == 0)
    }

    @Test("a running batch job is part of the app's background work: shutting the jobs down waits for it to finish", .app, .timeLimit(.minutes(10)))
    func shutdownWaitsForJob() async throws {
        let app = try app()
        let space = try await app.makeCategory("Space", slug: "space")
        try await app.sql.raw("INSERT INTO books (title, author, age_min, age_max, status) SELECT 'Batchable ' || g, 'Ann', 2, 6, 'active' FROM generate_series(1, 2000) g").run()
        let client = try await app.console()
        let started = try await client.post("/admin/books/batch", [("action", "add_category"), ("target_add_category", String(space)), ("scope", "matching"),
                                                                  ("matching_query", "q=batchable"), ("confirmed", "yes"), ("return_to", "/admin/books")])
        #expect(started.status == .seeOther && (started.location ?? "").hasPrefix("/admin/batches/"))
        // What the app's shutdown does first (before the database pool closes).
        await app.appServices.jobs.shutdown()
        #expect(app.appServices.jobs.runningTasks.isEmpty)
        #expect(try await app.count("SELECT count(*) AS n FROM batch_jobs WHERE status = 'done' AND processed = 2000") == 1)
        #expect(try await app.count("SELECT count(*) AS n FROM book_categories") == 2000)
    }

    @Test("extend or shorten rights: the window ending last moves; open-ended and impossible ends are left alone and reported", .app)
    func shiftRights() async throws {
        let app = try app()
        let now = Date()
        func book(_ title: String, windows: [(Double, Double?)]) async throws -> Int {
            let id = try await app.makeBook(title, rights: .none)
            for (start, end) in windows {
                try await app.sql.raw("""
                    INSERT INTO rights_windows (book_id, starts_at, ends_at)
                    VALUES (\(bind: id), \(bind: now.addingTimeInterval(start * 86_400)), \(bind: end.map { now.addingTimeInterval($0 * 86_400) }))
                    """).run()
            }
            return id
        }
        let two = try await book("Two windows", windows: [(-40, -20), (-10, 10)])
        let open = try await book("Open ended", windows: [(-10, 10), (10, nil)])
        let short = try await book("Short", windows: [(-2, 3)])
        let client = try await app.console()
        let extended = try await client.post("/admin/books/batch", [("action", "shift_rights_end"), ("target_shift_rights_end", "7"),
                                                                   ("ids[]", String(two)), ("ids[]", String(open)), ("return_to", "/admin/books")])
        #expect(extended.status == .seeOther)
        let ends = { (id: Int) async throws -> [Double?] in
            try await app.sql.raw("SELECT extract(epoch FROM ends_at - \(bind: now))::float8 / 86400 AS d FROM rights_windows WHERE book_id = \(bind: id) ORDER BY starts_at").all()
                .map { try $0.decode(column: "d", as: Double?.self).map { ($0 * 1000).rounded() / 1000 } }
        }
        #expect(try await ends(two) == [-20, 17])
        #expect(try await ends(open) == [10, nil])
        let flash = try await client.get("/admin/books").html
        #expect(flash.contains("1 book: rights extended by 7 days (1 book left as they were"))
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action = 'batch: extend rights' AND record_id = \(bind: two)") == 1)
        // The batch's change of one book is reverted from its audit row: the window's end moves back.
        let shiftAudit = try await app.count("SELECT id AS n FROM audit_log WHERE action = 'batch: extend rights' AND record_id = \(bind: two)")
        #expect(try await client.post("/admin/audit/\(shiftAudit)/revert", []).status == .seeOther)
        #expect(try await ends(two) == [-20, 10])
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action = \(bind: "revert #\(shiftAudit)") AND record_id = \(bind: two)") == 1)
        // Shortening past the start is refused for that book.
        try await client.post("/admin/books/batch", [("action", "shift_rights_end"), ("target_shift_rights_end", "-7"), ("ids[]", String(short)), ("return_to", "/admin/books")])
        #expect(try await ends(short) == [3])
        // An unknown shift is refused.
        try await client.post("/admin/books/batch", [("action", "shift_rights_end"), ("target_shift_rights_end", "1000"), ("ids[]", String(two)), ("return_to", "/admin/books")])
        #expect(try await ends(two) == [-20, 10])
    }
}
