import FluentKit
import SQLKit
import Vapor

/// Plays older than `PLAY_RETENTION_MONTHS` are folded into totals and deleted: per child, book
/// and month (plays, completions, rewatches, seconds watched), per child and day (plays, seconds:
/// the series and streaks), and each book's last folded play (`play_fold_tails`), so the kept
/// play after it is still counted from where it stopped. Statistics read the totals
/// (`InsightsController.statisticsInSQL`) and stay what they were. Days are the family's zone at
/// the time of folding.
///
/// Any instance may run it (hourly, the job `play retention` in `Jobs.swift`; or `App plays
/// fold`): a transaction holds an advisory lock, so one runs at a time and another finds the work done.
enum PlayRetention {
    static let interval: Duration = .seconds(3600)
    static let lockKey = 0x5354_5259_464f_4c44 as Int64   // "STRYFOLD"
    /// Children folded per transaction.
    static let batch = 200

    struct Outcome: Sendable, Equatable { var children = 0; var plays = 0; var skipped = false }
    struct Locked: Decodable { let locked: Bool }
    /// A batch's children and plays folded.
    struct Folded: Decodable { let children: Int; let plays: Int }

    /// Folds every play played more than `months` months ago, on one database session `sql` (a
    /// transaction per batch); nothing when another run holds the lock.
    static func fold(olderThanMonths months: Int, on sql: any SQLDatabase) async throws -> Outcome {
        var outcome = Outcome()
        while true {
            try await sql.raw("BEGIN").run()
            do {
                guard try await sql.raw("SELECT pg_try_advisory_xact_lock(\(bind: lockKey)) AS locked").one(decoding: Locked.self).locked else {
                    try await sql.raw("ROLLBACK").run()
                    outcome.skipped = true
                    return outcome
                }
                let row = try await sql.raw(foldStatement(months: months)).one(decoding: Folded.self)
                try await sql.raw("COMMIT").run()
                let children = row.children
                outcome.children += children
                outcome.plays += row.plays
                if children < batch { return outcome }
            } catch {
                try? await sql.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    /// The same on a connection of `db`'s pool.
    static func fold(olderThanMonths months: Int, pool db: any Database) async throws -> Outcome {
        try await db.withConnection { connection in try await fold(olderThanMonths: months, on: connection as! any SQLDatabase) }
    }

    /// One statement for a batch of children: every play's day, rewatch and seconds by the
    /// statistics' rules (over all its child's history, folded tails included), the old ones
    /// added to the totals, the tails moved on, the old rows deleted.
    private static func foldStatement(months: Int) -> SQLQueryString {
        """
        WITH cutoff AS (SELECT now() - make_interval(months => \(bind: months)::int) AS t),
        batch AS (SELECT DISTINCT p.child_id FROM plays p, cutoff WHERE p.played_at < cutoff.t LIMIT \(bind: batch)),
        source AS (
            SELECT p.child_id, p.id, p.book_id, p.played_at, p.position_seconds, p.completed, p.completed AS completed_any, false AS tail
              FROM plays p WHERE p.child_id IN (SELECT child_id FROM batch)
            UNION ALL
            SELECT t.child_id, 0, t.book_id, t.played_at, t.position_seconds, t.completed, t.ever_completed, true
              FROM play_fold_tails t WHERE t.child_id IN (SELECT child_id FROM batch)
        ),
        played AS (
            SELECT s.*, (s.played_at AT TIME ZONE par.time_zone)::date AS day,
                   COALESCE(bool_or(s.completed_any) OVER earlier, false) AS rewatch,
                   \(PlaySeconds.watched(of: "s", over: "book")) AS watched,
                   row_number() OVER (PARTITION BY s.child_id, s.book_id ORDER BY s.played_at DESC, s.id DESC) AS newest
              FROM source s JOIN children c ON c.id = s.child_id \(FamilyRole.organizer(ofChild: "c", as: "par"))
            WINDOW book AS (PARTITION BY s.child_id, s.book_id ORDER BY s.played_at, s.id),
                   earlier AS (book ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
        ),
        old AS (SELECT played.* FROM played, cutoff WHERE NOT played.tail AND played.played_at < cutoff.t),
        months AS (
            INSERT INTO play_month_totals AS m (child_id, book_id, month, plays, completed_plays, rewatches, seconds)
            SELECT child_id, book_id, date_trunc('month', day)::date, count(*), count(*) FILTER (WHERE completed),
                   count(*) FILTER (WHERE rewatch), sum(watched)
              FROM old GROUP BY 1, 2, 3
            ON CONFLICT (child_id, book_id, month) DO UPDATE SET plays = m.plays + EXCLUDED.plays,
                completed_plays = m.completed_plays + EXCLUDED.completed_plays, rewatches = m.rewatches + EXCLUDED.rewatches,
                seconds = m.seconds + EXCLUDED.seconds
        ),
        days AS (
            INSERT INTO play_day_totals AS d (child_id, day, plays, seconds)
            SELECT child_id, day, count(*), sum(watched) FROM old GROUP BY 1, 2
            ON CONFLICT (child_id, day) DO UPDATE SET plays = d.plays + EXCLUDED.plays, seconds = d.seconds + EXCLUDED.seconds
        ),
        tails AS (
            INSERT INTO play_fold_tails AS t (child_id, book_id, played_at, position_seconds, completed, ever_completed)
            SELECT DISTINCT ON (child_id, book_id) child_id, book_id, played_at, position_seconds, completed, rewatch OR completed
              FROM old ORDER BY child_id, book_id, played_at DESC, id DESC
            ON CONFLICT (child_id, book_id) DO UPDATE SET played_at = EXCLUDED.played_at, position_seconds = EXCLUDED.position_seconds,
                completed = EXCLUDED.completed, ever_completed = t.ever_completed OR EXCLUDED.ever_completed
                WHERE EXCLUDED.played_at >= t.played_at
        ),
        removed AS (DELETE FROM plays WHERE id IN (SELECT id FROM old) RETURNING 1)
        SELECT (SELECT count(*) FROM batch) AS children, (SELECT count(*) FROM removed) AS plays
        """
    }
}
