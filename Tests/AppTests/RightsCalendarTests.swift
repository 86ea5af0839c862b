@testable import App
import Core
import Foundation
import SQLKit
import Testing
import Vapor

@Suite("Console: the rights calendar")
struct RightsCalendarTests {
    @Test("a Monday-first 6×7 month of windows starting and ending, publisher colours, +N past four a day, a day page, links across a year boundary", .app)
    func calendar() async throws {
        let app = try app()
        let walker = try await app.makePublisher("Walker"), puffin = try await app.makePublisher("Puffin")
        let owl = try await app.makeBook("Owl Moon", publisher: walker, rights: .none)
        try await app.sql.raw("INSERT INTO rights_windows (book_id, starts_at, ends_at) VALUES (\(bind: owl), '2026-12-07T10:00Z', '2026-12-31T23:30Z')").run()
        // Six books starting on one day: four shown, then "+2 more".
        for i in 0..<6 {
            let book = try await app.makeBook("Busy \(i)", publisher: i % 2 == 0 ? puffin : nil, rights: .none)
            try await app.sql.raw("INSERT INTO rights_windows (book_id, starts_at) VALUES (\(bind: book), '2026-12-15T08:00Z')").run()
        }
        let client = try await app.console(role: .viewer)
        let page = try await client.get("/admin/rights/calendar?month=2026-12")
        #expect(page.status == .ok)
        let html = page.html
        #expect(html.contains("Rights calendar: December 2026"))
        // December 2026 starts on a Tuesday: the grid opens on Monday 30 November, outside the month.
        let firstCell = try #require(html.range(of: "<td class=\"outside\">"))
        #expect(html[firstCell.upperBound...].prefix(200).contains("2026-11-30"))
        #expect(html.components(separatedBy: "<a class=\"day-number\"").count - 1 == 42)
        #expect(html.contains("aria-label=\"2026-12-07: 1 starting, 0 ending\"") && html.contains("aria-label=\"2026-12-31: 0 starting, 1 ending\""))
        #expect(html.contains("aria-label=\"2026-12-15: 6 starting, 0 ending\"") && html.contains("+2 more"))
        #expect(html.contains("mark publisher-\(walker % 12)") && html.contains("mark publisher-\(puffin % 12)") && html.contains("mark publisher-none"))
        #expect(html.contains("Walker</li>") && html.contains("Puffin</li>") && html.contains("No publisher</li>"))
        #expect(html.contains("href=\"/admin/rights/calendar?month=2026-11\"") && html.contains("href=\"/admin/rights/calendar?month=2027-01\""))
        let january = try await client.get("/admin/rights/calendar?month=2027-01").html
        #expect(january.contains("href=\"/admin/rights/calendar?month=2026-12\"") && january.contains("href=\"/admin/rights/calendar?month=2027-02\""))
        #expect(january.contains("aria-label=\"2026-12-31: 0 starting, 1 ending\""))   // the leading days of the grid
        // The day page lists every window of the day with links to the books.
        let day = try await client.get("/admin/rights/calendar/2026-12-15").html
        #expect((0..<6).allSatisfy { day.contains(">Busy \($0)</a>") })
        #expect(try await client.get("/admin/rights/calendar/2026-02-30").status == .notFound)
        // Escaping: a title is text.
        let hostile = try await app.makeBook("<img src=x onerror=alert(1)>", rights: .none)
        try await app.sql.raw("INSERT INTO rights_windows (book_id, starts_at) VALUES (\(bind: hostile), '2026-12-20T08:00Z')").run()
        let escaped = try await client.get("/admin/rights/calendar?month=2026-12").html
        #expect(!escaped.contains("<img src=x") && escaped.contains("&lt;img src=x"))
    }

    @Test("territories: the window form takes ISO codes (an unknown one is a form error that saves nothing), the book shows where, the calendar filters by territory", .app)
    func territories() async throws {
        let app = try app()
        let book = try await app.makeBook("Le Ballon Rouge", rights: .none)
        let client = try await app.console(role: .editor)
        let bad = try await client.post("/admin/books/\(book)/rights_windows", [("starts_at", "2026-12-03T10:00"), ("territories", "FR, ZZ")])
        #expect(bad.status == .unprocessableEntity)
        #expect(bad.html.contains("&quot;ZZ&quot; is not an ISO 3166-1 alpha-2 country code"))
        #expect(try await app.count("SELECT count(*) AS n FROM rights_windows") == 0)
        let saved = try await client.post("/admin/books/\(book)/rights_windows",
                                          [("starts_at", "2026-12-03T10:00"), ("territories", "be fr"), ("exclude_territories", "")])
        #expect(saved.status == .seeOther || saved.status == .ok)
        let stored = try await app.sql.raw("SELECT array_to_string(territories, ',') AS t, array_to_string(exclude_territories, ',') AS x FROM rights_windows").first()!
        #expect(try stored.decode(column: "t", as: String.self) == "BE,FR" && stored.decode(column: "x", as: String.self) == "")
        try await app.sql.raw("INSERT INTO rights_windows (book_id, starts_at, exclude_territories) VALUES (\(bind: book), '2026-12-10T10:00Z', '{FR}')").run()
        let page = try await client.get("/admin/books/\(book)").html
        #expect(page.contains("BE, FR") && page.contains("Worldwide except FR"))
        // The calendar: all windows, then only those applying in FR (the territory stays in the links).
        let all = try await client.get("/admin/rights/calendar?month=2026-12").html
        #expect(all.contains("aria-label=\"2026-12-03: 1 starting, 0 ending\"") && all.contains("aria-label=\"2026-12-10: 1 starting, 0 ending\""))
        let france = try await client.get("/admin/rights/calendar?month=2026-12&territory=fr").html
        #expect(france.contains("aria-label=\"2026-12-03: 1 starting, 0 ending\"") && france.contains("aria-label=\"2026-12-10: no changes\""))
        #expect(france.contains("href=\"/admin/rights/calendar?month=2027-01&amp;territory=FR\"") || france.contains("href=\"/admin/rights/calendar?month=2027-01&territory=FR\""))
        let germany = try await client.get("/admin/rights/calendar/2026-12-10?territory=DE").html
        #expect(germany.contains(">Le Ballon Rouge</a>") && germany.contains("that apply in DE"))
        let unknown = try await client.get("/admin/rights/calendar?month=2026-12&territory=XX").html
        #expect(unknown.contains("&quot;XX&quot; is not an ISO 3166-1 alpha-2 country code") && unknown.contains("aria-label=\"2026-12-10: 1 starting, 0 ending\""))
    }
}
