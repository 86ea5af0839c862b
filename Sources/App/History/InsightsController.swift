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
        return try await req.appServices.childAnswers.answer(for: key(Instants.today(in: zone)), fingerprint: child.fingerprint, on: req.eventLoop) {
            let stats: StatsDTO
            if let timeZone = TimeZone(identifier: zone), let loaded = try await req.appServices.childPlayLogs.log(for: child, app: req.application) {
                stats = Self.statistics(of: loaded, period: period, zone: zone, timeZone: timeZone)
            } else {
                stats = try await Self.statisticsInSQL(child: child.id, period: period, zone: zone, sql: req.sql)
            }
            return (Response.json(try ByteBuffer.json(ItemDTO(data: stats))), key(stats.to), nil)
        }
    }

    static func periodDays(_ period: Period) -> Int? {
        switch period { case .week: 6; case .month: 29; case .all: nil }
    }

    /// The statistics from a child's play log (`PlayStatistics`), today by this machine's clock.
    static func statistics(of loaded: LoadedPlayLog, period: Period, zone: String, timeZone: TimeZone, now: Date = Date()) -> StatsDTO {
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

    /// The same statistics in one SQL statement: the path for a child whose log is not kept in
    /// memory (or who has folded plays, `PlayRetention`), and the reference the play log is tested
    /// against. Folded plays count through their totals: daily ones for the series and streaks,
    /// monthly ones per book for the rest, and each book's last folded play for the kept play after it.
    static func statisticsInSQL(child childID: Int, period: Period, zone: String, sql: any SQLDatabase) async throws -> StatsDTO {
        let days = periodDays(period)
        // Every play with its day, rewatch flag and seconds watched; then the period's aggregates.
        let row = try await sql.raw("""
            WITH today AS (SELECT (now() AT TIME ZONE \(bind: zone))::date AS d),
            source AS (
                SELECT p.id, p.book_id, p.played_at, p.position_seconds, p.completed, p.completed AS completed_any, false AS tail
                  FROM plays p WHERE p.child_id = \(bind: childID)
                UNION ALL
                SELECT 0, t.book_id, t.played_at, t.position_seconds, t.completed, t.ever_completed, true
                  FROM play_fold_tails t WHERE t.child_id = \(bind: childID)
            ),
            played AS (
                SELECT p.tail, p.book_id, p.completed, (p.played_at AT TIME ZONE \(bind: zone))::date AS day,
                       COALESCE(bool_or(p.completed_any) OVER earlier, false) AS rewatch,
                       CASE WHEN lag(p.position_seconds) OVER book IS NOT NULL AND NOT lag(p.completed) OVER book
                                 AND p.position_seconds >= lag(p.position_seconds) OVER book
                            THEN p.position_seconds - lag(p.position_seconds) OVER book
                            ELSE p.position_seconds END AS watched
                  FROM source p
                WINDOW book AS (PARTITION BY p.book_id ORDER BY p.played_at, p.id),
                       earlier AS (book ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
            ),
            folded_days AS (SELECT day, plays, seconds FROM play_day_totals WHERE child_id = \(bind: childID)),
            bounds AS (
                SELECT CASE WHEN \(bind: days == nil) THEN LEAST(COALESCE((SELECT min(day) FROM played WHERE NOT tail), t.d),
                                                            COALESCE((SELECT min(day) FROM folded_days), t.d), t.d)
                            ELSE t.d - \(bind: days ?? 0)::int END AS first, t.d AS last FROM today t
            ),
            inp AS (SELECT played.* FROM played, bounds WHERE NOT played.tail AND played.day BETWEEN bounds.first AND bounds.last),
            -- Each kept play, and each folded month of a book (all time only: folds are older than any week or month).
            events AS (
                SELECT book_id, date_trunc('month', day)::date AS month, 1 AS plays, completed::int AS completed_plays,
                       rewatch::int AS rewatches, watched AS seconds FROM inp
                UNION ALL
                SELECT book_id, month, plays, completed_plays, rewatches, seconds FROM play_month_totals
                 WHERE child_id = \(bind: childID) AND \(bind: days == nil)
            ),
            completed_books AS (SELECT DISTINCT book_id FROM events WHERE completed_plays > 0),
            library AS (SELECT le.book_id FROM library_entries le WHERE le.child_id = \(bind: childID)),
            per_day AS (
                SELECT day, sum(plays)::bigint AS plays, sum(seconds)::bigint AS seconds FROM (
                    SELECT day, 1 AS plays, watched AS seconds FROM inp
                    UNION ALL SELECT f.day, f.plays, f.seconds FROM folded_days f, bounds WHERE f.day BETWEEN bounds.first AND bounds.last) d
                 GROUP BY day
            )
            SELECT to_char(bounds.first, 'YYYY-MM-DD') AS first, to_char(bounds.last, 'YYYY-MM-DD') AS last,
                   (SELECT count(*) FROM library) AS library_books,
                   (SELECT count(*) FROM library l JOIN completed_books c ON c.book_id = l.book_id) AS library_completed,
                   (SELECT COALESCE(sum(plays), 0) FROM events)::bigint AS plays,
                   (SELECT COALESCE(sum(rewatches), 0) FROM events)::bigint AS rewatches,
                   (SELECT count(*) FROM completed_books) AS completed_books,
                   (SELECT COALESCE(sum(e.plays), 0) FROM events e JOIN completed_books c ON c.book_id = e.book_id)::bigint AS plays_of_completed,
                   (SELECT COALESCE(sum(seconds), 0) FROM events)::bigint AS seconds,
                   (SELECT to_char(month, 'YYYY-MM') FROM events GROUP BY month ORDER BY sum(plays) DESC, month DESC LIMIT 1) AS most_active_month,
                   (SELECT json_build_object('id', c.id, 'name', c.name, 'slug', c.slug)::text
                      FROM events e JOIN book_categories bc ON bc.book_id = e.book_id JOIN categories c ON c.id = bc.category_id
                     GROUP BY c.id ORDER BY sum(e.plays) DESC, c.display_order, c.name, c.id LIMIT 1) AS favourite,
                   (SELECT COALESCE(json_agg(json_build_object('date', to_char(g.d, 'YYYY-MM-DD'), 'plays', COALESCE(a.plays, 0),
                                                               'minutes_watched', COALESCE(a.seconds, 0) / 60) ORDER BY g.d), '[]')::text
                      FROM generate_series(bounds.first, bounds.last, interval '1 day') AS g(d)
                      LEFT JOIN per_day a ON a.day = g.d::date) AS series,
                   ARRAY(SELECT day - DATE '2000-01-01' FROM played WHERE NOT tail UNION SELECT day - DATE '2000-01-01' FROM folded_days ORDER BY 1) AS days,
                   (SELECT d - DATE '2000-01-01' FROM today) AS today
              FROM bounds
            """).first()!
        let library = try row.decode(column: "library_books", as: Int.self)
        let libraryCompleted = try row.decode(column: "library_completed", as: Int.self)
        let completedBooks = try row.decode(column: "completed_books", as: Int.self)
        let playsOfCompleted = try row.decode(column: "plays_of_completed", as: Int.self)
        let streaks = Streaks.of(days: try row.decode(column: "days", as: [Int].self), today: try row.decode(column: "today", as: Int.self))
        let favourite = try row.decode(column: "favourite", as: String?.self)
        let series = try row.decode(column: "series", as: String.self)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return StatsDTO(
            period: period.rawValue, timeZone: zone,
            from: try row.decode(column: "first", as: String.self), to: try row.decode(column: "last", as: String.self),
            booksCompleted: libraryCompleted, booksNotCompleted: library - libraryCompleted,
            completionPercentage: percentage(libraryCompleted, of: library),
            plays: try row.decode(column: "plays", as: Int.self), rewatches: try row.decode(column: "rewatches", as: Int.self),
            averagePlaysPerCompletedBook: average(playsOfCompleted, over: completedBooks),
            favouriteCategory: try favourite.map { try decoder.decode(StatsDTO.Category.self, from: Data($0.utf8)) },
            mostActiveMonth: try row.decode(column: "most_active_month", as: String?.self),
            minutesWatched: try row.decode(column: "seconds", as: Int.self) / 60,
            currentStreak: streaks.current, longestStreak: streaks.longest,
            series: try decoder.decode([StatsDTO.Day].self, from: Data(series.utf8)))
    }
}
