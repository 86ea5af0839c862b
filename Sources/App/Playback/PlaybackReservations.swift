import Foundation
import SQLKit
import Vapor

/// The minutes playback grants hold from a child's daily budget (`migrations/0035`). A grant
/// given while today has a daily limit reserves its whole length, under the child's row lock
/// (`PlayAllowance.lockChild`), so grants asked together are judged one after another and never
/// add up past the budget.
///
/// A reservation counts, while its grant lives, for its seconds minus what the plays of its book
/// recorded since it was given counted (those seconds are in the plays now); once the grant has
/// ended it counts no more — what was not watched comes back, and what was watched counts when
/// its plays arrive. Plays themselves are judged on
/// recorded minutes only (a play reported during its own grant is not refused for the grant).
enum PlaybackReservations {
    struct Held: Decodable { let seconds: Int; let firstEnd: Date? }

    /// The seconds `child`'s live grants still hold at `now`, and when the first of them ends.
    /// In the transaction that holds the child's lock.
    static func held(child: Int, now: Date, on sql: any SQLDatabase) async throws -> Held {
        try await sql.raw("""
            SELECT COALESCE(sum(GREATEST(r.seconds - COALESCE(w.seconds, 0), 0)), 0)::bigint AS seconds,
                   min(r.expires_at) AS first_end
              FROM playback_reservations r
              LEFT JOIN LATERAL (
                  SELECT sum(CASE WHEN prev.position_seconds IS NOT NULL AND NOT prev.completed
                                       AND p.position_seconds >= prev.position_seconds
                                  THEN p.position_seconds - prev.position_seconds ELSE p.position_seconds END) AS seconds
                    FROM plays p
                    LEFT JOIN LATERAL (
                        SELECT position_seconds, completed FROM (
                            (SELECT q.position_seconds, q.completed, 0 AS source FROM plays q
                              WHERE q.child_id = p.child_id AND q.book_id = p.book_id AND (q.played_at, q.id) < (p.played_at, p.id)
                              ORDER BY q.played_at DESC, q.id DESC LIMIT 1)
                            UNION ALL
                            SELECT t.position_seconds, t.completed, 1 FROM play_fold_tails t WHERE t.child_id = p.child_id AND t.book_id = p.book_id
                        ) earlier ORDER BY source LIMIT 1) prev ON true
                   WHERE p.child_id = r.child_id AND p.book_id = r.book_id AND COALESCE(p.recorded_at, p.played_at) >= r.granted_at
              ) w ON true
             WHERE r.child_id = \(bind: child) AND r.expires_at > \(bind: now)::timestamptz
            """).first(decoding: Held.self, keyDecodingStrategy: .convertFromSnakeCase) ?? Held(seconds: 0, firstEnd: nil)
    }

    /// Reserves `seconds` for the grant `id` of `book` (and drops `child`'s reservations ended a day ago).
    static func reserve(child: Int, book: Int, grant id: UUID, now: Date, until expiry: Date, seconds: Int,
                        on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            DELETE FROM playback_reservations WHERE child_id = \(bind: child) AND expires_at < \(bind: now)::timestamptz - interval '1 day'
            """).run()
        try await sql.raw("""
            INSERT INTO playback_reservations (child_id, book_id, grant_id, granted_at, expires_at, seconds)
            VALUES (\(bind: child), \(bind: book), \(bind: id), \(bind: now), \(bind: expiry), \(bind: max(0, seconds)))
            """).run()
    }

    /// The 403 of a budget the recorded plays and the live grants use up; minutes may come back
    /// when the first grant ends, else at the next day.
    static func exhausted(dailySeconds: Int, now: Date, firstEnd: Date?, nextDay: Date) -> Problem {
        let until = min(firstEnd ?? nextDay, nextDay)
        return Problem(status: .forbidden, code: "time_limit_reached",
                       detail: "Today's \(dailySeconds / 60) minutes are used or held by playback grants still running; ask again once one ends.",
                       headers: ["Retry-After": String(max(1, Int(until.timeIntervalSince(now).rounded(.up))))])
    }
}
