import Foundation
import SQLKit

/// Writes each scheduled transition (a book going live, or leaving the catalog, by its schedule)
/// to the audit log once, through the one audit writer (`AuditWriter`, named "schedule"). Parents
/// see the change at the instant itself — availability is evaluated against the clock — so this
/// record may follow it by up to `interval`; every instance runs it, and a unique index
/// (`audit_log_schedule_once`, on the kind) keeps one row per transition.
enum ScheduleAudit {
    static let interval: Duration = .seconds(30)
    static let auditName = "schedule"

    /// A transition due and not yet recorded: the book, which way, and its snapshot (`{"at": …}`).
    private struct Due: Decodable { let id: Int; let live: Bool; let after: String }

    /// Records the transitions of the 30 days before `now` (the app's clock) not yet recorded;
    /// returns how many. One statement finds them (none, most of the time); the audit rows are
    /// written went-live first, each kind in one statement.
    @discardableResult
    static func record(on sql: any SQLDatabase, at now: Date) async throws -> Int {
        func due(_ action: AuditAction, _ column: String) -> SQLQueryString {
            """
            SELECT b.id, \(bind: action == .scheduledLive) AS live, jsonb_build_object('at', b.\(unsafeRaw: column))::text AS after, b.\(unsafeRaw: column) AS at
              FROM books b
             WHERE b.status = 'active' AND b.\(unsafeRaw: column) <= \(at: now) AND b.\(unsafeRaw: column) > \(at: now) - interval '30 days'
               AND NOT EXISTS (SELECT 1 FROM audit_log a WHERE a.table_name = 'books' AND a.record_id = b.id AND a.kind = \(bind: action.rawValue)
                                  AND a.after->>'at' = jsonb_build_object('at', b.\(unsafeRaw: column))->>'at')
            """
        }
        let rows = try await sql.raw("""
            SELECT id, live, after FROM (\(due(.scheduledLive, "live_from")) UNION ALL \(due(.scheduledLeft, "live_until"))) d ORDER BY at, id
            """).all(decoding: Due.self)
        guard !rows.isEmpty else { return 0 }
        let writer = AuditWriter(system: auditName)
        var written = 0
        for (action, live) in [(AuditAction.scheduledLive, true), (.scheduledLeft, false)] {
            let transitions = rows.filter { $0.live == live }
            written += try await writer.record(action, table: "books", ids: transitions.map(\.id), before: [:],
                                               after: Dictionary(transitions.map { ($0.id, $0.after) }, uniquingKeysWith: { first, _ in first }),
                                               onceOnly: true, on: sql)
        }
        return written
    }
}
