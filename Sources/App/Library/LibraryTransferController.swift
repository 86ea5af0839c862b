import Core
import SQLKit
import Vapor

/// Managing a family's libraries across children: copy or move one book, bulk copy / move /
/// remove, and adding a whole category. Both children must be the caller's (404 otherwise); every
/// change is one transaction.
struct LibraryTransferController: ChildRouteCollection {
    func boot(child: any RoutesBuilder) throws {
        let library = child.grouped("library")
        library.on(.POST, ":book_id", "copy", body: .collect(maxSize: "16kb"), use: copy)
        library.on(.POST, ":book_id", "move", body: .collect(maxSize: "16kb"), use: move)
        library.on(.POST, "bulk", body: .collect(maxSize: "64kb"), use: bulk)
        library.on(.POST, "categories", ":category", body: .collect(maxSize: "16kb"), use: addCategory)
    }

    typealias EntryDTO = LibraryController.EntryDTO

    /// Locks both children's rows in id order first: the activity triggers update them, and two
    /// opposite moves (A → B and B → A) would otherwise lock them in opposite orders (a deadlock).
    static func lockChildren(_ ids: [Int], on sql: any SQLDatabase) async throws {
        try await sql.raw("SELECT id FROM children WHERE id = ANY(\(bind: Array(Set(ids)).sorted())) ORDER BY id FOR UPDATE").run()
    }

    /// The body's `to_child_id`, when it names one of the caller's children (404 otherwise).
    private func target(_ body: JSONBody, req: Request) async throws -> Int {
        try await req.ownedChild(try body.integer("to_child_id", in: 1...Int(Int32.max)), missing: "No such child to copy or move to.").id
    }

    enum Outcome { case done, duplicate, missing, blocked }

    /// Copies (or moves) one entry inside a transaction. A move deletes the source first, so of
    /// two concurrent moves of one entry the second finds nothing (404) and changes nothing.
    /// With `preserveProgress` the book's plays go along (copied, or moved).
    static func transfer(book: Int, from source: Int, to target: Int, move: Bool, preserveProgress: Bool,
                         removeSourceOnDuplicate: Bool = false, on sql: any SQLDatabase) async throws -> Outcome {
        try await lockChildren([source, target], on: sql)
        let taken: [any SQLRow]
        if move {
            taken = try await sql.raw("""
                DELETE FROM library_entries le USING books b
                 WHERE le.child_id = \(bind: source) AND le.book_id = \(bind: book) AND b.id = le.book_id AND \(BookSQL.live("b"))
                RETURNING le.added_at, le.last_played_at
                """).all()
        } else {
            taken = try await sql.raw("""
                SELECT le.added_at, le.last_played_at FROM library_entries le JOIN books b ON b.id = le.book_id
                 WHERE le.child_id = \(bind: source) AND le.book_id = \(bind: book) AND \(BookSQL.live("b"))
                """).all()
        }
        guard let entry = taken.first else { return .missing }
        let lastPlayed = preserveProgress ? try entry.decode(column: "last_played_at", as: Date?.self) : nil
        let addedAt = move ? try entry.decode(column: "added_at", as: Date.self) : Date()
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
        if preserveProgress {
            if move {
                try await sql.raw("UPDATE plays SET child_id = \(bind: target) WHERE child_id = \(bind: source) AND book_id = \(bind: book)").run()
            } else {
                try await sql.raw("""
                    INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at)
                    SELECT \(bind: target), book_id, position_seconds, completed, played_at FROM plays
                     WHERE child_id = \(bind: source) AND book_id = \(bind: book) ORDER BY played_at, id
                    """).run()
            }
        }
        return .done
    }

    @Sendable
    func copy(req: Request) async throws -> Response { try await single(req: req, move: false) }

    @Sendable
    func move(req: Request) async throws -> Response { try await single(req: req, move: true) }

    private func single(req: Request, move: Bool) async throws -> Response {
        let source = try req.child.id
        let book = try req.pathID("book_id", missing: "No such book in this child's library.")
        let body = try JSONBody(req)
        let preserve = try body.optionalBool("preserve_progress") ?? true
        let choice = move ? try body.optionalString("on_duplicate", maxLength: 40) : nil
        guard choice == nil || ["fail", "remove_source"].contains(choice!) else {
            throw Problem.invalidParameter("on_duplicate", "on_duplicate must be fail or remove_source")
        }
        let removeSource = choice == "remove_source"
        let target = try await target(body, req: req)
        let country = try await req.parentCountry()
        let entry = try await req.transaction { sql -> EntryDTO in
            switch try await Self.transfer(book: book, from: source, to: target, move: move, preserveProgress: preserve,
                                           removeSourceOnDuplicate: removeSource, on: sql) {
            case .missing: throw Problem.notFound("No such book in this child's library.")
            case .duplicate: throw LibraryController.duplicate
            case .blocked: throw LibraryController.blocked
            case .done:
                guard let entry = try await EntryDTO.fetch(child: target, book: book, country: country, on: sql) else {
                    throw Problem.notFound("No such book.")
                }
                return entry
            }
        }
        let response = Response(status: move ? .ok : .created)
        try response.content.encode(ItemDTO(data: entry), as: .json)
        return response
    }

    struct BulkResultDTO: Content {
        struct Skipped: Content { let bookId: Int; let reason: String }
        let affected: Int
        let skipped: [Skipped]
    }

    /// `{"action": "copy"|"move"|"remove", "book_ids": [...], "to_child_id"}`: at most 100 books,
    /// all or nothing — except duplicates in the target, which are skipped and reported. A book
    /// not in the source library fails the whole request (404, nothing changed).
    @Sendable
    func bulk(req: Request) async throws -> ItemDTO<BulkResultDTO> {
        let source = try req.child.id
        let body = try JSONBody(req)
        let action = try body.string("action", maxLength: 20)
        guard ["copy", "move", "remove"].contains(action) else {
            throw Problem.invalidParameter("action", "action must be copy, move or remove")
        }
        let ids = try Self.bookIDs(body)
        let preserve = try body.optionalBool("preserve_progress") ?? true
        let target = action == "remove" ? nil : try await target(body, req: req)
        return ItemDTO(data: try await req.transaction { sql in
            try await Self.bulk(action: action, ids: ids, from: source, to: target, preserveProgress: preserve, on: sql)
        })
    }

    /// The bulk change as a few set-wide statements (not a loop over books): the source's entries
    /// are checked, the target's inserted at once (duplicates are what the insert skipped), the
    /// plays copied or moved, the moved entries removed from the source.
    static func bulk(action: String, ids: [Int], from source: Int, to target: Int?, preserveProgress: Bool,
                     on sql: any SQLDatabase) async throws -> BulkResultDTO {
        try await lockChildren([source] + (target.map { [$0] } ?? []), on: sql)
        // Copy and move take active books; remove takes whatever is in the library.
        let present = Set(try await sql.raw("""
            SELECT le.book_id FROM library_entries le JOIN books b ON b.id = le.book_id
             WHERE le.child_id = \(bind: source) AND le.book_id = ANY(\(bind: ids)) AND (\(bind: target == nil) OR \(BookSQL.live("b")))
            """).all().map { try $0.decode(column: "book_id", as: Int.self) })
        if let missing = ids.first(where: { !present.contains($0) }) {
            throw Problem(status: .notFound, code: "not_found",
                          detail: "Book \(missing) is not in this child's library; nothing was changed.", field: "book_ids")
        }
        guard let target else {
            try await sql.raw("DELETE FROM library_entries WHERE child_id = \(bind: source) AND book_id = ANY(\(bind: ids))").run()
            return BulkResultDTO(affected: ids.count, skipped: [])
        }
        let move = action == "move"
        // Books the target's controls keep out (and not already there: a duplicate is reported as one).
        let blocked = try await sql.raw("""
            SELECT x AS book_id FROM unnest(\(bind: ids)::bigint[]) x
             WHERE storytime_blocked_for_child(\(bind: target), x)
               AND NOT EXISTS (SELECT 1 FROM library_entries WHERE child_id = \(bind: target) AND book_id = x)
            """).all().map { try $0.decode(column: "book_id", as: Int.self) }
        let inserted = Set(try await sql.raw("""
            INSERT INTO library_entries (child_id, book_id, added_at, last_played_at)
            SELECT \(bind: target), le.book_id, CASE WHEN \(bind: move) THEN le.added_at ELSE now() END,
                   CASE WHEN \(bind: preserveProgress) THEN le.last_played_at END
              FROM library_entries le WHERE le.child_id = \(bind: source) AND le.book_id = ANY(\(bind: ids))
               AND NOT (le.book_id = ANY(\(bind: blocked)::bigint[]))
            ON CONFLICT (child_id, book_id) DO NOTHING RETURNING book_id
            """).all().map { try $0.decode(column: "book_id", as: Int.self) })
        let done = ids.filter { inserted.contains($0) }
        if preserveProgress && !done.isEmpty {
            if move {
                try await sql.raw("UPDATE plays SET child_id = \(bind: target) WHERE child_id = \(bind: source) AND book_id = ANY(\(bind: done))").run()
            } else {
                try await sql.raw("""
                    INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at)
                    SELECT \(bind: target), book_id, position_seconds, completed, played_at FROM plays
                     WHERE child_id = \(bind: source) AND book_id = ANY(\(bind: done)) ORDER BY played_at, id
                    """).run()
            }
        }
        if move && !done.isEmpty {
            try await sql.raw("DELETE FROM library_entries WHERE child_id = \(bind: source) AND book_id = ANY(\(bind: done))").run()
        }
        return BulkResultDTO(affected: done.count,
                             skipped: ids.filter { !inserted.contains($0) }.map {
                                 .init(bookId: $0, reason: blocked.contains($0) ? "blocked_by_controls" : "duplicate")
                             })
    }

    /// The body's `book_ids`: 1 to 100 positive integers (repeats count once).
    static func bookIDs(_ body: JSONBody) throws -> [Int] {
        guard let ids = try body.integerList("book_ids", limit: 100), !ids.isEmpty, ids.allSatisfy({ $0 <= Int(Int32.max) }) else {
            throw Problem.invalidParameter("book_ids", "book_ids must be a list of 1 to 100 positive integers")
        }
        return ids
    }

    struct CategoryResultDTO: Content { let added: Int; let skipped: Int }

    /// Adds every active book of a category whose rights are available now and the child's
    /// controls allow (by title, at most `limit`, default 100, up to 500); books already there
    /// are skipped and counted.
    @Sendable
    func addCategory(req: Request) async throws -> ItemDTO<CategoryResultDTO> {
        let child = try req.child.id
        var limit = 100
        if let buffer = req.body.data, buffer.readableBytes > 0 {
            limit = try JSONBody(req).optionalInteger("limit", in: 1...500) ?? 100
        }
        let key = req.parameters.get("category") ?? ""
        let categoryID = Int(key).flatMap { $0 > 0 && $0 <= Int(Int32.max) ? $0 : nil }
        guard let category = try await req.sql.raw("""
            SELECT id FROM categories WHERE slug = \(bind: key) OR id = \(bind: categoryID ?? 0) LIMIT 1
            """).first()?.decode(column: "id", as: Int.self) else {
            throw Problem.notFound("No such category.")
        }
        let country = try await req.parentCountry()
        let row = try await req.sql.raw("""
            WITH wanted AS (
                SELECT b.id FROM books b JOIN book_categories bc ON bc.book_id = b.id AND bc.category_id = \(bind: category)
                 WHERE \(BookSQL.live("b")) AND \(BookSQL.rightsAvailable("b", in: country))
                   AND NOT storytime_blocked_for_child(\(bind: child), b.id)
                 ORDER BY lower(b.title), b.id LIMIT \(bind: limit)
            ), added AS (
                INSERT INTO library_entries (child_id, book_id) SELECT \(bind: child), id FROM wanted
                ON CONFLICT (child_id, book_id) DO NOTHING RETURNING book_id
            )
            SELECT (SELECT count(*) FROM added) AS added, (SELECT count(*) FROM wanted) AS wanted
            """).first()!
        let added = try row.decode(column: "added", as: Int.self)
        return ItemDTO(data: CategoryResultDTO(added: added, skipped: try row.decode(column: "wanted", as: Int.self) - added))
    }
}
