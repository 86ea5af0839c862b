import Vapor

/// Every route under `children/:child_id` is about one of the caller's children. `routes.swift`
/// builds that group once, with authentication and this middleware, so a handler cannot forget
/// the check: it reads `req.child`. Anything that is not the caller's child — not a number,
/// unknown, another parent's — is the same 404. A child device (child mode) reaches only its own
/// child: any other id is the 403 `parent_only`, whether or not it exists.
///
/// Future-based: the child's state comes from a batched read (`ChildStates`), so the request
/// waits on its own event loop, with no hop to the task pool.
struct OwnedChildMiddleware: Middleware {
    func respond(to req: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        guard let id = req.parameters.get("child_id").flatMap({ Int($0) }), id > 0 else {
            return req.eventLoop.makeFailedFuture(req.childDeviceChild == nil ? Problem.notFound("No such child.") : Problem.parentOnly)
        }
        return req.ownedChildState(id).flatMap { state in
            req.storage[OwnedChildKey.self] = state
            return next.respond(to: req)
        }
    }
}

/// Refuses a child device's token with the 403 `parent_only` (on routes a child's group also reaches).
struct ParentOnlyMiddleware: Middleware {
    func respond(to req: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        req.childDeviceChild == nil ? next.respond(to: req) : req.eventLoop.makeFailedFuture(Problem.parentOnly)
    }
}

private struct OwnedChildKey: StorageKey { typealias Value = ChildState }

extension Request {
    /// The one ownership check: `id` when it names one of the caller's children (the child of a
    /// child device: only that one), with its state and family controls (`ChildStates`: one
    /// statement, shared by concurrent requests); otherwise the 404 `missing` describes.
    func ownedChildState(_ id: Int, missing: String = "No such child.") -> EventLoopFuture<ChildState> {
        if let own = childDeviceChild, own != id { return eventLoop.makeFailedFuture(Problem.parentOnly) }
        guard let parent = try? parentID else { return eventLoop.makeFailedFuture(Problem.unauthorized) }
        return appServices.childStates.reads.value(for: .init(child: id, parent: parent), on: self).flatMapThrowing { state in
            guard let state else { throw Problem.notFound(missing) }
            return state
        }
    }

    func ownedChild(_ id: Int, missing: String = "No such child.") async throws -> ChildState {
        try await ownedChildState(id, missing: missing).get()
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
