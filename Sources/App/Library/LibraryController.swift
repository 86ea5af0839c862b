import Core
import SQLKit
import Vapor

/// Children and their libraries. Every route checks that the child is the caller's; another
/// parent's child is answered exactly like a missing one (404).
struct LibraryController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        let children = routes.grouped(ParentAuthMiddleware()).grouped("children")
        children.get(use: listChildren)
        let library = children.grouped(":child_id", "library")
        library.get(use: list)
        library.on(.POST, body: .collect(maxSize: "16kb"), use: add)
        library.delete(":book_id", use: remove)
        library.on(.POST, ":book_id", "plays", body: .collect(maxSize: "16kb"), use: play)
    }

    struct ChildDTO: Content { let id: Int; let name: String }

    struct EntryDTO: Content {
        let book: BookDTO
        let addedAt: Date
        let lastPlayedAt: Date?

        // The entry is the book object plus two fields, flattened.
        func encode(to encoder: any Encoder) throws {
            try book.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(addedAt, forKey: .addedAt)
            try container.encode(lastPlayedAt, forKey: .lastPlayedAt)
        }
        init(book: BookDTO, addedAt: Date, lastPlayedAt: Date?) {
            self.book = book
            self.addedAt = addedAt
            self.lastPlayedAt = lastPlayedAt
        }
        init(from decoder: any Decoder) throws {
            book = try BookDTO(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            addedAt = try container.decode(Date.self, forKey: .addedAt)
            lastPlayedAt = try container.decodeIfPresent(Date.self, forKey: .lastPlayedAt)
        }
        enum CodingKeys: String, CodingKey { case addedAt, lastPlayedAt }
        init(row: any SQLRow) throws {
            self.init(book: try BookDTO(row: row), addedAt: try row.decode(column: "added_at", as: Date.self),
                      lastPlayedAt: try row.decode(column: "last_played_at", as: Date?.self))
        }
    }

    struct PlayDTO: Content {
        let bookId: Int
        let positionSeconds: Int
        let completed: Bool
        let playedAt: Date
    }

    @Sendable
    func listChildren(req: Request) async throws -> ItemDTO<[ChildDTO]> {
        let rows = try await req.sql.raw("SELECT id, name FROM children WHERE parent_id = \(bind: try req.parentID) ORDER BY id").all()
        return ItemDTO(data: try rows.map { ChildDTO(id: try $0.decode(column: "id", as: Int.self), name: try $0.decode(column: "name", as: String.self)) })
    }

    /// The child id of the path, when it names one of the caller's children.
    private func ownedChild(_ req: Request) throws -> Int {
        guard let id = req.parameters.get("child_id").flatMap({ Int($0) }), id > 0 else {
            throw Problem.notFound("No such child.")
        }
        return id
    }

    private func pathBookID(_ req: Request) throws -> Int {
        guard let id = req.parameters.get("book_id").flatMap({ Int($0) }), id > 0 else {
            throw Problem.notFound("No such book in this library.")
        }
        return id
    }

    @Sendable
    func list(req: Request) async throws -> Response {
        let childID = try ownedChild(req)
        let query = QueryParameters(query: req.url.query)
        let parameters = try LibraryParameters(query)
        let sql = req.sql
        // One statement checks the child and counts its library: no row means not the caller's.
        guard let countRow = try await sql.raw("""
            SELECT (SELECT count(*) FROM library_entries le JOIN books b ON b.id = le.book_id
                     WHERE le.child_id = c.id AND b.status = 'active') AS n
              FROM children c WHERE c.id = \(bind: childID) AND c.parent_id = \(bind: try req.parentID)
            """).first() else {
            throw Problem.notFound("No such child.")
        }
        let total = try countRow.decode(column: "n", as: Int.self)
        var entries: [EntryDTO] = []
        if parameters.page.offset < total {
            let order: String
            switch parameters.sort {
            case .recentlyAdded: order = "le.added_at DESC, b.id DESC"
            case .title: order = "lower(b.title) ASC, b.id ASC"
            case .recentlyWatched: order = "le.last_played_at DESC NULLS LAST, le.added_at DESC, b.id DESC"
            }
            let rows = try await sql.raw("""
                SELECT \(BookDTO.columns), le.added_at, le.last_played_at
                  FROM library_entries le JOIN books b ON b.id = le.book_id \(BookDTO.joins)
                 WHERE le.child_id = \(bind: childID) AND b.status = 'active'
                 ORDER BY \(unsafeRaw: order)
                 LIMIT \(bind: parameters.page.perPage) OFFSET \(bind: parameters.page.offset)
                """).all()
            entries = try rows.map(EntryDTO.init(row:))
        }
        return try paged(entries, page: parameters.page, total: total, query: query, req: req)
    }

    /// Adds a book. Checks in the contract's order: body (400), child (404), already there (409),
    /// unknown book (404), rights not available now (422).
    @Sendable
    func add(req: Request) async throws -> Response {
        let childID = try ownedChild(req)
        let parentID = try req.parentID
        let bookID = try JSONBody(req).integer("book_id")
        let sql = req.sql
        guard let state = try await sql.raw("""
            SELECT EXISTS (SELECT 1 FROM library_entries WHERE child_id = c.id AND book_id = \(bind: bookID)) AS duplicate,
                   b.id IS NOT NULL AS found,
                   \(unsafeRaw: rightsAvailableSQL("b")) AS rights
              FROM children c LEFT JOIN books b ON b.id = \(bind: bookID) AND b.status = 'active'
             WHERE c.id = \(bind: childID) AND c.parent_id = \(bind: parentID)
            """).first() else {
            throw Problem.notFound("No such child.")
        }
        if try state.decode(column: "duplicate", as: Bool.self) { throw Self.duplicate }
        guard try state.decode(column: "found", as: Bool.self) else { throw Problem.notFound("No such book.") }
        guard try state.decode(column: "rights", as: Bool.self) else {
            throw Problem(status: .unprocessableEntity, code: "rights_unavailable",
                          detail: "This book cannot be watched right now: its rights are not available.")
        }
        // A concurrent add of the same book loses here and gets the same 409.
        guard let row = try await sql.raw("""
            WITH added AS (
                INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: childID), \(bind: bookID))
                ON CONFLICT (child_id, book_id) DO NOTHING RETURNING book_id, added_at, last_played_at
            )
            SELECT \(BookDTO.columns), le.added_at, le.last_played_at
              FROM added le JOIN books b ON b.id = le.book_id \(BookDTO.joins)
            """).first() else {
            throw Self.duplicate
        }
        let response = Response(status: .created)
        try response.content.encode(ItemDTO(data: try EntryDTO(row: row)), as: .json)
        return response
    }

    static let duplicate = Problem(status: .conflict, code: "duplicate", detail: "This book is already in the child's library.")

    @Sendable
    func remove(req: Request) async throws -> HTTPStatus {
        let childID = try ownedChild(req)
        let bookID = try pathBookID(req)
        let deleted = try await req.sql.raw("""
            DELETE FROM library_entries le USING children c
             WHERE le.child_id = c.id AND c.id = \(bind: childID) AND c.parent_id = \(bind: try req.parentID)
               AND le.book_id = \(bind: bookID)
            RETURNING le.id
            """).all()
        guard !deleted.isEmpty else { throw Problem.notFound("No such book in this child's library.") }
        return .noContent
    }

    /// Records a play (every one is kept: viewing history) and sets the entry's last_played_at.
    @Sendable
    func play(req: Request) async throws -> Response {
        let childID = try ownedChild(req)
        let bookID = try pathBookID(req)
        let body = try JSONBody(req)
        let position = try body.integer("position_seconds", in: 0...(7 * 24 * 3600))
        let completed = try body.bool("completed")
        guard let row = try await req.sql.raw("""
            WITH entry AS (
                UPDATE library_entries le SET last_played_at = now()
                  FROM children c, books b
                 WHERE le.child_id = c.id AND c.id = \(bind: childID) AND c.parent_id = \(bind: try req.parentID)
                   AND le.book_id = \(bind: bookID) AND b.id = le.book_id AND b.status = 'active'
                RETURNING le.child_id, le.book_id, le.last_played_at
            )
            INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at)
            SELECT child_id, book_id, \(bind: position), \(bind: completed), last_played_at FROM entry
            RETURNING book_id, position_seconds, completed, played_at
            """).first() else {
            throw Problem.notFound("No such book in this child's library.")
        }
        let play = PlayDTO(bookId: try row.decode(column: "book_id", as: Int.self),
                           positionSeconds: try row.decode(column: "position_seconds", as: Int.self),
                           completed: try row.decode(column: "completed", as: Bool.self),
                           playedAt: try row.decode(column: "played_at", as: Date.self))
        let response = Response(status: .created)
        try response.content.encode(ItemDTO(data: play), as: .json)
        return response
    }
}
