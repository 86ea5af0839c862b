import Foundation
import SQLKit
import Vapor

/// Reverting one audited change of a book, category, publisher or rights window, as a new
/// audited change (kind `revert`, shown as `revert #N`):
/// - an **update** (or a batch action's change of one record) sets back only the fields that
///   change changed — and only when none of them has changed since (otherwise it is refused,
///   naming them, so a later edit is never silently undone);
/// - a **create** is undone by deleting the record (refused while it is in use);
/// - a **delete** is undone by restoring the record with its id and values (a book with its
///   rights windows and the categories that still exist); refused when the id is taken again or
///   what it pointed to is gone.
struct AuditRevert: Sendable {
    static let tables: Set<String> = ["books", "categories", "publishers", "rights_windows"]
    /// Fields a revert never sets (kept by the database) and never compares.
    static let ignored: Set<String> = ["id", "created_at", "updated_at"]

    enum Kind: Sendable { case update([String]), delete, restore }

    struct Refused: Error { let message: String }

    let auditID: Int
    /// The entry's words, for the confirmation page.
    let action: String
    let resource: AdminResource
    let recordID: Int
    let beforeJSON: String?
    let afterJSON: String?
    let kind: Kind

    var before: [String: Any] { Self.object(beforeJSON) }
    var after: [String: Any] { Self.object(afterJSON) }

    /// The entry when it is one a revert can undo; nil otherwise (another table or kind).
    static func load(_ auditID: Int, on sql: any SQLDatabase) async throws -> AuditRevert? {
        guard let row = try await AuditQueries.entry(auditID, on: sql), row.kind.revertible,
              tables.contains(row.tableName), let resource = ResourceRegistry.resource(table: row.tableName),
              let recordID = row.recordId
        else { return nil }
        let beforeJSON = row.before, afterJSON = row.after
        let before = object(beforeJSON), after = object(afterJSON)
        let kind: Kind
        switch (row.kind, before.isEmpty, after.isEmpty) {
        case (.update, false, false), (.batch, false, false), (.revert, false, false):
            let fields = Set(before.keys).union(after.keys).subtracting(ignored).filter { text(before[$0]) != text(after[$0]) }.sorted()
            guard !fields.isEmpty else { return nil }
            kind = .update(fields)
        case (.create, true, false): kind = .delete
        case (.delete, false, true): kind = .restore
        default: return nil
        }
        return AuditRevert(auditID: auditID, action: row.action, resource: resource, recordID: recordID, beforeJSON: beforeJSON, afterJSON: afterJSON, kind: kind)
    }

    /// What the confirmation page says the revert will do.
    var summary: String {
        switch kind {
        case .update(let fields): "Sets \(fields.joined(separator: ", ")) of \(resource.table) #\(recordID) back to what they were before this change."
        case .delete: "Deletes \(resource.table) #\(recordID), which this change created."
        case .restore: "Restores \(resource.table) #\(recordID), which this change deleted, with its id and values."
        }
    }

    /// Undoes the change in `transaction`, audited as `revert #N`; throws `Refused` with the reason.
    func run(in transaction: any SQLDatabase, audit: AuditWriter) async throws {
        let table = SQLIdentifier(resource.table)
        // Lock before comparing (no check-then-act): reverts of one record take turns on a lock of
        // table+id (a deleted record has no row to lock), and an edit of the record waits for this
        // transaction or — when it came first — is seen by the comparison below and refuses it.
        try await transaction.raw("SELECT pg_advisory_xact_lock(hashtextextended(\(bind: resource.table + ":" + String(recordID)), 0))").run()
        try await transaction.raw("SELECT id FROM \(table) WHERE id = \(bind: recordID) FOR UPDATE").run()
        let store = ResourceStore(resource: resource, parentID: nil, sql: transaction)
        // The snapshots and the audit row through the store's one path; the record as it is now
        // (read after the lock above) is what the revert compares.
        try await store.audited(.revert, detail: String(auditID), [recordID], in: transaction, audit: audit) { transaction, current in
            try await undo(current: current, on: transaction)
            return [recordID]
        }
    }

    /// The revert's statements, on the locked record as it is now (`current`: its snapshot).
    private func undo(current: [Int: String], on transaction: any SQLDatabase) async throws {
        let before = self.before
        let table = SQLIdentifier(resource.table)
        switch kind {
        case .update(let fields):
            guard let now = current[recordID] else { throw Refused(message: "\(resource.singular) #\(recordID) no longer exists: restore it first.") }
            let nowValues = Self.object(now), after = self.after
            let changedSince = fields.filter { Self.text(nowValues[$0]) != Self.text(after[$0]) }
            guard changedSince.isEmpty else {
                throw Refused(message: "Changed again since: \(changedSince.joined(separator: ", ")). Revert the later change first.")
            }
            let columns = try await Self.writableColumns(resource.table, on: transaction).filter(fields.contains)
            if !columns.isEmpty {
                let list = SQLList(columns.map { SQLIdentifier($0) })
                try await transaction.raw("""
                    UPDATE \(table) SET (\(list)) = (SELECT \(list) FROM jsonb_populate_record(NULL::\(table), \(bind: Self.json(before))::jsonb))
                     WHERE id = \(bind: recordID)
                    """).run()
            }
            if fields.contains("category_ids") { try await restoreCategories(on: transaction, replacing: true) }
            if fields.contains("rights_windows") { try await restoreWindows(before["rights_windows"] as? [Any] ?? [], on: transaction, replacing: true) }
            if hasTranslations(fields) { try await restoreTranslations(on: transaction) }
        case .delete:
            guard current[recordID] != nil else { throw Refused(message: "\(resource.singular) #\(recordID) is already gone.") }
            try await transaction.raw("DELETE FROM \(table) WHERE id = \(bind: recordID)").run()
        case .restore:
            guard current[recordID] == nil else { throw Refused(message: "\(resource.singular) #\(recordID) exists again: nothing to restore.") }
            let columns = try await Self.writableColumns(resource.table, on: transaction).filter { before[$0] != nil }
            let list = SQLList(columns.map { SQLIdentifier($0) })
            try await transaction.raw("""
                INSERT INTO \(table) (\(list)) SELECT \(list) FROM jsonb_populate_record(NULL::\(table), \(bind: Self.json(before))::jsonb)
                """).run()
            if before["category_ids"] != nil { try await restoreCategories(on: transaction, replacing: false) }
            if hasTranslations(Array(before.keys)) { try await restoreTranslations(on: transaction) }
            if let windows = before["rights_windows"] as? [Any], !windows.isEmpty {
                // The book's rights windows went with it (ON DELETE CASCADE): they come back too.
                try await restoreWindows(windows, on: transaction, replacing: false)
            }
        }
    }

    /// A book's rights windows as the snapshot has them, with their ids (replacing the book's
    /// windows when `replacing`: a batch that moved an end is reverted by this).
    private func restoreWindows(_ windows: [Any], on sql: any SQLDatabase, replacing: Bool) async throws {
        if replacing { try await sql.raw("DELETE FROM rights_windows WHERE book_id = \(bind: recordID)").run() }
        guard !windows.isEmpty else { return }
        let columns = SQLList(try await Self.writableColumns("rights_windows", on: sql).map { SQLIdentifier($0) })
        let data = try JSONSerialization.data(withJSONObject: windows)
        try await sql.raw("""
            INSERT INTO rights_windows (\(columns)) SELECT \(columns)
              FROM jsonb_populate_recordset(NULL::rights_windows, \(bind: String(decoding: data, as: UTF8.self))::jsonb) ON CONFLICT (id) DO NOTHING
            """).run()
    }

    /// A book's categories as they were before the change (those that still exist).
    private func restoreCategories(on sql: any SQLDatabase, replacing: Bool) async throws {
        let ids = (self.before["category_ids"] as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.intValue }
        if replacing { try await sql.raw("DELETE FROM book_categories WHERE book_id = \(bind: recordID)").run() }
        try await sql.raw("""
            INSERT INTO book_categories (book_id, category_id)
            SELECT \(bind: recordID), c.id FROM categories c WHERE c.id = ANY(\(bind: ids)) ON CONFLICT DO NOTHING
            """).run()
    }

    private struct Column: Decodable { let name: String }

    /// The table's columns a revert may write: stored (not generated) and not kept by the database.
    private static func writableColumns(_ table: String, on sql: any SQLDatabase) async throws -> [String] {
        try await sql.raw("""
            SELECT attname::text AS name FROM pg_attribute
             WHERE attrelid = \(bind: table)::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''
             ORDER BY attnum
            """).all(decoding: Column.self).map(\.name).filter { $0 == "id" || !ignored.contains($0) }
    }

    static func object(_ text: String?) -> [String: Any] {
        guard let text, let data = text.data(using: .utf8) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    /// A JSON value as canonical text, for comparing.
    static func text(_ value: Any?) -> String {
        guard let value else { return "absent" }
        let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys])
        return data.flatMap { String(data: $0, encoding: .utf8) } ?? "?"
    }

    static func json(_ object: [String: Any]) -> String {
        let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return data.flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
    }
}
