import Core
import Foundation
import SQLKit
import Vapor

/// The statements of a child's requests for books (`book_requests`, migrations/0024). Every
/// statement names the child's parent too.
struct BookRequestsQueries {
    let sql: any SQLDatabase
    let child: Int
    let parent: Int
    /// The request's instant (the app's clock): rights, and when a request is decided.
    let now: Date

    static let pendingLimit = 20

    /// A request with its book as the catalog shows it.
    struct RequestDTO: Content {
        let id: Int
        let childId: Int
        let status: String
        let createdAt: Date
        @ExplicitNull var decidedAt: Date?
        let book: BookDTO

        static func columns(country: String, at now: Date) -> SQLQueryString {
            "r.id AS request_id, r.child_id, r.status AS request_status, r.created_at, r.decided_at, \(BookDTO.columns(country: country, at: now))"
        }

        init(row: any SQLRow) throws {
            let request = try row.decode(model: RequestRow.self, keyDecodingStrategy: .convertFromSnakeCase)
            id = request.requestId
            childId = request.childId
            status = request.requestStatus
            createdAt = request.createdAt
            decidedAt = request.decidedAt
            book = try BookDTO(row: row)
        }
    }

    /// The request's own columns of a row of `RequestDTO.columns` (the book's are `BookDTO(row:)`'s).
    struct RequestRow: Decodable {
        let requestId: Int
        let childId: Int
        let requestStatus: String
        let createdAt: Date
        let decidedAt: Date?
    }

    struct Count: Decodable { let n: Int }

    /// A request's book and status.
    struct Locked: Decodable { let bookId: Int; let status: BookRequestStatus }

    private func select(_ condition: SQLQueryString, country: String, tail: SQLQueryString = "") async throws -> [RequestDTO] {
        try await sql.raw("""
            SELECT \(RequestDTO.columns(country: country, at: now))
              FROM book_requests r JOIN children c ON c.id = r.child_id JOIN books b ON b.id = r.book_id \(BookDTO.joins)
             WHERE r.child_id = \(bind: child) AND c.family_id = \(FamilyRole.family(of: parent)) AND \(condition)\(tail)
            """).all().map(RequestDTO.init(row:))
    }

    /// The child's pending request for `book`, if any.
    func pending(book: Int, country: String) async throws -> RequestDTO? {
        try await select("r.book_id = \(bind: book) AND r.status = 'pending'", country: country).first
    }

    func pendingCount() async throws -> Int {
        try await sql.raw("SELECT count(*) AS n FROM book_requests WHERE child_id = \(bind: child) AND status = 'pending'")
            .one(decoding: Count.self).n
    }

    func insert(book: Int, device: Int?, country: String) async throws -> RequestDTO? {
        try await sql.raw("""
            INSERT INTO book_requests (child_id, book_id, device_id) VALUES (\(bind: child), \(bind: book), \(bind: device))
            ON CONFLICT (child_id, book_id) WHERE status = 'pending' DO NOTHING
            """).run()
        return try await pending(book: book, country: country)
    }

    /// The requests of `status` (nil: all), newest first, and how many there are.
    func page(status: BookRequestStatus?, page: PageRequest, country: String) async throws -> (rows: [RequestDTO], total: Int) {
        let condition: SQLQueryString = status.map { "r.status = \(bind: $0.rawValue)" } ?? "true"
        let total = try await sql.raw("""
            SELECT count(*) AS n FROM book_requests r JOIN children c ON c.id = r.child_id
             WHERE r.child_id = \(bind: child) AND c.family_id = \(FamilyRole.family(of: parent)) AND \(condition)
            """).one(decoding: Count.self).n
        let rows = page.offset < total
            ? try await select(condition, country: country, tail: " ORDER BY r.id DESC LIMIT \(bind: page.perPage) OFFSET \(bind: page.offset)")
            : []
        return (rows, total)
    }

    /// The request `id` of this child, locked for its decision (nil: none).
    func lockRequest(_ id: Int) async throws -> (book: Int, status: BookRequestStatus)? {
        guard let row = try await sql.raw("""
            SELECT r.book_id, r.status FROM book_requests r JOIN children c ON c.id = r.child_id
             WHERE r.id = \(bind: id) AND r.child_id = \(bind: child) AND c.family_id = \(FamilyRole.family(of: parent)) FOR UPDATE OF r
            """).first(decoding: Locked.self, keyDecodingStrategy: .convertFromSnakeCase) else { return nil }
        return (row.bookId, row.status)
    }

    func decide(_ id: Int, status: BookRequestStatus, country: String) async throws -> RequestDTO? {
        try await sql.raw("""
            UPDATE book_requests SET status = \(bind: status.rawValue), decided_at = \(at: now) WHERE id = \(bind: id) AND child_id = \(bind: child)
            """).run()
        return try await select("r.id = \(bind: id)", country: country).first
    }
}

/// Where a child's ask-a-parent request stands (`book_requests.status`).
enum BookRequestStatus: String, Codable, CaseIterable, Sendable { case pending, approved, declined }
