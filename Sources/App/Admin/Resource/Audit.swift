import SQLKit
import Vapor

/// Writes the audit log: who, when, what, before → after. Always inside the change's transaction.
struct AuditWriter: Sendable {
    let staff: StaffUser

    /// JSON snapshots of `ids` in `table` (using the resource's snapshot SQL over alias `t`).
    static func snapshots(_ snapshot: String, table: String, ids: [Int], on sql: any SQLDatabase) async throws -> [Int: String] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await sql.raw("""
            SELECT t.id, (\(unsafeRaw: snapshot))::text AS snapshot FROM \(ident: table) t WHERE t.id = ANY(\(bind: ids)::bigint[])
            """).all()
        var result: [Int: String] = [:]
        for row in rows {
            result[try row.decode(column: "id", as: Int.self)] = try row.decode(column: "snapshot", as: String.self)
        }
        return result
    }

    /// One audit row per record.
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
