@testable import App
import Core
import Foundation
import SQLKit
import Testing
import Vapor

@Suite("Children's play logs in memory against the SQL they replace")
struct PlayLogDifferentialTests {
    static let zones = ["UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo", "Pacific/Kiritimati", "Asia/Kathmandu",
                        "America/St_Johns", "Australia/Lord_Howe"]

    @Test("differential: history pages and statistics from the play log equal the SQL's — random plays over DST nights and ties, every zone and period, before and after changes", .app)
    func differential() async throws {
        let app = try app()
        let parent = try await app.makeParent(children: ["Ada", "Ben"])
        let child = parent.children[0], ben = parent.children[1]
        // Categories whose display orders tie (then by name, then id), books in none to three of them.
        var categories: [Int] = []
        for (i, (name, order)) in [("Moon", 1), ("Animals", 1), ("Bedtime", 0), ("Animals too", 2), ("Sea", 1)].enumerated() {
            categories.append(try await app.makeCategory(name, slug: "c\(i)", order: order))
        }
        var books: [Int] = []
        for i in 0..<40 {
            books.append(try await app.makeBook("Book \(i)", categories: Array(categories.shuffled().prefix(Int.random(in: 0...3))),
                                                video: [nil, "ready", "processing"].randomElement()!, duration: [nil, 300, 900].randomElement()!))
        }
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) SELECT \(bind: child), unnest(\(bind: Array(books.shuffled().prefix(25))))").run()
        try await Self.insertPlays(app, child: child, books: books, count: 1_500)
        try await Self.compare(app, child: child, books: books)
        // Ties: two categories of one display order played as often (the name decides), two months
        // with as many plays (the later wins).
        let moon = try await app.makeBook("Moon only", categories: [categories[0]]), animals = try await app.makeBook("Animals only", categories: [categories[1]])
        try await app.sql.raw("""
            INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at)
            VALUES (\(bind: ben), \(bind: moon), 60, true, now() - interval '70 days'), (\(bind: ben), \(bind: animals), 60, false, now() - interval '20 days')
            """).run()
        try await Self.compare(app, child: ben, books: [moon, animals], varied: false)
        let tied = try await InsightsController.statisticsInSQL(child: ben, period: .all, zone: "UTC", sql: app.sql)
        #expect(tied.favouriteCategory?.name == "Animals" && tied.mostActiveMonth == CivilDays.monthText(of: CivilDays.today(in: .gmt, now: Date()) - 20))

        // Only plays added (as a play a second does): the log reads just those, and equals a full read.
        let before = try #require(try await LoadedPlayLog.read(child: child, limit: ChildPlayLogs.perChildLimit, on: app.db, counter: app.appServices.queryCounter))
        try await Self.insertPlays(app, child: child, books: books, count: 40)
        var incremental: LoadedPlayLog?
        let incrementalStatements = try await app.countQueries {
            incremental = try await LoadedPlayLog.read(child: child, limit: ChildPlayLogs.perChildLimit, previous: before, on: app.db, counter: app.appServices.queryCounter)
        }
        var full: LoadedPlayLog?
        let fullStatements = try await app.countQueries {
            full = try await LoadedPlayLog.read(child: child, limit: ChildPlayLogs.perChildLimit, on: app.db, counter: app.appServices.queryCounter)
        }
        #expect(incrementalStatements < fullStatements)
        #expect(try #require(incremental).log.plays == (try #require(full)).log.plays)
        #expect(incremental?.books == full?.books && incremental?.library == full?.library && incremental?.activity == full?.activity)
        // A play updated in place (psql, say) is seen: the log is read again in full.
        try await app.sql.raw("UPDATE plays SET position_seconds = position_seconds + 1 WHERE id = (SELECT min(id) FROM plays WHERE child_id = \(bind: child))").run()
        let afterUpdate = try #require(try await LoadedPlayLog.read(child: child, limit: ChildPlayLogs.perChildLimit, previous: full, on: app.db, counter: app.appServices.queryCounter))
        let fresh = try #require(try await LoadedPlayLog.read(child: child, limit: ChildPlayLogs.perChildLimit, on: app.db, counter: app.appServices.queryCounter))
        #expect(afterUpdate.log.plays == fresh.log.plays && afterUpdate.log.plays != full?.log.plays)

        // Changes: plays removed and added, the library changed, a category renamed.
        try await app.sql.raw("DELETE FROM plays WHERE id IN (SELECT id FROM plays WHERE child_id = \(bind: child) ORDER BY random() LIMIT 200)").run()
        try await Self.insertPlays(app, child: child, books: books, count: 300)
        try await app.sql.raw("DELETE FROM library_entries WHERE child_id = \(bind: child) AND book_id = ANY(\(bind: Array(books.prefix(5))))").run()
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) SELECT \(bind: child), unnest(\(bind: Array(books.suffix(10)))) ON CONFLICT DO NOTHING").run()
        try await app.sql.raw("UPDATE categories SET name = 'Aardvarks' WHERE id = \(bind: categories[4])").run()
        try await Self.compare(app, child: child, books: books)
    }

    /// Plays at random instants of the last three years, thick around the DST nights of Paris and
    /// New York, a tenth in the last 40 days, some sharing an instant; positions often repeated.
    static func insertPlays(_ app: Application, child: Int, books: [Int], count: Int) async throws {
        let now = Date()
        var nights: [Date] = []
        for name in ["Europe/Paris", "America/New_York"] {
            var t = now.addingTimeInterval(-3 * 365 * 86_400)
            while let next = TimeZone(identifier: name)!.nextDaylightSavingTimeTransition(after: t), next < now { nights.append(next); t = next }
        }
        var instants: [Date] = [], bookIDs: [Int] = [], positions: [Int] = [], completed: [Bool] = []
        for i in 0..<count {
            let instant: Date = switch i % 10 {
            case 0: now.addingTimeInterval(-Double.random(in: 0...(40 * 86_400)))
            case 1, 2, 3: nights.randomElement()!.addingTimeInterval(Double.random(in: -14_400...14_400))
            case 4 where !instants.isEmpty: instants.randomElement()!
            default: now.addingTimeInterval(-Double.random(in: 0...(3 * 365 * 86_400)))
            }
            instants.append(instant)
            bookIDs.append(books[Int.random(in: 0..<min(books.count, 12 + i % 28))])
            positions.append([0, 60, 120, 300, Int.random(in: 0...1_200)].randomElement()!)
            completed.append(Int.random(in: 0..<4) == 0)
        }
        try await app.sql.raw("""
            INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at)
            SELECT \(bind: child), b, p, c, t FROM unnest(\(bind: bookIDs)::bigint[], \(bind: positions)::int[], \(bind: completed)::bool[], \(bind: instants)::timestamptz[]) AS u(b, p, c, t)
            """).run()
    }

    static func compare(_ app: Application, child: Int, books: [Int], varied: Bool = true) async throws {
        let loaded = try #require(try await LoadedPlayLog.read(child: child, limit: ChildPlayLogs.perChildLimit, on: app.db, counter: app.appServices.queryCounter))
        let row = try #require(try await app.sql.raw("SELECT plays_count, activity, (SELECT version FROM catalog_state) AS version FROM children WHERE id = \(bind: child)").first())
        let state = ChildState(id: child, plays: try row.decode(column: "plays_count", as: Int.self),
                               activity: try row.decode(column: "activity", as: Int.self), catalogVersion: try row.decode(column: "version", as: Int.self), country: nil)
        #expect(loaded.covers(state) && loaded.log.count == state.plays)
        var differences = 0
        for zone in zones {
            let timeZone = try #require(TimeZone(identifier: zone))
            for period in InsightsController.Period.allCases {
                // The SQL's today is its own clock's: the log's is taken just before and just after.
                let before = InsightsController.statistics(of: loaded, period: period, zone: zone, timeZone: timeZone, now: Date())
                let sql = try await InsightsController.statisticsInSQL(child: child, period: period, zone: zone, sql: app.sql)
                let after = InsightsController.statistics(of: loaded, period: period, zone: zone, timeZone: timeZone, now: Date())
                if sql != before && sql != after {
                    differences += 1
                    Issue.record("statistics differ for \(period) in \(zone):\nSQL \(sql)\nlog \(after)")
                }
            }
        }
        #expect(differences == 0)
        let statsAll = try await InsightsController.statisticsInSQL(child: child, period: .all, zone: "UTC", sql: app.sql)
        if varied { #expect(statsAll.rewatches > 0 && statsAll.favouriteCategory != nil && statsAll.plays == state.plays, "the random plays exercise every rule") }
        for _ in 0..<150 {
            let page = PageRequest(page: Int.random(in: 1...30), perPage: [1, 7, 20, 50, 100].randomElement()!)
            let book = Bool.random() ? books.randomElement()! : nil
            let memory = try HistoryController.page(of: loaded, book: book, page: page)
            let sql = try await HistoryController.page(HistoryQueries(sql: app.sql, child: state.id), filter: HistoryFilter(bookID: book), page: page, plays: state.plays)
            #expect(memory.total == sql.total && memory.items == sql.items, "page \(page.page) × \(page.perPage), book \(book.map(String.init) ?? "any")")
        }
    }
}
