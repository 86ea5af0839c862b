import Foundation
import SQLKit

/// The audit log's statements: a page of entries, filtered, one entry to revert, and the staff to
/// filter by.
enum AuditQueries {
    /// What a page shows of the log; nil filters are not applied.
    struct Filter {
        /// The tables the viewer may see, when they may not see them all.
        var visibleTables: [String]?
        var staffID: Int?
        var table: String?
        var record: Int?
    }

    struct Row: Decodable {
        let id: Int
        let at: Date
        let staffUserId: Int?
        let staffEmail: String
        let kind: AuditAction
        let action: String
        let tableName: String
        let recordId: Int?
        let before: String?
        let after: String?
    }

    /// Up to `limit` entries from `offset`, newest first.
    static func entries(_ filter: Filter, limit: Int, offset: Int, on sql: any SQLDatabase) async throws -> [Row] {
        var conditions: [SQLQueryString] = []
        if let visibleTables = filter.visibleTables { conditions.append("a.table_name = ANY(\(bind: visibleTables))") }
        if let staffID = filter.staffID { conditions.append("a.staff_user_id = \(bind: staffID)") }
        if let table = filter.table { conditions.append("a.table_name = \(bind: table)") }
        if let record = filter.record { conditions.append("a.record_id = \(bind: record)") }
        let select = sql.select()
            .column(SQLColumn("id", table: "a"))
            .column(SQLAlias(SQLColumn("created_at", table: "a"), as: SQLIdentifier("at")))
            .columns(["staff_user_id", "staff_email", "kind", "action", "table_name", "record_id"].map { SQLColumn($0, table: "a") })
            .column(SQLAlias(SQLQueryString("a.before::text"), as: SQLIdentifier("before")))
            .column(SQLAlias(SQLQueryString("a.after::text"), as: SQLIdentifier("after")))
            .from(SQLAlias(SQLIdentifier("audit_log"), as: SQLIdentifier("a")))
        for condition in conditions { select.where(condition) }
        return try await select.orderBy(SQLColumn("created_at", table: "a"), SQLDirection.descending).orderBy(SQLColumn("id", table: "a"), SQLDirection.descending)
            .limit(limit).offset(offset).all(decoding: Row.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    struct Logged: Decodable {
        let kind: AuditAction
        let action: String
        let tableName: String
        let recordId: Int?
        let before: String?
        let after: String?
    }

    /// One entry, as a revert reads it; nil when there is none.
    static func entry(_ id: Int, on sql: any SQLDatabase) async throws -> Logged? {
        try await sql.raw("""
            SELECT kind, action, table_name, record_id, before::text AS before, after::text AS after FROM audit_log WHERE id = \(bind: id)
            """).first(decoding: Logged.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    struct Staff: Decodable { let id: Int; let email: String }

    /// Every staff account, by email.
    static func staff(on sql: any SQLDatabase) async throws -> [Staff] {
        try await sql.raw("SELECT id, email FROM staff_users ORDER BY lower(email)").all(decoding: Staff.self)
    }
}
