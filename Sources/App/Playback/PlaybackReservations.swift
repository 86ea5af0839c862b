import Foundation
import SQLKit
import Vapor

/// The minutes playback grants hold from a child's daily budget (`migrations/0035`). A grant
/// given while today has a daily limit reserves what it may play — the book's length, or the
/// minutes left when fewer (`PlaybackController.grant`) — under the child's row lock
/// (`PlayAllowance.lockChild`), so grants asked together are judged one after another and never
/// add up past the budget.
///
/// **A reservation stays spent for the day its grant was given** (the family's day, as the daily
/// budget counts days), whether or not plays arrive: the grant's token can be watched to its
/// expiry, so a tablet that never reports plays cannot get a fresh grant when one ends. Plays do
/// not count twice: per book, today's reservations count their seconds less what the book's plays
/// recorded today since its first grant of the day counted (those seconds are in the plays), never
/// below zero — pooled per book, so one play never lowers two grants of its book. Plays themselves
/// are judged on recorded minutes only (a play reported during its own grant is not refused for
/// the grant).
enum PlaybackReservations {
    struct Held: Decodable { let seconds: Int }

    /// The seconds `child`'s grants given in `day` still hold. In the transaction that holds the
    /// child's lock when a grant is judged; on any connection for `/today`.
    static func held(child: Int, in day: DateInterval, on sql: any SQLDatabase) async throws -> Int {
        try await sql.raw("""
            SELECT COALESCE(sum(GREATEST(r.seconds - COALESCE(w.seconds, 0), 0)), 0)::bigint AS seconds
              FROM (SELECT book_id, sum(seconds) AS seconds, min(granted_at) AS since
                      FROM playback_reservations
                     WHERE child_id = \(bind: child) AND granted_at >= \(bind: day.start) AND granted_at < \(bind: day.end)
                     GROUP BY book_id) r
              LEFT JOIN LATERAL (
                  SELECT sum(\(PlaySeconds.ofPlay)) AS seconds
                    FROM plays p \(PlaySeconds.previous)
                   WHERE p.child_id = \(bind: child) AND p.book_id = r.book_id
                     AND COALESCE(p.recorded_at, p.played_at) >= r.since AND COALESCE(p.recorded_at, p.played_at) < \(bind: day.end)
              ) w ON true
            """).first(decoding: Held.self)?.seconds ?? 0
    }

    /// Reserves `seconds` for the grant `id` of `book` (and drops `child`'s reservations ended two
    /// days ago — a day is at most 25 hours, so none of them counts today).
    static func reserve(child: Int, book: Int, grant id: UUID, now: Date, until expiry: Date, seconds: Int,
                        on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            DELETE FROM playback_reservations WHERE child_id = \(bind: child) AND expires_at < \(bind: now)::timestamptz - interval '2 days'
            """).run()
        try await sql.raw("""
            INSERT INTO playback_reservations (child_id, book_id, grant_id, granted_at, expires_at, seconds)
            VALUES (\(bind: child), \(bind: book), \(bind: id), \(bind: now), \(bind: expiry), \(bind: max(0, seconds)))
            """).run()
    }

    /// The 403 of a budget the recorded plays and today's grants use up: minutes come back at
    /// `until`, the next allowed moment of a day whose minutes are used (the next day, past its bedtime).
    static func exhausted(dailySeconds: Int, now: Date, until: Date) -> Problem {
        Problem(status: .forbidden, code: "time_limit_reached",
                detail: "Today's \(dailySeconds / 60) minutes are used or held by today's playback grants; grants are given again at \(ISO8601DateFormatter().string(from: until)).",
                headers: ["Retry-After": String(max(1, Int(until.timeIntervalSince(now).rounded(.up))))])
    }
}
