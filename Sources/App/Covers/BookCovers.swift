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

    /// A book's title and cover as its cover page shows them (the cover's fields null without
    /// one). Nil: no such book.
    struct Current: Decodable { let title: String; let width: Int?; let height: Int?; let dominant_color: String?; let files: [String]? }

    static func current(book: Int, on sql: any SQLDatabase) async throws -> Current? {
        try await sql.raw("""
            SELECT b.title, bc.width, bc.height, bc.dominant_color, bc.files FROM books b LEFT JOIN book_covers bc ON bc.book_id = b.id WHERE b.id = \(bind: book)
            """).first(decoding: Current.self)
    }

    /// Uploads a staff user may send per minute: a fixed one-minute window per user, counted in
    /// PostgreSQL (`login_throttle`, scope `cover_upload`) so every instance spends one budget.
    static let uploadsPerMinute = 10
    static let budgetScope = "cover_upload"

    /// Spends one upload of `staff`'s budget *before* any image work, in one statement that counts
    /// under the row's lock (concurrent uploads get distinct counts). Nil: go on; else the seconds
    /// until the window ends (the upload must then not be processed). Refused uploads count too.
    static func reserveUpload(staff: Int, on sql: any SQLDatabase) async throws -> Int? {
        let row = try await sql.raw("""
            INSERT INTO login_throttle AS t (scope, key, window_start, attempts) VALUES (\(bind: budgetScope), \(bind: String(staff)), now(), 1)
            ON CONFLICT (scope, key) DO UPDATE SET
                attempts = CASE WHEN t.window_start <= now() - interval '1 minute' THEN 1 ELSE t.attempts + 1 END,
                window_start = CASE WHEN t.window_start <= now() - interval '1 minute' THEN now() ELSE t.window_start END
            RETURNING t.attempts, greatest(1, ceil(extract(epoch FROM t.window_start + interval '1 minute' - now())))::int AS retry_after
            """).first(decoding: Spent.self)!
        return row.attempts > uploadsPerMinute ? row.retry_after : nil
    }

    private struct Spent: Decodable { let attempts: Int; let retry_after: Int }

    /// What a cover's audit row keeps: its row without the API's JSON (`null`: no cover). Audited
    /// on the book (table `books`), through the books' `ResourceStore.audited`.
    static let snapshot: SQLFragment = "COALESCE((SELECT to_jsonb(bc) - 'api_json' FROM book_covers bc WHERE bc.book_id = t.id), 'null'::jsonb)"

    /// Stores the files and the book's cover in one transaction, the book locked first, audited.
    /// False: no such book.
    static func save(_ result: CoverProcessor.Result, book: Int, staff: StaffUser, store: any CoverStore,
                     on sql: any SQLDatabase) async throws -> Bool {
        let saved = try await ResourceStore.books(sql).audited(.coverUpload, [book], snapshot: snapshot, locking: true,
                                                               in: sql, audit: AuditWriter(staff: staff)) { sql, before in
            guard !before.isEmpty else { return [] }
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
                """).first(decoding: Written.self)!.snapshot
            return AuditedChange([book], after: [book: after])
        }
        return !saved.isEmpty
    }

    /// Removes a book's cover (its files stay: answers clients keep still name them), the book
    /// locked first as an upload locks it, in the same statement (so a removal and an upload take
    /// turns rather than deadlock on the cover's row and the book's), audited. False: none.
    static func remove(book: Int, staff: StaffUser, on sql: any SQLDatabase) async throws -> Bool {
        let removed = try await ResourceStore.books(sql).audited(.coverRemoval, [], in: sql, audit: AuditWriter(staff: staff)) { sql, _ in
            guard let row = try await sql.raw("""
                WITH b AS MATERIALIZED (SELECT id FROM books WHERE id = \(bind: book) FOR UPDATE)
                DELETE FROM book_covers bc USING b WHERE bc.book_id = b.id RETURNING (to_jsonb(bc) - 'api_json')::text AS snapshot
                """).first(decoding: Written.self) else { return [] }
            return AuditedChange([book], before: [book: row.snapshot], after: [book: "null"])
        }
        return !removed.isEmpty
    }

    /// The cover's row as written or deleted.
    private struct Written: Decodable { let snapshot: String }
}
