import Foundation
import SQLKit

/// A book's cover in the database: saving an upload's renditions, removing it, and the URLs the
/// console shows.
enum BookCovers {
    enum Size { case small, medium }

    /// The URL of a book's WebP rendition (`small`: 160 wide, for lists; `medium`: 320, for its
    /// page), or null without a cover. `files` holds names in width order, WebP then JPEG.
    static func thumbnailURL(_ book: StaticString, size: Size) -> SQLFragment {
        let file = size == .small ? "bcv.files[1]" : "COALESCE(bcv.files[3], bcv.files[1])"
        return SQLFragment(trusted: "(SELECT '/covers/' || \(file) FROM book_covers bcv WHERE bcv.book_id = \(book).id)")
    }

    /// Uploads a staff user may make per minute (`COVER_UPLOADS_PER_MINUTE` in the docs' words:
    /// a fixed budget, counted in the audit log, per user across instances).
    static let uploadsPerMinute = 10

    /// Stores the files and the book's cover in one transaction, audited. Nil: no such book.
    /// Throws `CoverProcessor.Refusal` when the user spent this minute's budget.
    static func save(_ result: CoverProcessor.Result, book: Int, staff: StaffUser, store: any CoverStore,
                     on sql: any SQLDatabase) async throws -> Bool {
        // One user's uploads are counted one after another (no two both seeing the budget unspent).
        try await sql.raw("SELECT pg_advisory_xact_lock(hashtextextended('cover-uploads:' || \(bind: staff.id), 0))").run()
        let recent = try await sql.raw("""
            SELECT count(*) AS n FROM audit_log WHERE staff_user_id = \(bind: staff.id) AND action = 'cover upload' AND created_at > now() - interval '1 minute'
            """).first()!.decode(column: "n", as: Int.self)
        guard recent < uploadsPerMinute else {
            throw CoverProcessor.Refusal(message: "You uploaded \(uploadsPerMinute) covers in the last minute; wait a minute and try again.")
        }
        guard let before = try await sql.raw("""
            SELECT (SELECT to_jsonb(bc) - 'api_json' FROM book_covers bc WHERE bc.book_id = b.id)::text AS snapshot FROM books b WHERE b.id = \(bind: book) FOR UPDATE
            """).first() else { return false }
        for file in result.renditions { try await store.put(file, on: sql) }
        let files = result.renditions.sorted { ($0.width, $0.contentType == "image/webp" ? 0 : 1) < ($1.width, $1.contentType == "image/webp" ? 0 : 1) }
            .map { "\($0.hash).\($0.fileExtension)" }
        let after = try await sql.raw("""
            INSERT INTO book_covers (book_id, width, height, dominant_color, files, api_json, uploaded_by)
            VALUES (\(bind: book), \(bind: result.width), \(bind: result.height), \(bind: result.dominantColor), \(bind: files)::text[],
                    \(bind: try CoverDTO(result).apiJSON()), \(bind: staff.id))
            ON CONFLICT (book_id) DO UPDATE SET width = EXCLUDED.width, height = EXCLUDED.height, dominant_color = EXCLUDED.dominant_color,
                   files = EXCLUDED.files, api_json = EXCLUDED.api_json, uploaded_by = EXCLUDED.uploaded_by, updated_at = now()
            RETURNING (to_jsonb(book_covers) - 'api_json')::text AS snapshot
            """).first()!.decode(column: "snapshot", as: String.self)
        try await AuditWriter(staff: staff).record("cover upload", table: "books", ids: [book],
                                                   before: [book: try before.decode(column: "snapshot", as: String?.self) ?? "null"],
                                                   after: [book: after], on: sql)
        return true
    }

    /// Removes a book's cover (its files stay: answers clients keep still name them). False: none.
    static func remove(book: Int, staff: StaffUser, on sql: any SQLDatabase) async throws -> Bool {
        guard let row = try await sql.raw("""
            DELETE FROM book_covers bc WHERE book_id = \(bind: book) RETURNING (to_jsonb(bc) - 'api_json')::text AS snapshot
            """).first() else { return false }
        try await AuditWriter(staff: staff).record("cover removal", table: "books", ids: [book],
                                                   before: [book: try row.decode(column: "snapshot", as: String.self)], after: [book: "null"], on: sql)
        return true
    }
}
