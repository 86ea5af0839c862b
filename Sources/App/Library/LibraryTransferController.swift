import Core
import SQLKit
import Vapor

/// Managing a family's libraries across children: copy or move one book, bulk copy / move /
/// remove, and adding a whole category. Both children must be the caller's (404 otherwise); every
/// change is one transaction.
struct LibraryTransferController: ChildRouteCollection {
    func boot(child: ChildRoutes) throws {
        let library = child.parent.grouped("library")
        library.on(.POST, ":book_id", "copy", body: .collect(maxSize: "16kb"), use: copy)
        library.on(.POST, ":book_id", "move", body: .collect(maxSize: "16kb"), use: move)
        library.on(.POST, "bulk", body: .collect(maxSize: "64kb"), use: bulk)
        library.on(.POST, "categories", ":category", body: .collect(maxSize: "16kb"), use: addCategory)
    }

    typealias EntryDTO = LibraryController.EntryDTO

    /// The body's `to_child_id`, when it names one of the caller's children (404 otherwise).
    private func target(_ body: JSONBody, req: Request) async throws -> Int {
        try await req.ownedChild(try body.integer("to_child_id", in: 1...Int(Int32.max)), missing: "No such child to copy or move to.").id
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
            switch try await LibraryTransferQueries.transfer(book: book, from: source, to: target, move: move, preserveProgress: preserve,
                                           removeSourceOnDuplicate: removeSource, now: req.now, on: sql) {
            case .missing: throw Problem.notFound("No such book in this child's library.")
            case .duplicate: throw LibraryController.duplicate
            case .blocked: throw LibraryController.blocked
            case .done:
                guard let entry = try await LibraryQueries.entry(child: target, book: book, country: country, at: req.now, on: sql) else {
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
            try await LibraryTransferQueries.bulk(action: action, ids: ids, from: source, to: target, preserveProgress: preserve, now: req.now, on: sql)
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
        let queries = LibraryTransferQueries.self
        guard let category = try await queries.category(named: key, id: categoryID, on: req.sql) else { throw Problem.notFound("No such category.") }
        let country = try await req.parentCountry()
        let result = try await queries.addCategory(category, to: child, country: country, limit: limit, now: req.now, on: req.sql)
        return ItemDTO(data: CategoryResultDTO(added: result.added, skipped: result.wanted - result.added))
    }
}
