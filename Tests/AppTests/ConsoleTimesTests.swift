@testable import App
import Foundation
import SQLKit
import Testing

@Suite("Console times: one format, in the staff member's zone")
struct ConsoleTimesTests {
    private struct Instant: Decodable { let at: Date }

    @Test("the dashboard's rights starting and ending soon read as the lists do, in the staff member's zone")
    func dashboardInTheStaffZone() async throws {
        try await withApp { app in
            let editor = try await app.console(role: .editor)
            #expect(try await editor.post("/admin/account", [("time_zone", "Asia/Tokyo"), ("theme", "auto")]).status == .seeOther)
            let book = try await app.makeBook("Soon Window")
            let starts = try await app.sql.raw("SELECT date_trunc('minute', now()) + interval '2 days 5 hours' AS at").first(decoding: Instant.self)!.at
            let ends = starts.addingTimeInterval(3 * 86_400)
            try await app.sql.raw("INSERT INTO rights_windows (book_id, starts_at, ends_at) VALUES (\(bind: book), \(bind: starts), \(bind: ends))").run()
            let tokyo = StaffTime(StaffUser(id: 0, email: "", role: .editor, timeZone: "Asia/Tokyo"))
            let utc = StaffTime(nil)
            #expect(tokyo.format(starts) != utc.format(starts))
            let html = try await editor.get("/admin").html
            #expect(html.contains("starts " + tokyo.format(starts)))
            #expect(html.contains("ends " + tokyo.format(ends)))
            #expect(!html.contains("starts " + utc.format(starts)))
        }
    }
}
