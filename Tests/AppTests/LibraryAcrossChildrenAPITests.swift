@testable import App
import Core
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

@Suite("Parent API: libraries across children, leaving soon, the calendar and the console's play reports")
struct LibraryAcrossChildrenAPITests {
    /// `HistoryAPITests.play`: adds `book` to the child's library and records plays at the given times.
    static func play(_ app: Application, _ parent: Application.ParentFixture, child: Int, book: Int,
                     _ plays: [(at: String, position: Int, completed: Bool)]) async throws {
        try await HistoryAPITests.play(app, parent, child: child, book: book, plays)
    }

    @Test("copy and move between children: progress kept or not, 409 duplicate, remove_source, a stranger's child 404", .app)
    func copyAndMove() async throws {
        let app = try app()
        let parent = try await app.makeParent(children: ["Ada", "Ben"])
        let stranger = try await app.makeParent()
        let (ada, ben) = (parent.children[0], parent.children[1])
        let owl = try await app.makeBook("Owl Moon")
        let bear = try await app.makeBook("Bear Hunt")
        try await Self.play(app, parent, child: ada, book: owl, [("2026-01-01T10:00:00Z", 100, false)])
        try await Self.play(app, parent, child: ada, book: bear, [])
        let copied = try await app.send(.POST, "/api/v1/children/\(ada)/library/\(owl)/copy", token: parent.token, json: #"{"to_child_id": \#(ben)}"#)
        #expect(copied.status == .created)
        #expect(try copied.dataObject["last_played_at"] as? String == "2026-01-01T10:00:00Z")
        #expect(try await app.get("/api/v1/children/\(ben)/history", token: parent.token).meta["total_count"] == 1)
        let again = try await app.send(.POST, "/api/v1/children/\(ada)/library/\(owl)/copy", token: parent.token, json: #"{"to_child_id": \#(ben)}"#)
        #expect(try again.status == .conflict && again.json["code"] as? String == "duplicate")
        let moveDup = try await app.send(.POST, "/api/v1/children/\(ada)/library/\(owl)/move", token: parent.token, json: #"{"to_child_id": \#(ben)}"#)
        #expect(moveDup.status == .conflict)
        let removeSource = try await app.send(.POST, "/api/v1/children/\(ada)/library/\(owl)/move", token: parent.token,
                                              json: #"{"to_child_id": \#(ben), "on_duplicate": "remove_source"}"#)
        #expect(removeSource.status == .ok)
        let moved = try await app.send(.POST, "/api/v1/children/\(ada)/library/\(bear)/move", token: parent.token,
                                       json: #"{"to_child_id": \#(ben), "preserve_progress": false}"#)
        #expect(moved.status == .ok)
        #expect(try await app.get("/api/v1/children/\(ada)/library", token: parent.token).meta["total_count"] == 0)
        let children = try await app.get("/api/v1/children", token: parent.token).dataArray
        #expect(children.map { $0["library_count"] as? Int } == [0, 2])
        // Strangers: as the target, and as the caller.
        let toStranger = try await app.send(.POST, "/api/v1/children/\(ben)/library/\(owl)/copy", token: parent.token,
                                            json: #"{"to_child_id": \#(stranger.children[0])}"#)
        #expect(toStranger.status == .notFound)
        #expect(try await app.send(.POST, "/api/v1/children/\(ben)/library/\(owl)/copy", token: stranger.token,
                                   json: #"{"to_child_id": \#(stranger.children[0])}"#).status == .notFound)
        #expect(try await app.send(.POST, "/api/v1/children/\(ben)/library/\(owl)/copy", token: parent.token, json: #"{}"#).status == .badRequest)
    }

    @Test("two moves of one entry at once leave it in exactly one library", .app)
    func concurrentMoves() async throws {
        let app = try app()
        let parent = try await app.makeParent(children: ["Ada", "Ben", "Cy"])
        let (ada, ben, cy) = (parent.children[0], parent.children[1], parent.children[2])
        for round in 0..<10 {
            let book = try await app.makeBook("Book \(round)")
            try await Self.play(app, parent, child: ada, book: book, [])
            async let first = app.send(.POST, "/api/v1/children/\(ada)/library/\(book)/move", token: parent.token, json: #"{"to_child_id": \#(ben)}"#)
            async let second = app.send(.POST, "/api/v1/children/\(ada)/library/\(book)/move", token: parent.token, json: #"{"to_child_id": \#(cy)}"#)
            let statuses = [try await first.status, try await second.status].sorted { $0.code < $1.code }
            #expect(statuses == [.ok, .notFound])
            let holders = try await app.sql.raw("SELECT count(*) AS n FROM library_entries WHERE book_id = \(bind: book)").first()!.decode(column: "n", as: Int.self)
            #expect(holders == 1)
            // Opposite moves at once (Ada → Ben and Ben → Ada) both succeed: no deadlock.
            let other = try await app.makeBook("Other \(round)")
            try await Self.play(app, parent, child: ben, book: other, [("2026-01-01T10:00:00Z", 5, false)])
            let third = try await app.makeBook("Third \(round)")
            try await Self.play(app, parent, child: ada, book: third, [])
            async let there = app.send(.POST, "/api/v1/children/\(ada)/library/\(third)/move", token: parent.token, json: #"{"to_child_id": \#(ben)}"#)
            async let back = app.send(.POST, "/api/v1/children/\(ben)/library/\(other)/move", token: parent.token, json: #"{"to_child_id": \#(ada)}"#)
            let both = [try await there.status, try await back.status]
            #expect(both == [.ok, .ok])
        }
        // The play counts kept by triggers match the plays themselves.
        let drift = try await app.sql.raw("""
            SELECT count(*) AS n FROM children c WHERE c.plays_count <> (SELECT count(*) FROM plays p WHERE p.child_id = c.id)
            """).first()!.decode(column: "n", as: Int.self)
        #expect(drift == 0)
    }

    @Test("bulk: 100 books with duplicates skipped and reported; a book not in the library changes nothing; categories expand", .app)
    func bulk() async throws {
        let app = try app()
        let parent = try await app.makeParent(children: ["Ada", "Ben"])
        let (ada, ben) = (parent.children[0], parent.children[1])
        let category = try await app.makeCategory("Bedtime", slug: "bedtime")
        var books: [Int] = []
        for i in 0..<100 { books.append(try await app.makeBook("Book \(i)", categories: i < 30 ? [category] : [])) }
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) SELECT \(bind: ada), unnest(\(bind: books)::bigint[])").run()
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) SELECT \(bind: ben), unnest(\(bind: Array(books.prefix(10)))::bigint[])").run()
        let body = #"{"action": "copy", "to_child_id": \#(ben), "book_ids": \#(books)}"#
        let copied = try await app.send(.POST, "/api/v1/children/\(ada)/library/bulk", token: parent.token, json: body)
        #expect(copied.status == .ok, "\(copied.body.string)")
        #expect(try copied.dataObject["affected"] as? Int == 90 && (copied.dataObject["skipped"] as? [Any])?.count == 10)
        let stranger = try await app.makeBook("Not in the library")
        let failing = try await app.send(.POST, "/api/v1/children/\(ada)/library/bulk", token: parent.token,
                                         json: #"{"action": "remove", "book_ids": [\#(books[0]), \#(stranger)]}"#)
        #expect(try failing.status == .notFound && failing.json["field"] as? String == "book_ids")
        #expect(try await app.get("/api/v1/children/\(ada)/library", token: parent.token).meta["total_count"] == 100)
        let removed = try await app.send(.POST, "/api/v1/children/\(ada)/library/bulk", token: parent.token,
                                         json: #"{"action": "remove", "book_ids": [\#(books[0]), \#(books[1])]}"#)
        #expect(try removed.dataObject["affected"] as? Int == 2)
        for bad in [#"{"action": "copy", "book_ids": []}"#, #"{"action": "burn", "book_ids": [1]}"#,
                    #"{"action": "remove", "book_ids": \#(Array(1...101))}"#] {
            #expect(try await app.send(.POST, "/api/v1/children/\(ada)/library/bulk", token: parent.token, json: bad).status == .badRequest)
        }
        // A move: duplicates stay in the source; the rest leave it, with their plays.
        let three = Array(books[2..<5])
        let blocked = try await app.send(.POST, "/api/v1/children/\(ada)/library/bulk", token: parent.token,
                                         json: #"{"action": "move", "to_child_id": \#(ben), "book_ids": \#(three)}"#)
        #expect(try blocked.dataObject["affected"] as? Int == 0 && (blocked.dataObject["skipped"] as? [Any])?.count == 3)
        _ = try await app.send(.POST, "/api/v1/children/\(ben)/library/bulk", token: parent.token, json: #"{"action": "remove", "book_ids": \#(three)}"#)
        try await Self.play(app, parent, child: ada, book: three[0], [("2026-01-01T10:00:00Z", 5, false)])
        let moved = try await app.send(.POST, "/api/v1/children/\(ada)/library/bulk", token: parent.token,
                                       json: #"{"action": "move", "to_child_id": \#(ben), "book_ids": \#(three)}"#)
        #expect(try moved.dataObject["affected"] as? Int == 3)
        #expect(try await app.get("/api/v1/children/\(ada)/library", token: parent.token).meta["total_count"] == 95)
        #expect(try await app.get("/api/v1/children/\(ben)/history?book_id=\(three[0])", token: parent.token).meta["total_count"] == 1)
        // Put them back for the category check below.
        _ = try await app.send(.POST, "/api/v1/children/\(ben)/library/bulk", token: parent.token,
                               json: #"{"action": "copy", "to_child_id": \#(ada), "book_ids": \#(three)}"#)
        // A category: 30 books, 28 still missing from Ada's library after the removals.
        let expanded = try await app.send(.POST, "/api/v1/children/\(ada)/library/categories/bedtime", token: parent.token)
        #expect(try expanded.dataObject["added"] as? Int == 2 && expanded.dataObject["skipped"] as? Int == 28)
        #expect(try await app.send(.POST, "/api/v1/children/\(ada)/library/categories/nope", token: parent.token).status == .notFound)
    }

    @Test("leaving soon: rights_ends_at follows back-to-back windows; leaving_within_days filters", .app)
    func leavingSoon() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let soon = try await app.makeBook("Soon Gone", rights: .none)
        try await app.sql.raw("""
            INSERT INTO rights_windows (book_id, starts_at, ends_at) VALUES
              (\(bind: soon), now() - interval '10 days', now() + interval '3 days'),
              (\(bind: soon), now() + interval '3 days', now() + interval '5 days')
            """).run()
        let forever = try await app.makeBook("Forever")
        for book in [soon, forever] {
            #expect(try await app.send(.POST, "/api/v1/children/\(child)/library", token: parent.token, json: #"{"book_id": \#(book)}"#).status == .created)
        }
        let all = try await app.get("/api/v1/children/\(child)/library?sort=title", token: parent.token).dataArray
        #expect(all[0]["rights_ends_at"] is NSNull)
        let ends = ISO8601DateFormatter().date(from: all[1]["rights_ends_at"] as? String ?? "")
        #expect(ends.map { abs($0.timeIntervalSinceNow - 5 * 86400) < 120 } == true)
        let within4 = try await app.get("/api/v1/children/\(child)/library?leaving_within_days=4", token: parent.token)
        #expect(try within4.meta["total_count"] == 0, "\(within4.body.string)")
        let within6 = try await app.get("/api/v1/children/\(child)/library?leaving_within_days=6", token: parent.token)
        #expect(try within6.dataArray.map { $0["id"] as? Int } == [soon])
        #expect(try await app.get("/api/v1/children/\(child)/library?leaving_within_days=0", token: parent.token).status == .badRequest)
    }

    @Test("calendar: a Monday-first 6×7 grid of arrivals and departures; continued windows are neither; child scope; a day in full; fresh after a change", .app)
    func calendar() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let publisher = try await app.makePublisher("Moonlight")
        let arriving = try await app.makeBook("Arriving Owl", publisher: publisher, rights: .none)
        let leaving = try await app.makeBook("Leaving Bear", rights: .none)
        let continued = try await app.makeBook("Continued Fox", rights: .none)
        let draft = try await app.makeBook("Draft Cat", status: "draft", rights: .none)
        try await app.sql.raw("""
            INSERT INTO rights_windows (book_id, starts_at, ends_at) VALUES
              (\(bind: arriving), '2026-11-03T09:00:00Z', NULL),
              (\(bind: leaving), '2026-01-01T00:00:00Z', '2026-11-20T23:30:00Z'),
              (\(bind: continued), '2026-01-01T00:00:00Z', '2026-11-10T00:00:00Z'),
              (\(bind: continued), '2026-11-10T00:00:00Z', NULL),
              (\(bind: draft), '2026-11-03T09:00:00Z', NULL)
            """).run()
        let response = try await app.get("/api/v1/catalog/calendar?month=2026-11", token: parent.token)
        #expect(response.status == .ok, "\(response.body.string)")
        let month = try response.dataObject
        let days = month["days"] as? [[String: Any]] ?? []
        #expect(days.count == 42)
        #expect(days.first?["date"] as? String == "2026-10-26" && days.first?["in_month"] as? Bool == false)   // 1 Nov 2026 is a Sunday
        let byDate = Dictionary(uniqueKeysWithValues: days.map { ($0["date"] as! String, $0) })
        #expect(byDate["2026-11-03"]?["arriving_count"] as? Int == 1)
        let owl = (byDate["2026-11-03"]?["arriving"] as? [[String: Any]])?.first
        #expect(owl?["id"] as? Int == arriving && (owl?["publisher"] as? [String: Any])?["name"] as? String == "Moonlight")
        #expect(byDate["2026-11-20"]?["leaving_count"] as? Int == 1)
        #expect(byDate["2026-11-10"]?["leaving_count"] as? Int == 0 && byDate["2026-11-10"]?["arriving_count"] as? Int == 0)
        // In Tokyo the departure at 23:30 UTC is already the 21st.
        let tokyo = try await app.get("/api/v1/catalog/calendar?month=2026-11&tz=Asia/Tokyo", token: parent.token).dataObject
        let tokyoDays = tokyo["days"] as? [[String: Any]] ?? []
        #expect(tokyoDays.first { $0["date"] as? String == "2026-11-21" }?["leaving_count"] as? Int == 1)
        // Narrowed to a child's library: the bear is not in it.
        let scoped = try await app.get("/api/v1/catalog/calendar?month=2026-11&child_id=\(child)", token: parent.token).dataObject
        #expect((scoped["days"] as? [[String: Any]] ?? []).allSatisfy { $0["leaving_count"] as? Int == 0 })
        let stranger = try await app.makeParent()
        #expect(try await app.get("/api/v1/catalog/calendar?month=2026-11&child_id=\(child)", token: stranger.token).status == .notFound)
        // One day in full, as book objects.
        let day = try await app.get("/api/v1/catalog/calendar/2026-11-20?kind=leaving", token: parent.token)
        #expect(try day.dataArray.map { $0["id"] as? Int } == [leaving] && day.meta["total_count"] == 1)
        // A change is in the next answer (the month is cached per catalog version).
        try await app.sql.raw("UPDATE rights_windows SET ends_at = '2026-11-25T12:00:00Z' WHERE book_id = \(bind: leaving)").run()
        let changed = try await app.get("/api/v1/catalog/calendar?month=2026-11", token: parent.token).dataObject
        let changedDays = changed["days"] as? [[String: Any]] ?? []
        #expect(changedDays.first { $0["date"] as? String == "2026-11-25" }?["leaving_count"] as? Int == 1)
        #expect(changedDays.first { $0["date"] as? String == "2026-11-20" }?["leaving_count"] as? Int == 0)
        for bad in ["?month=2026-13", "?month=26-11", "?month=2026-11&tz=Nowhere"] {
            #expect(try await app.get("/api/v1/catalog/calendar\(bad)", token: parent.token).status == .badRequest, "\(bad)")
        }
        #expect(try await app.get("/api/v1/catalog/calendar/2026-02-30", token: parent.token).status == .badRequest)
        #expect(try await app.get("/api/v1/catalog/calendar?month=2026-11").status == .unauthorized)
    }

    @Test("the console's book page shows the plays of the last 30 days and how many libraries hold the book", .app)
    func consoleBookPage() async throws {
        let app = try app()
        let parent = try await app.makeParent(children: ["Ada", "Ben"])
        let owl = try await app.makeBook("Owl Moon")
        let recent = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-86400))
        try await Self.play(app, parent, child: parent.children[0], book: owl, [(recent, 10, false), (recent, 20, false), ("2025-01-01T00:00:00Z", 5, false)])
        try await Self.play(app, parent, child: parent.children[1], book: owl, [])
        let page = try await app.console(role: .viewer).get("/admin/books/\(owl)").html
        #expect(page.contains("<dt>Plays, last 30 days</dt><dd>2</dd>"))
        #expect(page.contains("<dt>In children&#39;s libraries</dt><dd>2</dd>") || page.contains("<dt>In children's libraries</dt><dd>2</dd>"))
    }

    @Test("the console's Most played report: by plays or minutes, narrowed by category and publisher, as CSV", .app)
    func mostPlayedReport() async throws {
        let app = try app()
        let parent = try await app.makeParent(children: ["Ada", "Ben"])
        let bedtime = try await app.makeCategory("Bedtime", slug: "bedtime")
        let moonlight = try await app.makePublisher("Moonlight")
        let owl = try await app.makeBook("Owl Moon", publisher: moonlight, categories: [bedtime])
        let bear = try await app.makeBook("Bear Hunt")
        let recent = { (hours: Double) in ISO8601DateFormatter().string(from: Date().addingTimeInterval(-hours * 3600)) }
        // Owl: three short plays by two children; Bear: one long play.
        try await Self.play(app, parent, child: parent.children[0], book: owl, [(recent(5), 60, false), (recent(4), 120, false)])
        try await Self.play(app, parent, child: parent.children[1], book: owl, [(recent(3), 60, false)])
        try await Self.play(app, parent, child: parent.children[0], book: bear, [(recent(2), 900, true), ("2024-01-01T00:00:00Z", 9000, false)])
        // Cat: a play of the period that continues one from before it counts what it added (7 − 5 = 2 minutes), as everywhere else.
        let cat = try await app.makeBook("Cat Nap")
        try await Self.play(app, parent, child: parent.children[1], book: cat, [("2024-01-01T00:00:00Z", 300, false), (recent(1), 420, false)])
        let client = try await app.console(role: .viewer)
        let byPlays = try await client.get("/admin/reports/plays").html
        #expect(byPlays.contains("Most played"))
        let owlAt = byPlays.range(of: "Owl Moon")?.lowerBound, bearAt = byPlays.range(of: "Bear Hunt")?.lowerBound
        #expect(owlAt != nil && bearAt != nil && owlAt! < bearAt!)
        let byMinutes = try await client.get("/admin/reports/plays?order=minutes").html
        let owlM = byMinutes.range(of: "Owl Moon")?.lowerBound, bearM = byMinutes.range(of: "Bear Hunt")?.lowerBound
        #expect(owlM != nil && bearM != nil && bearM! < owlM!)
        #expect(!(try await client.get("/admin/reports/plays?category=\(bedtime)")).html.contains("Bear Hunt"))
        #expect(!(try await client.get("/admin/reports/plays?publisher=\(moonlight)")).html.contains("Bear Hunt"))
        let csv = try await client.get("/admin/reports/plays.csv?order=minutes")
        let lines = csv.html.split(separator: "\r\n").map(String.init)
        // Owl: 60 + (120 − 60) for Ada, 60 for Ben = 3 minutes; Bear: 900 s = 15 (the 2024 play is outside the period).
        #expect(lines == ["rank,book_id,title,publisher,plays,children,minutes", "1,\(bear),Bear Hunt,,1,1,15", "2,\(owl),Owl Moon,Moonlight,3,2,3",
                          "3,\(cat),Cat Nap,,1,1,2"])
        #expect(try await ConsoleClient(app).get("/admin/reports/plays").status != .ok)   // signed out
    }
}
