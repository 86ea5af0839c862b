import SQLKit
import Vapor

extension LibraryController {
    /// A library entry: the book object plus when it was added and played, progress and rights end.
    struct EntryDTO: Content {
        let book: BookDTO
        let addedAt: Date
        let lastPlayedAt: Date?
        let progress: Double?
        let completedCount: Int
        let rightsEndsAt: Date?

        /// What `init(row:)` reads, for `library_entries le` joined to `books b` and its joins;
        /// rights as they are in `country`.
        static func columns(country: String?) -> SQLQueryString {
            """
            \(BookDTO.columns(country: country)), le.added_at, le.last_played_at,
            (SELECT count(*) FROM plays q WHERE q.child_id = le.child_id AND q.book_id = le.book_id AND q.completed) AS completed_count,
            (SELECT \(BookSQL.progress(position: "q.position_seconds", completed: "q.completed")) FROM plays q
              WHERE q.child_id = le.child_id AND q.book_id = le.book_id ORDER BY q.played_at DESC, q.id DESC LIMIT 1) AS progress,
            \(BookSQL.rightsEndsAt("b", in: country)) AS rights_ends_at
            """
        }

        // The entry is the book object plus the entry's fields, flattened.
        func encode(to encoder: any Encoder) throws {
            try book.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(addedAt, forKey: .addedAt)
            try container.encode(lastPlayedAt, forKey: .lastPlayedAt)
            try container.encode(progress, forKey: .progress)
            try container.encode(completedCount, forKey: .completedCount)
            try container.encode(rightsEndsAt, forKey: .rightsEndsAt)
        }
        init(from decoder: any Decoder) throws {
            book = try BookDTO(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            addedAt = try container.decode(Date.self, forKey: .addedAt)
            lastPlayedAt = try container.decodeIfPresent(Date.self, forKey: .lastPlayedAt)
            progress = try container.decodeIfPresent(Double.self, forKey: .progress)
            completedCount = try container.decode(Int.self, forKey: .completedCount)
            rightsEndsAt = try container.decodeIfPresent(Date.self, forKey: .rightsEndsAt)
        }
        enum CodingKeys: String, CodingKey { case addedAt, lastPlayedAt, progress, completedCount, rightsEndsAt }
        init(row: any SQLRow) throws {
            book = try BookDTO(row: row)
            let entry = try row.decode(model: LibraryQueries.EntryRow.self, keyDecodingStrategy: .convertFromSnakeCase)
            addedAt = entry.addedAt
            lastPlayedAt = entry.lastPlayedAt
            progress = entry.progress
            completedCount = entry.completedCount
            rightsEndsAt = entry.rightsEndsAt
        }

        /// The entry of `book` in `child`'s library, as the API shows it.
        static func fetch(child: Int, book: Int, country: String?, on sql: any SQLDatabase) async throws -> EntryDTO? {
            try await sql.raw("""
                SELECT \(columns(country: country)) FROM library_entries le JOIN books b ON b.id = le.book_id \(BookDTO.joins)
                 WHERE le.child_id = \(bind: child) AND le.book_id = \(bind: book)
                """).first().map(EntryDTO.init(row:))
        }
    }
}

extension LibraryQueries {
    /// The entry's own columns of a row of `EntryDTO.columns` (the book's are `BookDTO(row:)`'s).
    struct EntryRow: Decodable {
        let addedAt: Date
        let lastPlayedAt: Date?
        let progress: Double?
        let completedCount: Int
        let rightsEndsAt: Date?
    }
}
