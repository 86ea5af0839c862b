@testable import App
import Core
import Foundation
import SQLKit
import Testing
import Vapor

/// Plays older than the retention period are folded into totals; the statistics a parent sees
/// stay exactly what they were.
@Suite("Play retention: folding old plays keeps the statistics")
struct PlayRetentionTests {
    /// Random plays of `books` over the last `days` days, with plays of one book straddling the
    /// cutoff, completions, rewinds and DST nights.
    static func insertPlays(_ app: Application, child: Int, books: [Int], count: Int, days: ClosedRange<Int>, random: inout CatalogEngineTests.Random) async throws {
        var rows: [SQLQueryString] = []
        for _ in 0..<count {
            let book = random.pick(books)
            let seconds = random.int(days.lowerBound * 86_400...days.upperBound * 86_400)
            rows.append("(\(bind: child), \(bind: book), \(bind: random.int(0...900)), \(bind: random.chance(30)), now() - make_interval(secs => \(bind: seconds)))")
        }
        try await app.sql.raw("""
            INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at, recorded_at)
            SELECT c, b, p, d, t, t FROM (VALUES \(rows.joined(separator: ", "))) v(c, b, p, d, t)
            """).run()
    }

    static func statistics(_ app: Application, child: Int, zone: String) async throws -> [InsightsController.StatsDTO] {
        var all: [InsightsController.StatsDTO] = []
        for period in InsightsController.Period.allCases {
            all.append(try await InsightsController.statisticsInSQL(child: child, period: period, zone: zone, sql: app.sql))
        }
        return all
    }

    @Test("differential: statistics of every period, three children, random plays over four years (DST zone), equal before and after folding — at 30 months, then at 24 adding to the first's totals and tails; the budget's seconds too", .app)
    func differential() async throws {
        let app = try app()
        let zone = "America/New_York"
        var categories: [Int] = []
        for (i, name) in ["Moon", "Animals", "Sea"].enumerated() { categories.append(try await app.makeCategory(name, slug: "r\(i)", order: i % 2)) }
        var books: [Int] = []
        for i in 0..<12 { books.append(try await app.makeBook("Book \(i)", categories: Array(categories.prefix(i % 4)))) }
        let parent = try await app.makeParent(children: ["Ada", "Ben", "Cy"])
        try await app.sql.raw("UPDATE parents SET time_zone = \(bind: zone) WHERE id = \(bind: parent.id)").run()
        var random = CatalogEngineTests.Random(state: 2026_11_24)
        for child in parent.children {
            try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) SELECT \(bind: child), unnest(\(bind: Array(books.prefix(8))))").run()
            try await Self.insertPlays(app, child: child, books: books, count: 400, days: 0...1_460, random: &random)
            // Today: plays whose predecessor of the same book will be folded.
            try await Self.insertPlays(app, child: child, books: books, count: 10, days: 0...0, random: &random)
        }
        let clock = FamilyClock(timeZone: zone)!
        let today = clock.day(containing: Date())
        var before: [Int: [InsightsController.StatsDTO]] = [:], budget: [Int: Int] = [:]
        for child in parent.children {
            before[child] = try await Self.statistics(app, child: child, zone: zone)
            budget[child] = try await PlayAllowance.secondsWatched(child: child, in: today, on: app.sql)
        }
        let old = { (months: Int) -> SQLQueryString in "SELECT count(*) AS n FROM plays WHERE played_at < now() - make_interval(months => \(bind: months)::int)" }
        let oldCount = try await app.count(old(30))
        #expect(oldCount > 200)

        let outcome = try await PlayRetention.fold(olderThanMonths: 30, pool: app.db)
        #expect(outcome == .init(children: 3, plays: oldCount, skipped: false))
        #expect(try await app.count(old(30)) == 0)
        #expect(try await app.count("SELECT count(*) AS n FROM play_month_totals") > 0)
        for child in parent.children {
            #expect(try await Self.statistics(app, child: child, zone: zone) == before[child], "child \(child)")
            #expect(try await PlayAllowance.secondsWatched(child: child, in: today, on: app.sql) == budget[child])
        }
        // Six months on: the next fold adds to the same books' months and moves their tails.
        let next = try await app.count(old(24))
        #expect(next > 50)
        #expect(try await PlayRetention.fold(olderThanMonths: 24, pool: app.db).plays == next)
        #expect(try await PlayRetention.fold(olderThanMonths: 24, pool: app.db).plays == 0)
        for child in parent.children {
            #expect(try await Self.statistics(app, child: child, zone: zone) == before[child], "child \(child), second fold")
            #expect(try await PlayAllowance.secondsWatched(child: child, in: today, on: app.sql) == budget[child])
        }
        // The parent's view over HTTP (a folded child is answered in SQL) agrees.
        let http = try await app.get("/api/v1/children/\(parent.children[0])/stats?period=all&tz=\(zone)", token: parent.token)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let shown = try decoder.decode(ItemDTO<InsightsController.StatsDTO>.self, from: Data(http.body.readableBytesView)).data
        #expect(shown == before[parent.children[0]]![2])
        // The export carries the totals; removing the child removes them.
        let export = try await app.get("/api/v1/children/\(parent.children[1])/export", token: parent.token).json
        #expect(((export["play_month_totals"] as? [Any])?.count ?? 0) > 0)
        #expect(try await app.send(.DELETE, "/api/v1/children/\(parent.children[1])", token: parent.token).status == .ok)
        #expect(try await app.count("SELECT count(*) AS n FROM play_month_totals WHERE child_id = \(bind: parent.children[1])") == 0)
    }

    @Test("one fold at a time: while one instance holds the lock, another does nothing", .app)
    func oneAtATime() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let book = try await app.makeBook("Old")
        try await app.sql.raw("INSERT INTO plays (child_id, book_id, position_seconds, played_at) VALUES (\(bind: parent.children[0]), \(bind: book), 60, now() - interval '30 months')").run()
        try await app.db.withConnection { connection in
            let holder = connection as! any SQLDatabase
            try await holder.raw("BEGIN").run()
            try await holder.raw("SELECT pg_advisory_xact_lock(\(unsafeRaw: String(PlayRetention.lockKey)))").run()
            #expect(try await PlayRetention.fold(olderThanMonths: 24, pool: app.db) == .init(children: 0, plays: 0, skipped: true))
            try await holder.raw("ROLLBACK").run()
        }
        #expect(try await PlayRetention.fold(olderThanMonths: 24, pool: app.db) == .init(children: 1, plays: 1, skipped: false))
    }
}
