import Foundation
import SQLKit
import Vapor

/// A parent's children, managed from the app: `GET`/`POST /children`, `PATCH`/`DELETE
/// /children/:child_id`. Another parent's child is a 404, like a missing one.
struct ChildrenRoutes: APIRouteCollection, ChildRouteCollection {
    func boot(api: APIRoutes) throws {
        let children = api.familyParent.grouped("children")
        children.get(use: list)
        children.on(.POST, body: .collect(maxSize: "16kb"), use: add)
    }

    func boot(child: ChildRoutes) throws {
        child.family.get(use: show)
        child.parent.on(.PATCH, body: .collect(maxSize: "16kb"), use: update)
        child.parent.delete(use: remove)
    }

    /// One child: what a child device shows of itself (its name and avatar).
    @Sendable
    func show(req: Request) async throws -> Response {
        try await Self.answer(child: try req.child.id, parent: try req.parentID, status: .ok, req: req)
    }

    @Sendable
    func list(req: Request) async throws -> ItemDTO<[ChildDTO]> {
        ItemDTO(data: try await ChildrenQueries.list(parent: try req.parentID, at: req.now, on: req.sql))
    }

    @Sendable
    func add(req: Request) async throws -> Response {
        let body = try JSONBody(req)
        let name = try Self.name(body)
        let birthYear = try Self.birthYear(body, now: req.now)
        let avatar = try Self.avatar(body)
        let parent = try req.parentID
        guard let id = try await req.transaction({ sql in
            try await ChildrenQueries.add(parent: parent, name: name, birthYear: birthYear ?? nil, avatar: avatar ?? nil, on: sql)
        }) else {
            throw Problem(status: .unprocessableEntity, code: "too_many_children",
                          detail: "An account can have at most \(ChildrenQueries.limit) children.")
        }
        return try await Self.answer(child: id, parent: parent, status: .created, req: req)
    }

    /// Fields left out keep their value; `null` clears the birth year or the avatar.
    @Sendable
    func update(req: Request) async throws -> Response {
        let child = try req.child.id
        let body = try JSONBody(req)
        var values: [(column: String, value: (any Encodable & Sendable)?)] = []
        if body.has("name") { values.append(("name", try Self.name(body))) }
        if let year = try Self.birthYear(body, now: req.now) { values.append(("birth_year", year)) }
        if let avatar = try Self.avatar(body) { values.append(("avatar", avatar)) }
        let parent = try req.parentID
        guard try await ChildrenQueries.update(child: child, parent: parent, values, on: req.sql) else { throw Problem.notFound("No such child.") }
        return try await Self.answer(child: child, parent: parent, status: .ok, req: req)
    }

    /// Removes the child with its library, plays, controls and the answers kept about it; the
    /// answer is a receipt of what was removed.
    @Sendable
    func remove(req: Request) async throws -> ItemDTO<RemovalReceiptDTO> {
        let child = try req.child.id
        let parent = try req.parentID
        guard let removed = try await req.transaction({ sql in try await ChildrenQueries.remove(child: child, parent: parent, on: sql) }) else {
            throw Problem.notFound("No such child.")
        }
        req.appServices.revokedSessions.note(removed.devices)
        req.appServices.forget(children: [child])
        return ItemDTO(data: removed.receipt)
    }

    private static func answer(child: Int, parent: Int, status: HTTPStatus, req: Request) async throws -> Response {
        guard let dto = try await ChildrenQueries.list(parent: parent, child: child, at: req.now, on: req.sql).first else { throw Problem.notFound("No such child.") }
        let response = Response(status: status)
        try response.content.encode(ItemDTO(data: dto), as: .json)
        return response
    }

    static func name(_ body: JSONBody) throws -> String {
        let name = try body.string("name", maxLength: 100).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw Problem.invalidParameter("name", "name must be 1 to 100 printable characters")
        }
        return name
    }

    /// `.none`: not given; `.some(nil)`: null (clear); `.some(year)`.
    static func birthYear(_ body: JSONBody, now: Date) throws -> Int?? {
        guard body.has("birth_year") else { return .none }
        if body.isNull("birth_year") { return .some(nil) }
        let thisYear = Calendar(identifier: .gregorian).component(.year, from: now)
        return .some(try body.integer("birth_year", in: (thisYear - 25)...thisYear))
    }

    static func avatar(_ body: JSONBody) throws -> String?? {
        guard body.has("avatar") else { return .none }
        if body.isNull("avatar") { return .some(nil) }
        let key = try body.string("avatar", maxLength: 32)
        guard ChildAvatars.keys.contains(key) else {
            throw Problem.invalidParameter("avatar", "avatar must be one of " + ChildAvatars.keys.joined(separator: ", "))
        }
        return .some(key)
    }
}
