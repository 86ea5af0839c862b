import SQLKit
import Vapor

/// Writes the audit log: who, when, what, before → after. Always inside the change's transaction.
struct AuditWriter: Sendable {
    let staff: StaffUser

    /// One audit row per record, in one statement with eight binds however many records: the
    /// kind, and its words with `detail` (`AuditAction.words(_:)`).
    func record(_ action: AuditAction, detail: String? = nil, table: String, ids: [Int], before: [Int: String], after: [Int: String],
                on sql: any SQLDatabase) async throws {
        guard !ids.isEmpty else { return }
        try await sql.raw("""
            INSERT INTO audit_log (staff_user_id, staff_email, kind, action, table_name, record_id, before, after)
            SELECT \(bind: staff.id), \(bind: staff.email), \(bind: action.rawValue), \(bind: action.words(detail)), \(bind: table),
                   x.id, x.before::jsonb, x.after::jsonb
              FROM unnest(\(bind: ids)::bigint[], \(bind: ids.map { before[$0] })::text[], \(bind: ids.map { after[$0] })::text[])
                   AS x(id, before, after)
            """).run()
    }
}
