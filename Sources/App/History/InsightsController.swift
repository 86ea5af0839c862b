import Core
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// A child's viewing statistics (the plan's insights) for the last week, month or all time, days
/// in the family's time zone (`tz`).
///
/// Rules (docs/api.md, "Viewing history, insights and libraries across children"):
/// - seconds watched by a play: its position minus the position of the play of the same book
///   before it, when that one was not completed and the position went forward; otherwise the
///   position itself (a viewing from the start);
/// - `week` is today and the 6 days before, `month` today and the 29 before, `all` from the first
///   play; the series has one entry per day of that period;
/// - streaks count over all time (`Streaks`), whatever the period.
struct InsightsController: ChildRouteCollection {
    func boot(child: ChildRoutes) throws {
        child.parent.get("stats", use: stats)
    }

    enum Period: String, CaseIterable { case week, month, all }

    struct StatsDTO: Content, Equatable {
        struct Category: Codable, Sendable, Equatable { let id: Int; let name: String; let slug: String }
        struct Day: Codable, Sendable, Equatable { let date: String; let plays: Int; let minutesWatched: Int }
        let period: String
        let timeZone: String
        let from: String
        let to: String
        let booksCompleted: Int
        let booksNotCompleted: Int
        let completionPercentage: Double
        let plays: Int
        let rewatches: Int
        @ExplicitNull var averagePlaysPerCompletedBook: Double?
        @ExplicitNull var favouriteCategory: Category?
        @ExplicitNull var mostActiveMonth: String?
        let minutesWatched: Int
        let currentStreak: Int
        let longestStreak: Int
        let series: [Day]

    }

    /// Statistics are kept per child, period, zone and day (`ChildAnswers`) until the child's
    /// plays or library or the catalog (categories) change. The day in a key is the one the
    /// answer was computed for (its `to`); a request looks under today by its own clock, so around
    /// midnight a clock ahead of the database's only misses until they agree. Computed from the
    /// child's play log in memory (`ChildPlayLogs`), or in SQL for a child too large for it.
    @Sendable
    func stats(req: Request) async throws -> Response {
        let child = try req.child
        let query = QueryParameters(query: req.url.query)
        let period = try query.choice("period", as: Period.self, allowed: Period.allCases) ?? .all
        let zone = try await req.timeZone(query)
        let key = { (day: String) in "stats|\(child.id)|\(period.rawValue)|\(zone)|\(day)" }
        return try await req.appServices.childAnswers.answer(for: key(Instants.today(in: zone, now: req.now)), fingerprint: child.fingerprint, clock: req.appServices.clock, on: req.eventLoop) {
            let stats: StatsDTO
            if let timeZone = TimeZone(identifier: zone), let loaded = try await req.appServices.childPlayLogs.log(for: child, app: req.application) {
                stats = Self.statistics(of: loaded, period: period, zone: zone, timeZone: timeZone, now: req.now)
            } else {
                stats = try await Self.statisticsInSQL(child: child.id, period: period, zone: zone, sql: req.sql)
            }
            return (Response.json(try ByteBuffer.json(ItemDTO(data: stats))), key(stats.to), nil)
        }
    }

    static func periodDays(_ period: Period) -> Int? {
        switch period { case .week: 6; case .month: 29; case .all: nil }
    }

    /// The statistics from a child's play log (`PlayStatistics`), today being the day of `now`.
    static func statistics(of loaded: LoadedPlayLog, period: Period, zone: String, timeZone: TimeZone, now: Date) -> StatsDTO {
        let s = PlayStatistics(log: loaded.log, days: loaded.days(in: timeZone), today: CivilDays.today(in: timeZone, now: now),
                               periodDays: periodDays(period), library: loaded.library,
                               categories: { loaded.categoriesOfBook[$0] ?? [] }, rank: { loaded.categoryRank[$0] ?? Int.max })
        return StatsDTO(
            period: period.rawValue, timeZone: zone, from: CivilDays.text(of: s.first), to: CivilDays.text(of: s.last),
            booksCompleted: s.libraryCompleted, booksNotCompleted: s.libraryBooks - s.libraryCompleted,
            completionPercentage: percentage(s.libraryCompleted, of: s.libraryBooks),
            plays: s.plays, rewatches: s.rewatches,
            averagePlaysPerCompletedBook: average(s.playsOfCompleted, over: s.completedBooks),
            favouriteCategory: s.favouriteCategory.flatMap { loaded.categories[$0] },
            mostActiveMonth: s.mostActiveMonth, minutesWatched: s.seconds / 60,
            currentStreak: s.currentStreak, longestStreak: s.longestStreak,
            series: s.series.map { StatsDTO.Day(date: CivilDays.text(of: $0.day), plays: $0.plays, minutesWatched: $0.seconds / 60) })
    }

    private static func percentage(_ part: Int, of whole: Int) -> Double {
        whole == 0 ? 0 : (Double(part) * 1000 / Double(whole)).rounded() / 10
    }

    private static func average(_ total: Int, over count: Int) -> Double? {
        count == 0 ? nil : (Double(total) * 100 / Double(count)).rounded() / 100
    }

    /// The same statistics in one SQL statement (`InsightsQueries.statistics`): the path for a
    /// child whose log is not kept in memory (or who has folded plays, `PlayRetention`), and the
    /// reference the play log is tested against.
    static func statisticsInSQL(child childID: Int, period: Period, zone: String, sql: any SQLDatabase) async throws -> StatsDTO {
        let row = try await InsightsQueries.statistics(child: childID, days: periodDays(period), zone: zone, on: sql)
        let library = row.libraryBooks
        let libraryCompleted = row.libraryCompleted
        let streaks = Streaks.of(days: row.days, today: row.today)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return StatsDTO(
            period: period.rawValue, timeZone: zone,
            from: row.first, to: row.last,
            booksCompleted: libraryCompleted, booksNotCompleted: library - libraryCompleted,
            completionPercentage: percentage(libraryCompleted, of: library),
            plays: row.plays, rewatches: row.rewatches,
            averagePlaysPerCompletedBook: average(row.playsOfCompleted, over: row.completedBooks),
            favouriteCategory: try row.favourite.map { try decoder.decode(StatsDTO.Category.self, from: Data($0.utf8)) },
            mostActiveMonth: row.mostActiveMonth,
            minutesWatched: row.seconds / 60,
            currentStreak: streaks.current, longestStreak: streaks.longest,
            series: try decoder.decode([StatsDTO.Day].self, from: Data(row.series.utf8)))
    }
}
