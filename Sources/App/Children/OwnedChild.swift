import Vapor

/// Every route under `children/:child_id` is about one of the caller's children. `routes.swift`
/// builds that group once, with parent authentication and this middleware, so a handler cannot
/// forget the check: it reads `req.child`. Anything that is not the caller's child — not a number,
/// unknown, another parent's — is the same 404.
struct OwnedChildMiddleware: AsyncMiddleware {
    func respond(to req: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let id = req.parameters.get("child_id").flatMap({ Int($0) }), id > 0 else { throw Problem.notFound("No such child.") }
        req.storage[OwnedChildKey.self] = try await req.ownedChild(id)
        return try await next.respond(to: req)
    }
}

private struct OwnedChildKey: StorageKey { typealias Value = ChildState }

extension Request {
    /// The one ownership check: `id` when it names one of the caller's children, with its state
    /// and family controls (`ChildStates`: one statement, shared by concurrent requests);
    /// otherwise the 404 `missing` describes.
    func ownedChild(_ id: Int, missing: String = "No such child.") async throws -> ChildState {
        guard let state = try await appServices.childStates.reads.value(for: .init(child: id, parent: try parentID), on: self).get() else {
            throw Problem.notFound(missing)
        }
        return state
    }

    /// The child of a `children/:child_id` route, checked by `OwnedChildMiddleware`.
    var child: ChildState {
        get throws {
            guard let child = storage[OwnedChildKey.self] else {
                throw Abort(.internalServerError, reason: "route outside the children/:child_id group")
            }
            return child
        }
    }
}
