import Core
import SQLKit
import Vapor

/// Children and their libraries. Every route checks that the child is the caller's; another
/// parent's child is answered exactly like a missing one (404).
struct LibraryController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        let children = routes.grouped(ParentAuthMiddleware()).grouped("children")
        let library = children.grouped(":child_id", "library")
        library.get(use: list)
        library.on(.POST, body: .collect(maxSize: "16kb"), use: add)
        library.delete(":book_id", use: remove)
        library.on(.POST, ":book_id", "plays", body: .collect(maxSize: "16kb"), use: play)
    }

    struct PlayDTO: Content {
        let bookId: Int
        let positionSeconds: Int
        let completed: Bool
        let playedAt: Date
    }

    /// The child id of the path, when it names one of the caller's children.
    private func ownedChild(_ req: Request) throws -> Int {
        guard let id = req.parameters.get("child_id").flatMap({ Int($0) }), id > 0 else {
            throw Problem.notFound("No such child.")
        }
        return id
    }

    /// A page is kept in `ChildAnswers` until the child's plays or library or the catalog change,
    /// or a shown book's rights start or end; "leaving within N days" moves with the clock, so
    /// those pages are always computed.
    @Sendable
    func list(req: Request) async throws -> Response {
        let child = try await req.ownedChildState()
        let query = QueryParameters(query: req.url.query)
        let parameters = try LibraryParameters(query)
        // "Watch it before it goes": only books whose rights end within N days.
        let country = req.country(of: child)
        guard let days = try query.integer("leaving_within_days", in: 1...365, what: "an integer from 1 to 365") else {
            return try await req.childAnswer(child, route: "library") {
                try await page(of: child.id, parameters, leaving: "", country: country, query: query, req: req)
            }
        }
        let leaving: SQLQueryString = " AND \(BookSQL.rightsEndsAt("b", in: country)) <= now() + make_interval(days => \(bind: days)::int)"
        return try await page(of: child.id, parameters, leaving: leaving, country: country, query: query, req: req).response
    }

    private func page(of childID: Int, _ parameters: LibraryParameters, leaving: SQLQueryString, country: String, query: QueryParameters,
                      req: Request) async throws -> (response: Response, validUntil: Date?) {
        let sql = req.sql
        // The count, and when a scheduled book of the library next enters or leaves the catalog.
        let counted = try await sql.raw("""
            SELECT count(*) FILTER (WHERE \(BookSQL.live("b"))) AS n, min(\(BookSQL.nextLiveChange("b"))) AS next_live_change
              FROM library_entries le JOIN books b ON b.id = le.book_id
             WHERE le.child_id = \(bind: childID) AND b.status = 'active'\(leaving)
            """).first()!
        let total = try counted.decode(column: "n", as: Int.self)
        let nextLive = try counted.decode(column: "next_live_change", as: Date?.self)
        var rows: [any SQLRow] = []
        if parameters.page.offset < total {
            let order: SQLFragment
            switch parameters.sort {
            case .recentlyAdded: order = "le.added_at DESC, b.id DESC"
            case .title: order = "lower(b.title) ASC, b.id ASC"
            case .recentlyWatched: order = "le.last_played_at DESC NULLS LAST, le.added_at DESC, b.id DESC"
            }
            rows = try await sql.raw("""
                SELECT \(EntryDTO.columns(country: country)), \(BookSQL.nextRightsChange("b")) AS next_rights_change
                  FROM library_entries le JOIN books b ON b.id = le.book_id \(BookDTO.joins)
                 WHERE le.child_id = \(bind: childID) AND \(BookSQL.live("b"))\(leaving)
                 ORDER BY \(order)
                 LIMIT \(bind: parameters.page.perPage) OFFSET \(bind: parameters.page.offset)
                """).all()
        }
        let entries = try rows.map(EntryDTO.init(row:))
        return (try paged(entries, page: parameters.page, total: total, query: query, req: req),
                [try nextRightsChange(of: rows), nextLive].compactMap { $0 }.min())
    }

    /// Adds a book. Checks in the contract's order: body (400), child (404), already there (409),
    /// unknown book — or one not in the catalog of the parent's country (404), kept out by the
    /// child's controls (422), rights not available now (422).
    @Sendable
    func add(req: Request) async throws -> Response {
        let childID = try ownedChild(req)
        let parentID = try req.parentID
        let bookID = try JSONBody(req).integer("book_id")
        let sql = req.sql
        let countryOf: SQLQueryString = "COALESCE(p.country, \(bind: req.application.settings.defaultCountry))"
        guard let state = try await sql.raw("""
            SELECT EXISTS (SELECT 1 FROM library_entries WHERE child_id = c.id AND book_id = \(bind: bookID)) AS duplicate,
                   b.id IS NOT NULL AS found,
                   \(BookSQL.rightsAvailable("b", country: countryOf)) AS rights, p.country,
                   b.id IS NOT NULL AND storytime_blocked_for_child(c.id, b.id) AS blocked
              FROM children c JOIN parents p ON p.id = c.parent_id
              LEFT JOIN books b ON b.id = \(bind: bookID) AND \(BookSQL.live("b")) AND \(BookSQL.visible("b", country: countryOf))
             WHERE c.id = \(bind: childID) AND c.parent_id = \(bind: parentID)
            """).first() else {
            throw Problem.notFound("No such child.")
        }
        if try state.decode(column: "duplicate", as: Bool.self) { throw Self.duplicate }
        guard try state.decode(column: "found", as: Bool.self) else { throw Problem.notFound("No such book.") }
        if try state.decode(column: "blocked", as: Bool.self) { throw Self.blocked }
        guard try state.decode(column: "rights", as: Bool.self) else {
            throw Problem(status: .unprocessableEntity, code: "rights_unavailable",
                          detail: "This book cannot be watched right now: its rights are not available.")
        }
        let country = try state.decode(column: "country", as: String?.self) ?? req.application.settings.defaultCountry
        // A concurrent add of the same book loses here and gets the same 409.
        guard let row = try await sql.raw("""
            WITH added AS (
                INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: childID), \(bind: bookID))
                ON CONFLICT (child_id, book_id) DO NOTHING RETURNING child_id, book_id, added_at, last_played_at
            )
            SELECT \(EntryDTO.columns(country: country))
              FROM added le JOIN books b ON b.id = le.book_id \(BookDTO.joins)
            """).first() else {
            throw Self.duplicate
        }
        let response = Response(status: .created)
        try response.content.encode(ItemDTO(data: try EntryDTO(row: row)), as: .json)
        return response
    }

    /// A play's optional `played_at` (backdating): an RFC 3339 date-time, in the past or now. A
    /// minute ahead is allowed for a device's clock and recorded as now; later is refused.
    static func playedAt(_ body: JSONBody) throws -> Date? {
        guard let text = try body.optionalString("played_at", maxLength: 40) else { return nil }
        guard let date = Instants.dateTime(text), date.timeIntervalSince1970 >= 946_684_800 else {
            throw Problem.invalidParameter("played_at", "played_at must be an RFC 3339 date-time, such as 2026-11-23T08:30:00Z")
        }
        guard date.timeIntervalSinceNow <= 60 else {
            throw Problem.invalidParameter("played_at", "played_at must not be in the future")
        }
        return date
    }

    static let blocked = Problem(status: .unprocessableEntity, code: "blocked_by_controls",
                                 detail: "The child's family controls keep this book out (too old for them, or blocked).")

    static let duplicate = Problem(status: .conflict, code: "duplicate", detail: "This book is already in the child's library.")

    @Sendable
    func remove(req: Request) async throws -> HTTPStatus {
        let childID = try ownedChild(req)
        let bookID = try req.pathID("book_id", missing: "No such book in this library.")
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
        let bookID = try req.pathID("book_id", missing: "No such book in this library.")
        let body = try JSONBody(req)
        let position = try body.integer("position_seconds", in: 0...(7 * 24 * 3600))
        let completed = try body.bool("completed")
        let playedAt = try Self.playedAt(body)
        let parentID = try req.parentID
        let row = try await req.transaction { sql -> (any SQLRow)? in
            guard try await PlayAllowance.lockChild(childID, parent: parentID, on: sql) else { return nil }
            try await PlayAllowance.requireAllowed(child: childID, book: bookID, req: req, on: sql)
            return try await sql.raw("""
            WITH entry AS (
                UPDATE library_entries le SET last_played_at = GREATEST(le.last_played_at, LEAST(COALESCE(\(bind: playedAt), now()), now()))
                  FROM children c, books b
                 WHERE le.child_id = c.id AND c.id = \(bind: childID) AND c.parent_id = \(bind: parentID)
                   AND le.book_id = \(bind: bookID) AND b.id = le.book_id AND \(BookSQL.live("b"))
                RETURNING le.child_id, le.book_id
            )
            INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at)
            SELECT child_id, book_id, \(bind: position), \(bind: completed), LEAST(COALESCE(\(bind: playedAt), now()), now()) FROM entry
            RETURNING book_id, position_seconds, completed, played_at
            """).first()
        }
        guard let row else {
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
