import Foundation
import SQLKit

/// The statements of the book import's uploads: storing one, reading it back, marking it imported.
enum BookImportQueries {
    private struct Created: Decodable { let id: Int }

    /// Stores an uploaded CSV of `staff`; its id.
    static func store(staff: Int, filename: String, csv: String, on sql: any SQLDatabase) async throws -> Int {
        try await sql.raw("""
            INSERT INTO book_imports (staff_user_id, filename, csv) VALUES (\(bind: staff), \(bind: filename), \(bind: csv)) RETURNING id
            """).first(decoding: Created.self)!.id
    }

    struct Upload: Decodable { let id: Int; let filename: String; let csv: String; let importedAt: Date? }

    /// An upload `staff` may see: their own, any for an admin.
    static func upload(_ id: Int, staff: StaffUser, on sql: any SQLDatabase) async throws -> Upload? {
        try await sql.raw("""
            SELECT id, filename, csv, imported_at FROM book_imports
             WHERE id = \(bind: id) AND (staff_user_id = \(bind: staff.id) OR \(bind: staff.isAdmin))
            """).first(decoding: Upload.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// Marks the upload imported; false when it already was.
    static func markImported(_ id: Int, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("UPDATE book_imports SET imported_at = now() WHERE id = \(bind: id) AND imported_at IS NULL RETURNING id").first() != nil
    }

    /// The `import.finished` webhook event of the import, in `sql`'s transaction.
    static func enqueueFinished(_ id: Int, created: Int, updated: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            SELECT storytime_webhook_enqueue('import.finished', jsonb_build_object('import_id', \(bind: id)::bigint,
                   'created', \(bind: created)::int, 'updated', \(bind: updated)::int))
            """).run()
    }
}
