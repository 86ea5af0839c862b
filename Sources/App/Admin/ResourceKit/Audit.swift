import SQLKit
import Vapor

/// Writes the audit log: who, when, what, before → after. Always inside the change's transaction.
/// The one writer of `audit_log`: the console's changes (`ResourceStore.audited`), and the parts
/// of the system that change records on their own — the schedule (`ScheduleAudit`) and the video
/// pipeline (`VideoEvents`) — each with a typed `AuditAction`.
struct AuditWriter: Sendable {
    /// Who the log names: a staff member's id and email, or (no id) a part of the system by name.
    let staffID: Int?
    let actor: String

    init(staff: StaffUser) {
        staffID = staff.id
        actor = staff.email
    }

    /// A part of the system acting on its own ("schedule", "video pipeline").
    init(system name: String) {
        staffID = nil
        actor = name
    }

    /// One audit row per record, in one statement with eight binds however many records: the
    /// kind, and its words with `detail` (`AuditAction.words(_:)`). `onceOnly`: a row a unique
    /// index already holds is skipped (the schedule's transitions, `audit_log_schedule_once`).
    /// Returns how many rows were written.
    @discardableResult
    func record(_ action: AuditAction, detail: String? = nil, table: String, ids: [Int], before: [Int: String], after: [Int: String],
                onceOnly: Bool = false, on sql: any SQLDatabase) async throws -> Int {
        guard !ids.isEmpty else { return 0 }
        let insert: SQLQueryString = """
            INSERT INTO audit_log (staff_user_id, staff_email, kind, action, table_name, record_id, before, after)
            SELECT \(bind: staffID), \(bind: actor), \(bind: action.rawValue), \(bind: action.words(detail)), \(bind: table),
                   x.id, x.before::jsonb, x.after::jsonb
              FROM unnest(\(bind: ids)::bigint[], \(bind: ids.map { before[$0] })::text[], \(bind: ids.map { after[$0] })::text[])
                   AS x(id, before, after)
            """
        guard onceOnly else {
            try await sql.raw(insert).run()
            return ids.count
        }
        return try await sql.raw("\(insert) ON CONFLICT DO NOTHING RETURNING 1 AS one").all().count
    }
}
