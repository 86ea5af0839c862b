import Core
import Vapor

/// A child's viewing history: every play, newest first, with rewatches marked; unmarking one play
/// or all of a book's; and "continue watching". Another parent's child is a 404 throughout.
struct HistoryController: ChildRouteCollection {
    func boot(child: ChildRoutes) throws {
        child.parent.get("history", use: list)
        child.parent.get("history", "export", use: export)
        child.parent.delete("history", ":play_id", use: removePlay)
        child.parent.delete("history", use: removeBook)
        child.family.get("continue", use: continueWatching)
    }

    /// One play of the history.
    struct ItemDTO: Content, Equatable {
        let id: Int
        let book: BookRefDTO
        let positionSeconds: Int
        let completed: Bool
        let playedAt: Date
        let rewatch: Bool

        init(id: Int, book: BookRefDTO, positionSeconds: Int, completed: Bool, playedAt: Date, rewatch: Bool) {
            self.id = id; self.book = book; self.positionSeconds = positionSeconds; self.completed = completed
            self.playedAt = playedAt; self.rewatch = rewatch
        }

        init(_ play: HistoryQueries.Play) {
            self.init(id: play.id, book: play.book, positionSeconds: play.positionSeconds, completed: play.completed,
                      playedAt: play.playedAt, rewatch: play.rewatch)
        }
    }

    /// A page depends only on the child's plays and the catalog (titles, covers, durations):
    /// kept in `ChildAnswers` until either changes. Without dates, it is read from the child's
    /// play log in memory (`ChildPlayLogs`); with dates, or for a child too large for it, in SQL.
    @Sendable
    func list(req: Request) async throws -> Response {
        let child = try req.child
        let query = QueryParameters(query: req.url.query)
        let page = try PageRequest(query)
        let filter = try await HistoryFilter(query, req: req)
        if let cursor = try HistoryCursor.parse(query) {
            return try await cursorPage(after: cursor, filter: filter, perPage: page.perPage, query: query, req: req)
        }
        return try await req.childAnswer(child, route: "history") {
            let items: [ItemDTO], total: Int
            if !filter.hasDates, let loaded = try await req.appServices.childPlayLogs.log(for: child, app: req.application) {
                (items, total) = try Self.page(of: loaded, book: filter.bookID, page: page)
            } else {
                (items, total) = try await Self.page(HistoryQueries(sql: req.sql, child: child.id), filter: filter, page: page, plays: child.plays)
            }
            return (try Response.page(items, page: page, total: total, query: query, req: req), nil)
        }
    }

    /// Cursor paging (`after`): the plays before the cursor, from SQL, with `Link: rel="next"`
    /// carrying the next cursor while more follow. `page` is ignored; the meta says page 1.
    private func cursorPage(after cursor: HistoryCursor?, filter: HistoryFilter, perPage: Int, query: QueryParameters, req: Request) async throws -> Response {
        let child = try req.child
        let (plays, total, next) = try await HistoryQueries(sql: req.sql, child: child.id).page(filter: filter, after: cursor, perPage: perPage, plays: child.plays)
        let dto = PageDTO(data: plays.map(ItemDTO.init), meta: .init(page: 1, perPage: perPage, totalCount: total, totalPages: PageRequest(perPage: perPage).totalPages(for: total)))
        let response = Response.json(try .json(dto))
        var links = ["<\(req.encodedPath)?\(query.removing("page").setting("after", to: "").encoded)>; rel=\"first\""]
        if let next { links.append("<\(req.encodedPath)?\(query.removing("page").setting("after", to: next.text).encoded)>; rel=\"next\"") }
        response.headers.replaceOrAdd(name: "Link", value: links.joined(separator: ", "))
        return response
    }

    /// A page of the history from the child's play log, only `book`'s plays when given.
    static func page(of loaded: LoadedPlayLog, book: Int?, page: PageRequest) throws -> (items: [ItemDTO], total: Int) {
        let items = try loaded.log.newestFirst(offset: page.offset, limit: page.perPage, book: book).map { play in
            guard let ref = loaded.books[play.book] else { throw Abort(.internalServerError, reason: "play \(play.id) without its book") }
            return ItemDTO(id: play.id, book: ref, positionSeconds: play.position, completed: play.completed,
                           playedAt: play.playedAt, rewatch: play.rewatch)
        }
        return (items, loaded.log.count(book: book))
    }

    /// A page of the history from SQL (`HistoryQueries`).
    static func page(_ queries: HistoryQueries, filter: HistoryFilter, page: PageRequest, plays: Int) async throws -> (items: [ItemDTO], total: Int) {
        let found = try await queries.page(filter: filter, page: page, plays: plays)
        return (found.plays.map(ItemDTO.init), found.total)
    }

    @Sendable
    func export(req: Request) async throws -> Response {
        try await HistoryExport.respond(req: req, child: try req.child.id)
    }

    /// Unmarks one play; the library entry's last_played_at becomes the latest play left (or null).
    @Sendable
    func removePlay(req: Request) async throws -> HTTPStatus {
        let childID = try req.child.id
        let playID = try req.pathID("play_id", missing: "No such play in this child's history.")
        let removed = try await req.transaction { sql in
            try await HistoryQueries(sql: sql, child: childID).removePlay(playID)
        }
        guard removed else { throw Problem.notFound("No such play in this child's history.") }
        return .noContent
    }

    /// Removes all of one book's viewing data for the child (`?book_id=N`, required); the library
    /// entry stays, its last_played_at cleared. Idempotent: nothing to remove is still a 204.
    @Sendable
    func removeBook(req: Request) async throws -> HTTPStatus {
        let childID = try req.child.id
        let query = QueryParameters(query: req.url.query)
        guard let bookID = try query.integer("book_id", in: 1...Int(Int32.max), what: "a positive integer") else {
            throw Problem.invalidParameter("book_id", "book_id is required: the book whose viewing data to remove")
        }
        try await req.transaction { sql in
            try await HistoryQueries(sql: sql, child: childID).removePlays(book: bookID)
        }
        return .noContent
    }


    /// A book to continue: started and not finished (its latest play is not completed).
    struct ContinueDTO: Content {
        let book: BookDTO
        let positionSeconds: Int
        let lastPlayedAt: Date
        @ExplicitNull var progress: Double?

        func encode(to encoder: any Encoder) throws {
            try book.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(positionSeconds, forKey: .positionSeconds)
            try container.encode(lastPlayedAt, forKey: .lastPlayedAt)
            try container.encode(progress, forKey: .progress)
        }
        enum CodingKeys: String, CodingKey { case positionSeconds, lastPlayedAt, progress }
        init(book: BookDTO, positionSeconds: Int, lastPlayedAt: Date, progress: Double?) {
            self.book = book; self.positionSeconds = positionSeconds; self.lastPlayedAt = lastPlayedAt; self.progress = progress
        }
        init(from decoder: any Decoder) throws {
            book = try BookDTO(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            positionSeconds = try container.decode(Int.self, forKey: .positionSeconds)
            lastPlayedAt = try container.decode(Date.self, forKey: .lastPlayedAt)
            progress = try container.decodeIfPresent(Double.self, forKey: .progress)
        }
    }

    /// Books of the library started and not completed, most recently played first; active books
    /// only. Kept in `ChildAnswers` until the child's state changes or a shown book's rights do.
    @Sendable
    func continueWatching(req: Request) async throws -> Response {
        let child = try req.child
        let query = QueryParameters(query: req.url.query)
        let page = try PageRequest(query)
        let country = req.country(of: child)
        return try await req.childAnswer(child, route: "continue") {
            let queries = HistoryQueries(sql: req.sql, child: child.id)
            let counted = try await queries.continueCount(at: req.now)
            let rows = page.offset < counted.n ? try await queries.continuePage(page, country: country, at: req.now) : []
            let items = try rows.map { row in
                let latest = try HistoryQueries.continued(row)
                return ContinueDTO(book: try BookDTO(row: row), positionSeconds: latest.lastPosition, lastPlayedAt: latest.lastPlayed,
                                   progress: latest.progress)
            }
            return (try Response.page(items, page: page, total: counted.n, query: query, req: req),
                    [try BookSQL.nextRightsChange(of: rows), counted.nextLiveChange].compactMap { $0 }.min())
        }
    }
}
