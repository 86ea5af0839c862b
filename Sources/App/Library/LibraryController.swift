import Core
import SQLKit
import Vapor

/// Children and their libraries. Every route checks that the child is the caller's; another
/// parent's child is answered exactly like a missing one (404).
struct LibraryController: ChildRouteCollection {
    func boot(child: ChildRoutes) throws {
        child.family.get("library", use: list)
        child.family.on(.POST, "library", ":book_id", "plays", body: .collect(maxSize: "16kb"), use: play)
        child.family.on(.POST, "plays", "batch", body: .collect(maxSize: "128kb"), use: OfflinePlays.batch)
        child.parent.on(.POST, "library", body: .collect(maxSize: "16kb"), use: add)
        child.parent.delete("library", ":book_id", use: remove)
    }

    /// A page is kept in `ChildAnswers` until the child's plays, library or controls or the catalog
    /// change, or a shown book's rights start or end; "leaving within N days" moves with the clock, so
    /// those pages are always computed.
    @Sendable
    func list(req: Request) async throws -> Response {
        let child = try req.child
        let query = QueryParameters(query: req.url.query)
        let parameters = try LibraryParameters(query)
        // "Watch it before it goes": only books whose rights end within N days.
        let country = req.country(of: child)
        guard let days = try query.integer("leaving_within_days", in: 1...365, what: "an integer from 1 to 365") else {
            // Entries say `playable`, which the child's controls decide and its fingerprint does
            // not cover: a page is kept per version of the controls (each save stamps `updated_at`).
            let controls = child.controls.updatedAt.map { "\($0.timeIntervalSince1970)" } ?? "none"
            return try await req.childAnswer(child, route: "library|\(controls)") {
                try await page(of: child.id, parameters, leaving: nil, country: country, query: query, req: req)
            }
        }
        return try await page(of: child.id, parameters, leaving: days, country: country, query: query, req: req).response
    }

    /// A page of the library; `leaving`: only books whose rights end within that many days.
    private func page(of childID: Int, _ parameters: LibraryParameters, leaving: Int?, country: String, query: QueryParameters,
                      req: Request) async throws -> (response: Response, validUntil: Date?) {
        let queries = LibraryQueries(sql: req.sql, child: childID, parent: try req.parentID, now: req.now)
        let counted = try await queries.count(leavingWithin: leaving, country: country)
        let rows = parameters.page.offset < counted.n ? try await queries.page(parameters, leavingWithin: leaving, country: country) : []
        let entries = try rows.map(EntryDTO.init(row:))
        return (try Response.page(entries, page: parameters.page, total: counted.n, query: query, req: req),
                [try BookSQL.nextRightsChange(of: rows), counted.nextLiveChange].compactMap { $0 }.min())
    }

    /// Adds a book. Checks in the contract's order: body (400), child (404), already there (409),
    /// unknown book — or one not in the catalog of the parent's country (404), kept out by the
    /// child's controls (422), rights not available now (422).
    @Sendable
    func add(req: Request) async throws -> Response {
        let queries = LibraryQueries(sql: req.sql, child: try req.child.id, parent: try req.parentID, now: req.now)
        let bookID = try JSONBody(req).integer("book_id")
        let defaultCountry = req.application.settings.defaultCountry
        guard let check = try await queries.addCheck(book: bookID, defaultCountry: defaultCountry) else {
            throw Problem.notFound("No such child.")
        }
        if check.duplicate { throw Self.duplicate }
        guard check.found else { throw Problem.notFound("No such book.") }
        if check.blocked { throw Self.blocked }
        guard check.rights else { throw Self.rightsUnavailable }
        // A concurrent add of the same book loses here and gets the same 409.
        guard let entry = try await queries.insert(book: bookID, country: check.country ?? defaultCountry) else { throw Self.duplicate }
        let response = Response(status: .created)
        try response.content.encode(ItemDTO(data: entry), as: .json)
        return response
    }

    /// A play's optional `played_at` (backdating): an RFC 3339 date-time, in the past or now. A
    /// minute ahead of `now` (the app's clock) is allowed for a device's clock and recorded as now;
    /// later is refused.
    static func playedAt(_ body: JSONBody, now: Date) throws -> Date? {
        guard let text = try body.optionalString("played_at", maxLength: 40) else { return nil }
        guard let date = Instants.dateTime(text), date.timeIntervalSince1970 >= 946_684_800 else {
            throw Problem.invalidParameter("played_at", "played_at must be an RFC 3339 date-time, such as 2026-11-23T08:30:00Z")
        }
        guard date.timeIntervalSince(now) <= 60 else {
            throw Problem.invalidParameter("played_at", "played_at must not be in the future")
        }
        return date
    }

    static let blocked = Problem(status: .unprocessableEntity, code: "blocked_by_controls",
                                 detail: "The child's family controls keep this book out (too old for them, or blocked).")

    static let rightsUnavailable = Problem(status: .unprocessableEntity, code: "rights_unavailable",
                                           detail: "This book cannot be watched right now: its rights are not available.")

    static let duplicate = Problem(status: .conflict, code: "duplicate", detail: "This book is already in the child's library.")

    @Sendable
    func remove(req: Request) async throws -> HTTPStatus {
        let queries = LibraryQueries(sql: req.sql, child: try req.child.id, parent: try req.parentID, now: req.now)
        let bookID = try req.pathID("book_id", missing: "No such book in this library.")
        guard try await queries.remove(book: bookID) else { throw Problem.notFound("No such book in this child's library.") }
        return .noContent
    }

    /// Records a play (every one is kept: viewing history) and sets the entry's last_played_at,
    /// judged by the child's controls under the child's lock (`PlayAllowance`).
    @Sendable
    func play(req: Request) async throws -> Response {
        let child = try req.child
        let parentID = try req.parentID
        let bookID = try req.pathID("book_id", missing: "No such book in this library.")
        let body = try JSONBody(req)
        let position = try body.integer("position_seconds", in: 0...(7 * 24 * 3600))
        let completed = try body.bool("completed")
        let playedAt = try Self.playedAt(body, now: req.now)
        let play = try await req.transaction { sql -> LibraryQueries.Play? in
            guard try await PlayAllowance.lockChild(child.id, parent: parentID, on: sql) else { return nil }
            try await PlayAllowance.requireAllowed(child: child.id, controls: child.controls, book: bookID, on: sql, now: req.now)
            return try await LibraryQueries(sql: sql, child: child.id, parent: parentID, now: req.now)
                .recordPlay(book: bookID, position: position, completed: completed, playedAt: playedAt)
        }
        guard let play else { throw Problem.notFound("No such book in this child's library.") }
        let response = Response(status: .created)
        try response.content.encode(ItemDTO(data: play), as: .json)
        return response
    }
}
