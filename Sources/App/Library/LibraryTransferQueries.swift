import Core
import Foundation
import SQLKit

/// The SQL of moving books between a family's children: one book, a bulk change, a whole
/// category. Both children are already the caller's; run inside the request's transaction.
enum LibraryTransferQueries {
    /// Locks both children's rows in id order first: the activity triggers update them, and two
    /// opposite moves (A → B and B → A) would otherwise lock them in opposite orders (a deadlock).
    static func lockChildren(_ ids: [Int], on sql: any SQLDatabase) async throws {
        try await sql.raw("SELECT id FROM children WHERE id = ANY(\(bind: Array(Set(ids)).sorted())) ORDER BY id FOR UPDATE").run()
    }

    enum Outcome { case done, duplicate, missing, blocked }

    /// The source's entry of a transferred book.
    struct Taken: Decodable { let addedAt: Date; let lastPlayedAt: Date? }
    /// A book of a set-wide statement.
    struct BookRow: Decodable { let bookId: Int }
    struct CategoryRow: Decodable { let id: Int }

    /// Copies (or moves) one entry inside a transaction. A move deletes the source first, so of
    /// two concurrent moves of one entry the second finds nothing (404) and changes nothing.
    /// With `preserveProgress` the book's plays go along (copied, or moved). A copy is added `now`.
    static func transfer(book: Int, from source: Int, to target: Int, move: Bool, preserveProgress: Bool,
                         removeSourceOnDuplicate: Bool = false, now: Date, on sql: any SQLDatabase) async throws -> Outcome {
        try await lockChildren([source, target], on: sql)
        let taken: [Taken]
        if move {
            taken = try await sql.raw("""
                DELETE FROM library_entries le USING books b
                 WHERE le.child_id = \(bind: source) AND le.book_id = \(bind: book) AND b.id = le.book_id AND \(BookSQL.live("b", at: now))
                RETURNING le.added_at, le.last_played_at
                """).all(decoding: Taken.self, keyDecodingStrategy: .convertFromSnakeCase)
        } else {
            taken = try await sql.raw("""
                SELECT le.added_at, le.last_played_at FROM library_entries le JOIN books b ON b.id = le.book_id
                 WHERE le.child_id = \(bind: source) AND le.book_id = \(bind: book) AND \(BookSQL.live("b", at: now))
                """).all(decoding: Taken.self, keyDecodingStrategy: .convertFromSnakeCase)
        }
        guard let entry = taken.first else { return .missing }
        let lastPlayed = preserveProgress ? entry.lastPlayedAt : nil
        let addedAt = move ? entry.addedAt : now
        let inserted = try await sql.raw("""
            INSERT INTO library_entries (child_id, book_id, added_at, last_played_at)
            SELECT \(bind: target), \(bind: book), \(bind: addedAt), \(bind: lastPlayed)
             WHERE NOT storytime_blocked_for_child(\(bind: target), \(bind: book))
            ON CONFLICT (child_id, book_id) DO NOTHING RETURNING id
            """).all()
        if inserted.isEmpty {
            // Not inserted: already there (409, checked first) or kept out by the target's controls.
            let there = try await sql.raw("""
                SELECT 1 AS one FROM library_entries WHERE child_id = \(bind: target) AND book_id = \(bind: book)
                """).first() != nil
            guard there else { return .blocked }
            return move && removeSourceOnDuplicate ? .done : .duplicate
        }
        if preserveProgress { try await carryPlays(of: [book], from: source, to: target, move: move, on: sql) }
        return .done
    }

    /// The bulk change as a few set-wide statements (not a loop over books): the source's entries
    /// are checked, the target's inserted at once (duplicates are what the insert skipped), the
    /// plays copied or moved, the moved entries removed from the source.
    static func bulk(action: String, ids: [Int], from source: Int, to target: Int?, preserveProgress: Bool, now: Date,
                     on sql: any SQLDatabase) async throws -> LibraryTransferController.BulkResultDTO {
        try await lockChildren([source] + (target.map { [$0] } ?? []), on: sql)
        // Copy and move take active books; remove takes whatever is in the library.
        let present = Set(try await sql.raw("""
            SELECT le.book_id FROM library_entries le JOIN books b ON b.id = le.book_id
             WHERE le.child_id = \(bind: source) AND le.book_id = ANY(\(bind: ids)) AND (\(bind: target == nil) OR \(BookSQL.live("b", at: now)))
            """).all(decoding: BookRow.self, keyDecodingStrategy: .convertFromSnakeCase).map(\.bookId))
        if let missing = ids.first(where: { !present.contains($0) }) {
            throw Problem(status: .notFound, code: "not_found",
                          detail: "Book \(missing) is not in this child's library; nothing was changed.", field: "book_ids")
        }
        guard let target else {
            try await sql.raw("DELETE FROM library_entries WHERE child_id = \(bind: source) AND book_id = ANY(\(bind: ids))").run()
            return .init(affected: ids.count, skipped: [])
        }
        let move = action == "move"
        // Books the target's controls keep out (and not already there: a duplicate is reported as one).
        let blocked = try await sql.raw("""
            SELECT x AS book_id FROM unnest(\(bind: ids)::bigint[]) x
             WHERE storytime_blocked_for_child(\(bind: target), x)
               AND NOT EXISTS (SELECT 1 FROM library_entries WHERE child_id = \(bind: target) AND book_id = x)
            """).all(decoding: BookRow.self, keyDecodingStrategy: .convertFromSnakeCase).map(\.bookId)
        let inserted = Set(try await sql.raw("""
            INSERT INTO library_entries (child_id, book_id, added_at, last_played_at)
            SELECT \(bind: target), le.book_id, CASE WHEN \(bind: move) THEN le.added_at ELSE now() END,
                   CASE WHEN \(bind: preserveProgress) THEN le.last_played_at END
              FROM library_entries le WHERE le.child_id = \(bind: source) AND le.book_id = ANY(\(bind: ids))
               AND NOT (le.book_id = ANY(\(bind: blocked)::bigint[]))
            ON CONFLICT (child_id, book_id) DO NOTHING RETURNING book_id
            """).all(decoding: BookRow.self, keyDecodingStrategy: .convertFromSnakeCase).map(\.bookId))
        let done = ids.filter { inserted.contains($0) }
        if preserveProgress && !done.isEmpty { try await carryPlays(of: done, from: source, to: target, move: move, on: sql) }
        if move && !done.isEmpty {
            try await sql.raw("DELETE FROM library_entries WHERE child_id = \(bind: source) AND book_id = ANY(\(bind: done))").run()
        }
        return .init(affected: done.count,
                             skipped: ids.filter { !inserted.contains($0) }.map {
                                 .init(bookId: $0, reason: blocked.contains($0) ? "blocked_by_controls" : "duplicate")
                             })
    }

    /// The plays of `books` go along with them: moved to `target`, or copied in their order.
    static func carryPlays(of books: [Int], from source: Int, to target: Int, move: Bool, on sql: any SQLDatabase) async throws {
        if move {
            try await sql.raw("UPDATE plays SET child_id = \(bind: target) WHERE child_id = \(bind: source) AND book_id = ANY(\(bind: books))").run()
        } else {
            try await sql.raw("""
                INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at)
                SELECT \(bind: target), book_id, position_seconds, completed, played_at FROM plays
                 WHERE child_id = \(bind: source) AND book_id = ANY(\(bind: books)) ORDER BY played_at, id
                """).run()
        }
    }

    /// A category by slug, else by id (as the catalog resolves a `category` parameter).
    static func category(named key: String, id: Int?, on sql: any SQLDatabase) async throws -> Int? {
        try await sql.raw("""
            SELECT id FROM categories WHERE slug = \(bind: key) OR id = \(bind: id ?? 0) LIMIT 1
            """).first(decoding: CategoryRow.self)?.id
    }

    struct CategoryAdded: Decodable { let added: Int; let wanted: Int }

    /// Adds the category's live books whose rights are available in `country` and the child's
    /// controls allow, by title, at most `limit`; `wanted` counts those already there too.
    static func addCategory(_ category: Int, to child: Int, country: String, limit: Int, now: Date, on sql: any SQLDatabase) async throws -> CategoryAdded {
        try await sql.raw("""
            WITH wanted AS (
                SELECT b.id FROM books b JOIN book_categories bc ON bc.book_id = b.id AND bc.category_id = \(bind: category)
                 WHERE \(BookSQL.live("b", at: now)) AND \(BookSQL.rightsAvailable("b", in: country, at: now))
                   AND NOT storytime_blocked_for_child(\(bind: child), b.id)
                 ORDER BY lower(b.title), b.id LIMIT \(bind: limit)
            ), added AS (
                INSERT INTO library_entries (child_id, book_id) SELECT \(bind: child), id FROM wanted
                ON CONFLICT (child_id, book_id) DO NOTHING RETURNING book_id
            )
            SELECT (SELECT count(*) FROM added) AS added, (SELECT count(*) FROM wanted) AS wanted
            """).first(decoding: CategoryAdded.self) ?? CategoryAdded(added: 0, wanted: 0)
    }
}
