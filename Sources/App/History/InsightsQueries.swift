import Foundation
import SQLKit

/// The statement of a child's viewing statistics in SQL (`InsightsController.statisticsInSQL`).
enum InsightsQueries {
    /// The period's aggregates; `favourite` and `series` are JSON, `days` and `today` days since 2000-01-01.
    struct Statistics: Decodable {
        let first: String
        let last: String
        let libraryBooks: Int
        let libraryCompleted: Int
        let plays: Int
        let rewatches: Int
        let completedBooks: Int
        let playsOfCompleted: Int
        let seconds: Int
        let mostActiveMonth: String?
        let favourite: String?
        let series: String
        let days: [Int]
        let today: Int
    }

    /// The statistics of the `days` days before today (nil: all time) in the family's `zone`, in one
    /// statement. Folded plays count through their totals: daily ones for the series and streaks,
    /// monthly ones per book for the rest, and each book's last folded play for the kept play after it.
    static func statistics(child childID: Int, days: Int?, zone: String, on sql: any SQLDatabase) async throws -> Statistics {
        // Every play with its day, rewatch flag and seconds watched; then the period's aggregates.
        try await sql.raw("""
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
                       \(PlaySeconds.watched(of: "p", over: "book")) AS watched
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
            """).first(decoding: Statistics.self, keyDecodingStrategy: .convertFromSnakeCase)!
    }
}
