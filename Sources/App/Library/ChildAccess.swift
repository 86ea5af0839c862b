import SQLKit
import Vapor

extension Request {
    /// The path's `:child_id` when it names one of the caller's children. Anything else — not a
    /// number, unknown, another parent's — is the same 404.
    func ownedChildID() async throws -> Int {
        guard let id = parameters.get("child_id").flatMap({ Int($0) }), id > 0 else { throw Problem.notFound("No such child.") }
        return try await requireOwnChild(id)
    }

    /// `id` when it names one of the caller's children; otherwise the 404 `missing` describes.
    @discardableResult
    func requireOwnChild(_ id: Int, missing: String = "No such child.") async throws -> Int {
        guard try await sql.raw("SELECT 1 AS one FROM children WHERE id = \(bind: id) AND parent_id = \(bind: try parentID)").first() != nil else {
            throw Problem.notFound(missing)
        }
        return id
    }

    /// `ownedChildID()` with the child's play count and activity counter (moved by every change
    /// to its plays or library; `migrations/0009`), in the same statement.
    func ownedChildActivity() async throws -> (id: Int, plays: Int, activity: Int) {
        guard let id = parameters.get("child_id").flatMap({ Int($0) }), id > 0,
              let row = try await sql.raw("""
                  SELECT plays_count, activity FROM children WHERE id = \(bind: id) AND parent_id = \(bind: try parentID)
                  """).first()
        else { throw Problem.notFound("No such child.") }
        return (id, try row.decode(column: "plays_count", as: Int.self), try row.decode(column: "activity", as: Int.self))
    }

    /// A positive integer path parameter, or the 404 `missing` describes.
    func pathID(_ name: String, missing: String) throws -> Int {
        guard let id = parameters.get(name).flatMap({ Int($0) }), id > 0 else { throw Problem.notFound(missing) }
        return id
    }
}
