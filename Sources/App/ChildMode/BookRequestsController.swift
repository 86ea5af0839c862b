import Core
import SQLKit
import Vapor

/// Ask a parent: `POST /api/v1/children/:child_id/requests {book_id}` and `GET …/requests`
/// (child device or parent); `POST …/requests/:request_id/approve` and `…/decline` (parent).
///
/// A child asks for a book of its catalog (the one it browses: country and controls, but not
/// approved-only — asking is how an approved-only child gets new books). Asking again for a
/// pending book changes nothing (200 with that request); at most 20 are pending. Approving adds
/// the book to the library by the rules of an add (409 `duplicate`, 422 `blocked_by_controls`,
/// 422 `rights_unavailable`, and then nothing changes); declining keeps the request as decided.
struct BookRequestsController: ChildRouteCollection {
    func boot(child: ChildRoutes) throws {
        child.family.on(.POST, "requests", body: .collect(maxSize: "16kb"), use: ask)
        child.family.get("requests", use: list)
        child.answerer.post("requests", ":request_id", "approve", use: approve)
        child.answerer.post("requests", ":request_id", "decline", use: decline)
    }

    /// The list's filter: a request status, or every request.
    enum Filter: String, CaseIterable { case pending, approved, declined, all }

    @Sendable
    func ask(req: Request) async throws -> Response {
        let child = try req.child
        let parent = try req.parentID
        let book = try JSONBody(req).integer("book_id", in: 1...Int(Int64.max))
        let country = req.country(of: child)
        let defaultCountry = req.application.settings.defaultCountry
        let device = req.deviceID
        let (request, created) = try await req.transaction { sql -> (BookRequestsQueries.RequestDTO, Bool) in
            guard try await PlayAllowance.lockChild(child.id, parent: parent, on: sql) else { throw Problem.notFound("No such child.") }
            let queries = BookRequestsQueries(sql: sql, child: child.id, parent: parent, now: req.now)
            if let pending = try await queries.pending(book: book, country: country) { return (pending, false) }
            guard let check = try await LibraryQueries(sql: sql, child: child.id, parent: parent, now: req.now).addCheck(book: book, defaultCountry: defaultCountry),
                  check.found, !check.blocked else { throw Problem.notFound("No such book.") }
            if check.duplicate { throw LibraryController.duplicate }
            guard try await queries.pendingCount() < BookRequestsQueries.pendingLimit else {
                throw Problem(status: .unprocessableEntity, code: "too_many_requests_pending",
                              detail: "A child can have at most \(BookRequestsQueries.pendingLimit) requests waiting for a parent.")
            }
            guard let request = try await queries.insert(book: book, device: device, country: country) else {
                throw Abort(.internalServerError, reason: "the new request was not found")
            }
            return (request, true)
        }
        return Response.json(try .json(ItemDTO(data: request)), status: created ? .created : .ok)
    }

    /// `status`: pending (the default), approved, declined or all; newest first, paginated.
    @Sendable
    func list(req: Request) async throws -> Response {
        let child = try req.child
        let query = QueryParameters(query: req.url.query)
        let page = try PageRequest(query)
        let filter = try query.choice("status", as: Filter.self, allowed: Filter.allCases) ?? .pending
        let (rows, total) = try await BookRequestsQueries(sql: req.sql, child: child.id, parent: try req.parentID, now: req.now)
            .page(status: BookRequestStatus(rawValue: filter.rawValue), page: page, country: req.country(of: child))
        return try Response.page(rows, page: page, total: total, query: query, req: req)
    }

    /// The request approved and the library entry it made.
    struct ApprovalDTO: Content {
        let request: BookRequestsQueries.RequestDTO
        let entry: LibraryController.EntryDTO
    }

    @Sendable
    func approve(req: Request) async throws -> ItemDTO<ApprovalDTO> {
        let child = try req.child
        let parent = try req.parentID
        let id = try req.pathID("request_id", missing: "No such request.")
        let defaultCountry = req.application.settings.defaultCountry
        let country = req.country(of: child)
        return ItemDTO(data: try await req.transaction { sql in
            let queries = BookRequestsQueries(sql: sql, child: child.id, parent: parent, now: req.now)
            let book = try await Self.lockPending(id, queries)
            let library = LibraryQueries(sql: sql, child: child.id, parent: parent, now: req.now)
            guard let check = try await library.addCheck(book: book, defaultCountry: defaultCountry), check.found else {
                throw Problem(status: .unprocessableEntity, code: "book_unavailable",
                              detail: "This book is no longer in the child's catalog; decline the request.")
            }
            if check.duplicate { throw LibraryController.duplicate }
            if check.blocked { throw LibraryController.blocked }
            guard check.rights else { throw LibraryController.rightsUnavailable }
            guard let entry = try await library.insert(book: book, country: check.country ?? defaultCountry) else { throw LibraryController.duplicate }
            guard let request = try await queries.decide(id, status: .approved, country: country) else { throw Problem.notFound("No such request.") }
            return ApprovalDTO(request: request, entry: entry)
        })
    }

    @Sendable
    func decline(req: Request) async throws -> ItemDTO<BookRequestsQueries.RequestDTO> {
        let child = try req.child
        let parent = try req.parentID
        let id = try req.pathID("request_id", missing: "No such request.")
        let country = req.country(of: child)
        return ItemDTO(data: try await req.transaction { sql in
            let queries = BookRequestsQueries(sql: sql, child: child.id, parent: parent, now: req.now)
            _ = try await Self.lockPending(id, queries)
            guard let request = try await queries.decide(id, status: .declined, country: country) else { throw Problem.notFound("No such request.") }
            return request
        })
    }

    /// The book of pending request `id`, locked; 404 when the child has no such request, 409
    /// `request_decided` when it was approved or declined already.
    private static func lockPending(_ id: Int, _ queries: BookRequestsQueries) async throws -> Int {
        guard let (book, status) = try await queries.lockRequest(id) else { throw Problem.notFound("No such request.") }
        guard status == .pending else {
            throw Problem(status: .conflict, code: "request_decided", detail: "This request was \(status.rawValue) already.")
        }
        return book
    }
}
