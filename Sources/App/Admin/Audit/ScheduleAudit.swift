import SQLKit
import Vapor

/// Writes each scheduled transition (a book going live, or leaving the catalog, by its schedule)
/// to the audit log once. Parents see the change at the instant itself — availability is
/// evaluated against the clock — so this record may follow it by up to `interval`; every instance
/// runs it, and a unique index (`audit_log_schedule_once`, on the kind) keeps one row per transition.
enum ScheduleAudit {
    static let interval: Duration = .seconds(30)

    private struct Count: Decodable { let n: Int }

    /// Records the transitions of the last 30 days not yet recorded; returns how many.
    @discardableResult
    static func record(on sql: any SQLDatabase) async throws -> Int {
        let live = AuditAction.scheduledLive, left = AuditAction.scheduledLeft
        return try await sql.raw("""
            WITH due AS (
                SELECT id, \(bind: live.rawValue) AS kind, \(bind: live.words()) AS action, live_from AS at FROM books
                 WHERE status = 'active' AND live_from <= now() AND live_from > now() - interval '30 days'
                UNION ALL
                SELECT id, \(bind: left.rawValue), \(bind: left.words()), live_until FROM books
                 WHERE status = 'active' AND live_until <= now() AND live_until > now() - interval '30 days'
            ), written AS (
                INSERT INTO audit_log (staff_user_id, staff_email, kind, action, table_name, record_id, before, after)
                SELECT NULL, 'schedule', due.kind, due.action, 'books', due.id, NULL, jsonb_build_object('at', due.at)
                  FROM due ORDER BY due.at
                ON CONFLICT DO NOTHING RETURNING 1
            )
            SELECT count(*) AS n FROM written
            """).first(decoding: Count.self)!.n
    }
}
