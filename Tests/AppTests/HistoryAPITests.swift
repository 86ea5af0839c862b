@testable import App
import Core
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

@Suite("Parent API: viewing history, insights and libraries across children")
struct HistoryAPITests {
    /// Adds `book` to the child's library and records plays at the given times.
    static func play(_ app: Application, _ parent: Application.ParentFixture, child: Int, book: Int,
                     _ plays: [(at: String, position: Int, completed: Bool)]) async throws {
        let added = try await app.send(.POST, "/api/v1/children/\(child)/library", token: parent.token, json: #"{"book_id": \#(book)}"#)
        #expect(added.status == .created || added.status == .conflict)
        for play in plays {
            let response = try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/plays", token: parent.token,
                                              json: #"{"position_seconds": \#(play.position), "completed": \#(play.completed), "played_at": "\#(play.at)"}"#)
            #expect(response.status == .created, "\(response.body.string)")
        }
    }

    @Test("history: newest first, rewatches marked, filters, pages; unmarking recomputes last_played_at; another parent's child is 404", .app)
    func history() async throws {
        let app = try app()
        let parent = try await app.makeParent(children: ["Ada", "Ben"])
        let stranger = try await app.makeParent()
        let ada = parent.children[0]
        let owl = try await app.makeBook("Owl Moon", duration: 600)
        let bear = try await app.makeBook("Bear Hunt", duration: nil)
        try await Self.play(app, parent, child: ada, book: owl, [("2026-01-01T10:00:00Z", 300, false), ("2026-01-02T10:00:00Z", 600, true),
                                                                 ("2026-01-03T10:00:00Z", 100, false)])
        try await Self.play(app, parent, child: ada, book: bear, [("2026-01-02T12:00:00Z", 50, false)])
        let all = try await app.get("/api/v1/children/\(ada)/history", token: parent.token)
        #expect(all.status == .ok)
        let items = try all.dataArray
        #expect(items.map { $0["played_at"] as? String } == ["2026-01-03T10:00:00Z", "2026-01-02T12:00:00Z", "2026-01-02T10:00:00Z", "2026-01-01T10:00:00Z"])
        #expect(items.map { $0["rewatch"] as? Bool } == [true, false, false, false])
        #expect((items[0]["book"] as? [String: Any])?["title"] as? String == "Owl Moon")
        #expect((items[1]["book"] as? [String: Any])?["duration_seconds"] is NSNull)
        #expect(try all.meta["total_count"] == 4)
        // Filters: a book, a date range (a date as `to` includes that day), pages.
        #expect(try await app.get("/api/v1/children/\(ada)/history?book_id=\(bear)", token: parent.token).meta["total_count"] == 1)
        let range = try await app.get("/api/v1/children/\(ada)/history?from=2026-01-02&to=2026-01-02", token: parent.token)
        #expect(try range.meta["total_count"] == 2)
        let zoned = try await app.get("/api/v1/children/\(ada)/history?from=2026-01-03&tz=Pacific/Kiritimati", token: parent.token)
        #expect(try zoned.meta["total_count"] == 3)   // the 3rd at UTC+14 begins at 2026-01-02T10:00Z
        let second = try await app.get("/api/v1/children/\(ada)/history?per_page=3&page=2", token: parent.token)
        #expect(try second.dataArray.count == 1 && second.headers.first(name: "Link")?.contains("rel=\"prev\"") == true)
        for bad in ["from=yesterday", "to=2026-02-30", "book_id=0", "per_page=101", "tz=Mars/Olympus"] {
            let response = try await app.get("/api/v1/children/\(ada)/history?\(bad)", token: parent.token)
            #expect(response.status == .badRequest, "\(bad)")
            #expect(try response.json["code"] as? String == "invalid_parameter")
        }
        // Another parent's child, and another child's play.
        #expect(try await app.get("/api/v1/children/\(ada)/history", token: stranger.token).status == .notFound)
        let playID = items[0]["id"] as! Int
        #expect(try await app.send(.DELETE, "/api/v1/children/\(parent.children[1])/history/\(playID)", token: parent.token).status == .notFound)
        #expect(try await app.send(.DELETE, "/api/v1/children/\(ada)/history/\(playID)", token: stranger.token).status == .notFound)
        // Unmark the latest owl play: last_played_at goes back to the play before.
        #expect(try await app.send(.DELETE, "/api/v1/children/\(ada)/history/\(playID)", token: parent.token).status == .noContent)
        #expect(try await app.send(.DELETE, "/api/v1/children/\(ada)/history/\(playID)", token: parent.token).status == .notFound)
        let library = try await app.get("/api/v1/children/\(ada)/library", token: parent.token).dataArray
        let owlEntry = library.first { $0["id"] as? Int == owl }!
        #expect(owlEntry["last_played_at"] as? String == "2026-01-02T10:00:00Z")
        #expect(owlEntry["completed_count"] as? Int == 1 && owlEntry["progress"] as? Double == 1.0)
        // All of a book's data: the entry stays, last_played_at cleared.
        #expect(try await app.send(.DELETE, "/api/v1/children/\(ada)/history", token: parent.token).status == .badRequest)
        #expect(try await app.send(.DELETE, "/api/v1/children/\(ada)/history?book_id=\(owl)", token: parent.token).status == .noContent)
        let after = try await app.get("/api/v1/children/\(ada)/library", token: parent.token).dataArray
        let cleared = after.first { $0["id"] as? Int == owl }!
        #expect(cleared["last_played_at"] is NSNull && cleared["completed_count"] as? Int == 0 && cleared["progress"] is NSNull)
        #expect(try await app.get("/api/v1/children/\(ada)/history", token: parent.token).meta["total_count"] == 1)
    }

    @Test("plays: played_at backdates, never into the future; last_played_at keeps the latest", .app)
    func backdating() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let owl = try await app.makeBook("Owl Moon")
        try await Self.play(app, parent, child: child, book: owl, [("2026-03-01T08:00:00Z", 10, false), ("2026-02-01T08:00:00Z", 5, false)])
        let entry = try await app.get("/api/v1/children/\(child)/library", token: parent.token).dataArray[0]
        #expect(entry["last_played_at"] as? String == "2026-03-01T08:00:00Z")
        let future = ISO8601DateFormatter().string(from: Date().addingTimeInterval(3600))
        for (body, field) in [(#"{"position_seconds": 1, "completed": false, "played_at": "\#(future)"}"#, "played_at"),
                              (#"{"position_seconds": 1, "completed": false, "played_at": "March 1st"}"#, "played_at"),
                              (#"{"position_seconds": 1, "completed": false, "played_at": 5}"#, "played_at")] {
            let response = try await app.send(.POST, "/api/v1/children/\(child)/library/\(owl)/plays", token: parent.token, json: body)
            #expect(try response.status == .badRequest && response.json["field"] as? String == field, "\(body)")
        }
        let now = try await app.send(.POST, "/api/v1/children/\(child)/library/\(owl)/plays", token: parent.token,
                                     json: #"{"position_seconds": 20, "completed": false, "played_at": null}"#)
        #expect(now.status == .created)
        #expect(try await app.get("/api/v1/children/\(child)/history", token: parent.token).meta["total_count"] == 3)
    }

    @Test("plays: the future that played_at may not be in is the app clock's, not the wall clock's", .app)
    func backdatingByAppClock() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let owl = try await app.makeBook("Owl Moon")
        try await Self.play(app, parent, child: child, book: owl, [])
        func play(at date: Date) async throws -> TestingHTTPResponse {
            try await app.send(.POST, "/api/v1/children/\(child)/library/\(owl)/plays", token: parent.token,
                               json: #"{"position_seconds": 1, "completed": false, "played_at": "\#(ISO8601DateFormatter().string(from: date))"}"#)
        }
        // The app's clock stopped half an hour ahead of the wall clock: twenty minutes past the wall
        // clock is not the future…
        let ahead = app.now.addingTimeInterval(1800)
        app.appServices.clock.set(to: ahead)
        let accepted = try await play(at: ahead.addingTimeInterval(-600))
        #expect(accepted.status == .created, "\(accepted.status) \(accepted.body.string)")
        // …ten minutes past the app's clock is.
        let refused = try await play(at: ahead.addingTimeInterval(600))
        #expect(try refused.status == .badRequest && refused.json["field"] as? String == "played_at")
    }

    @Test("continue watching: started and not completed, most recent first, with progress", .app)
    func continueWatching() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let owl = try await app.makeBook("Owl Moon", duration: 600)
        let bear = try await app.makeBook("Bear Hunt", duration: nil)
        let done = try await app.makeBook("Done Book")
        let gone = try await app.makeBook("Gone Book")
        try await Self.play(app, parent, child: child, book: owl, [("2026-01-01T10:00:00Z", 150, false)])
        try await Self.play(app, parent, child: child, book: bear, [("2026-01-02T10:00:00Z", 40, false)])
        try await Self.play(app, parent, child: child, book: done, [("2026-01-03T10:00:00Z", 10, false), ("2026-01-04T10:00:00Z", 300, true)])
        try await Self.play(app, parent, child: child, book: gone, [("2026-01-05T10:00:00Z", 10, false)])
        try await app.sql.raw("UPDATE books SET status = 'archived' WHERE id = \(bind: gone)").run()
        let response = try await app.get("/api/v1/children/\(child)/continue", token: parent.token)
        let items = try response.dataArray
        #expect(items.map { $0["id"] as? Int } == [bear, owl])
        #expect(items.map { $0["position_seconds"] as? Int } == [40, 150])
        #expect(items[0]["progress"] is NSNull && items[1]["progress"] as? Double == 0.25)
        #expect(try response.meta["total_count"] == 2)
    }

    @Test("stats: counts, rewatches, minutes by the delta rule, favourite category, month, series in the family's time zone", .app)
    func stats() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let bedtime = try await app.makeCategory("Bedtime", slug: "bedtime", order: 1)
        let animals = try await app.makeCategory("Animals", slug: "animals", order: 2)
        let owl = try await app.makeBook("Owl Moon", categories: [bedtime])
        let bear = try await app.makeBook("Bear Hunt", categories: [animals])
        _ = try await app.makeBook("Unplayed")
        try await Self.play(app, parent, child: child, book: owl, [
            ("2026-01-10T20:00:00Z", 120, false),   // 120 s
            ("2026-01-10T20:10:00Z", 300, true),    // resumed: +180 s, completed
            ("2026-01-16T20:00:00Z", 300, true),    // a rewatch from the start: 300 s
        ])
        try await Self.play(app, parent, child: child, book: bear, [("2026-02-01T23:30:00Z", 60, false)])
        let added = try await app.send(.POST, "/api/v1/children/\(child)/library", token: parent.token,
                                        json: #"{"book_id": \#(try await app.sql.raw("SELECT id FROM books WHERE title = 'Unplayed'").first()!.decode(column: "id", as: Int.self))}"#)
        #expect(added.status == .created)
        let response = try await app.get("/api/v1/children/\(child)/stats?period=all&tz=Europe/Paris", token: parent.token)
        #expect(response.status == .ok, "\(response.body.string)")
        let stats = try response.dataObject
        #expect(stats["plays"] as? Int == 4 && stats["rewatches"] as? Int == 1)
        #expect(stats["books_completed"] as? Int == 1 && stats["books_not_completed"] as? Int == 2)
        #expect(stats["completion_percentage"] as? Double == 33.3)
        #expect(stats["average_plays_per_completed_book"] as? Double == 3)
        #expect(stats["minutes_watched"] as? Int == (120 + 180 + 300 + 60) / 60)
        #expect((stats["favourite_category"] as? [String: Any])?["slug"] as? String == "bedtime")
        #expect(stats["most_active_month"] as? String == "2026-01")
        #expect(stats["from"] as? String == "2026-01-10")
        let series = stats["series"] as? [[String: Any]] ?? []
        // 23:30 UTC on 1 February is 2 February in Paris.
        #expect(series.first { $0["date"] as? String == "2026-02-02" }?["plays"] as? Int == 1)
        #expect(series.first { $0["date"] as? String == "2026-02-01" }?["plays"] as? Int == 0)
        #expect(stats["longest_streak"] as? Int == 2 && stats["current_streak"] as? Int == 0)
        // Kept until something it reads changes: a new play, an unmarked one.
        try await Self.play(app, parent, child: child, book: bear, [("2026-02-03T08:00:00Z", 90, false)])
        let again = try await app.get("/api/v1/children/\(child)/stats?period=all&tz=Europe/Paris", token: parent.token).dataObject
        #expect(again["plays"] as? Int == 5 && again["minutes_watched"] as? Int == (120 + 180 + 300 + 60 + 30) / 60)
        let last = try await app.get("/api/v1/children/\(child)/history?per_page=1", token: parent.token).dataArray[0]["id"] as! Int
        #expect(try await app.send(.DELETE, "/api/v1/children/\(child)/history/\(last)", token: parent.token).status == .noContent)
        #expect(try await app.get("/api/v1/children/\(child)/stats?period=all&tz=Europe/Paris", token: parent.token).dataObject["plays"] as? Int == 4)
        let week = try await app.get("/api/v1/children/\(child)/stats?period=week", token: parent.token).dataObject
        #expect(week["plays"] as? Int == 0 && (week["series"] as? [Any])?.count == 7)
        for bad in ["period=year", "tz=Nowhere/City"] {
            #expect(try await app.get("/api/v1/children/\(child)/stats?\(bad)", token: parent.token).status == .badRequest)
        }
    }

    @Test("streaks by the plan's rule: gaps up to 7 days chain; current only while the last day is within 7 days")
    func streakRule() {
        #expect(Streaks.of(days: [], today: 100) == (0, 0))
        #expect(Streaks.of(days: [100], today: 100) == (1, 1))
        #expect(Streaks.of(days: [80, 87, 95, 96, 100], today: 107) == (3, 3))   // 87 → 95 is 8: broken
        #expect(Streaks.of(days: [80, 87, 94], today: 102) == (0, 3))
        #expect(Streaks.of(days: [10, 11, 11, 12], today: 12) == (3, 3))
    }

    @Test("streak days follow the time zone across midnight and a DST change", .app)
    func streakDaysInTimeZone() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let owl = try await app.makeBook("Owl Moon")
        // New York: 2026-03-08 is the spring-forward day. 03:30Z on the 9th is 23:30 on the 8th (EDT, UTC-4).
        try await Self.play(app, parent, child: child, book: owl, [("2026-03-08T04:30:00Z", 1, false), ("2026-03-09T03:30:00Z", 2, false)])
        let utc = try await app.get("/api/v1/children/\(child)/stats?tz=UTC", token: parent.token).dataObject
        let newYork = try await app.get("/api/v1/children/\(child)/stats?tz=America/New_York", token: parent.token).dataObject
        // UTC: the 8th and the 9th. New York: the 7th (23:30 EST) and the 8th (23:30 EDT).
        #expect(utc["from"] as? String == "2026-03-08" && newYork["from"] as? String == "2026-03-07")
        #expect(utc["longest_streak"] as? Int == 2 && newYork["longest_streak"] as? Int == 2)
        let series = newYork["series"] as? [[String: Any]] ?? []
        #expect(series.prefix(2).map { $0["plays"] as? Int } == [1, 1])
    }

    @Test("export: JSON grouped by book and CSV one event a row, formula-safe", .app)
    func export() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let owl = try await app.makeBook("=HYPERLINK(\"x\")", author: "Ann, \"Q\"")
        let bear = try await app.makeBook("Bear Hunt")
        try await Self.play(app, parent, child: child, book: owl, [("2026-01-01T10:00:00Z", 5, true), ("2026-01-02T10:00:00Z", 6, false)])
        try await Self.play(app, parent, child: child, book: bear, [("2026-01-03T10:00:00Z", 7, false)])
        let json = try await app.get("/api/v1/children/\(child)/history/export?format=json", token: parent.token)
        #expect(json.status == .ok && json.headers.contentType == .json)
        let groups = try json.dataArray
        #expect(groups.count == 2)
        #expect((groups[0]["book"] as? [String: Any])?["title"] as? String == "=HYPERLINK(\"x\")")
        #expect((groups[0]["events"] as? [[String: Any]])?.map { $0["rewatch"] as? Bool } == [false, true])
        let csv = try await app.get("/api/v1/children/\(child)/history/export?format=csv", token: parent.token)
        let lines = csv.body.string.split(separator: "\r\n").map(String.init)
        #expect(lines.count == 4 && lines[0].hasPrefix("play_id,book_id,title"))
        #expect(lines[1].contains(",'=HYPERLINK(\"\"x\"\")") || lines[1].contains(",\"'=HYPERLINK(\"\"x\"\")\""))
        let empty = try await app.makeParent()
        let none = try await app.get("/api/v1/children/\(empty.children[0])/history/export", token: empty.token)
        #expect(try none.json["data"] as? [Any] != nil && (try none.dataArray.isEmpty))
        #expect(try await app.get("/api/v1/children/\(child)/history/export?format=xml", token: parent.token).status == .badRequest)
        #expect(try await app.get("/api/v1/children/\(child)/history/export", token: empty.token).status == .notFound)
    }

    @Test("export of 100,000 plays: every event, in both formats", .app)
    func largeExport() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        var books: [Int] = []
        for i in 0..<50 { books.append(try await app.makeBook("Book \(i)")) }
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) SELECT \(bind: child), unnest(\(bind: books)::bigint[])").run()
        try await app.sql.raw("""
            INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at)
            SELECT \(bind: child), (\(bind: books)::bigint[])[1 + g % 50], g % 600, g % 7 = 0, now() - g * interval '1 minute'
              FROM generate_series(1, 100000) g
            """).run()
        let csv = try await app.get("/api/v1/children/\(child)/history/export?format=csv", token: parent.token)
        #expect(csv.status == .ok)
        var lines = 0
        for byte in csv.body.readableBytesView where byte == UInt8(ascii: "\n") { lines += 1 }
        #expect(lines == 100_001)
        let json = try await app.get("/api/v1/children/\(child)/history/export", token: parent.token)
        let groups = try json.dataArray
        #expect(groups.count == 50)
        #expect(groups.reduce(0) { $0 + (($1["events"] as? [Any])?.count ?? 0) } == 100_000)
        #expect(try await app.get("/api/v1/children/\(child)/history", token: parent.token).meta["total_count"] == 100_000)
    }

    @Test("answers kept per child change with the child's plays and library, the catalog, the day and the rights clock", .app)
    func keptAnswers() async throws {
        let app = try app()
        let parent = try await app.makeParent(children: ["Ada"])
        let ada = parent.children[0]
        let owl = try await app.makeBook("Owl Moon", duration: 600)
        try await Self.play(app, parent, child: ada, book: owl, [("2026-01-01T10:00:00Z", 300, false)])
        let paths = ["history", "continue", "library", "stats"].map { "/api/v1/children/\(ada)/\($0)" }
        for path in paths { #expect(try await app.get(path, token: parent.token).status == .ok) }   // kept now
        for path in paths {   // a kept answer costs the one statement that reads the child's state
            #expect(try await app.countQueries { _ = try await app.get(path, token: parent.token) } == 1, "\(path)")
        }
        let title = { (path: String) async throws -> String? in
            let data = try await app.get(path, token: parent.token).dataArray.first
            return (data?["book"] as? [String: Any])?["title"] as? String ?? data?["title"] as? String
        }
        // A catalog change (a title, by SQL as another instance would) is seen at once.
        try await app.sql.raw("UPDATE books SET title = 'Owl Night' WHERE id = \(bind: owl)").run()
        for path in paths.prefix(3) { #expect(try await title(path) == "Owl Night", "\(path)") }
        // A play (the child's activity) is seen at once: continue empties, history and stats grow.
        try await Self.play(app, parent, child: ada, book: owl, [("2026-01-02T10:00:00Z", 600, true)])
        #expect(try await app.get(paths[0], token: parent.token).meta["total_count"] == 2)
        #expect(try await app.get(paths[1], token: parent.token).meta["total_count"] == 0)
        #expect(try await app.get(paths[3], token: parent.token).json["data"].flatMap { ($0 as? [String: Any])?["plays"] as? Int } == 2)
        // Rights that end with no commit at all: the kept library page stops at that instant.
        // The app's clock, stopped, then moved past the end (no waiting for the wall clock).
        let clock = app.appServices.clock
        clock.set(to: app.now)
        let ends = app.now.addingTimeInterval(1.5)
        try await app.sql.raw("UPDATE rights_windows SET ends_at = \(bind: ends) WHERE book_id = \(bind: owl)").run()
        let available = { () async throws -> Bool? in
            try await app.get(paths[2], token: parent.token).dataArray.first?["rights_available"] as? Bool
        }
        for _ in 0..<2 {   // the second from the kept answer
            #expect(try await available() == true)
        }
        clock.advance(by: 1.7)
        #expect(try await available() == false)
        // A kept answer is never another parent's.
        let stranger = try await app.makeParent()
        for path in paths { #expect(try await app.get(path, token: stranger.token).status == .notFound) }
    }
}
