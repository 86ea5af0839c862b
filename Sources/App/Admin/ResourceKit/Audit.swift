import SQLKit
import Vapor

/// Writes the audit log: who, when, what, before → after. Always inside the change's transaction.
struct AuditWriter: Sendable {
    let staff: StaffUser

    /// One audit row per record, in one statement with seven binds however many records.
    func record(_ action: String, table: String, ids: [Int], before: [Int: String], after: [Int: String],
                on sql: any SQLDatabase) async throws {
        guard !ids.isEmpty else { return }
        try await sql.raw("""
            INSERT INTO audit_log (staff_user_id, staff_email, action, table_name, record_id, before, after)
            SELECT \(bind: staff.id), \(bind: staff.email), \(bind: action), \(bind: table), x.id, x.before::jsonb, x.after::jsonb
              FROM unnest(\(bind: ids)::bigint[], \(bind: ids.map { before[$0] })::text[], \(bind: ids.map { after[$0] })::text[])
                   AS x(id, before, after)
            """).run()
    }
}
