import Foundation
import Vapor

/// Requires a valid token; anything else is a 401 problem. A child device's token (child mode)
/// passes only where `childDevices` says a child may go; elsewhere it is the 403 `parent_only`:
/// every route is a parent's unless it says otherwise.
///
/// A future-based middleware, so a read whose token was verified before stays on its event loop
/// (no hop to the task pool): the signature is checked once per token string (`VerifiedTokens`),
/// the clock claims on every request, and the device and account against the recently signed-out
/// devices and deleted accounts (`RevokedSessions`, read at most four times a second). A request
/// that changes something (any method but GET, HEAD and OPTIONS) is checked in the database too,
/// so a signed-out device or a deleted account writes nothing on any instance; and should the
/// account be deleted while it runs, the foreign-key error its write meets is that 401, not a 500.
struct ParentAuthMiddleware: Middleware {
    var childDevices = false

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let childDevices = self.childDevices
        return request.authenticatedParent().flatMapThrowing { token in
            if token.childID != nil && !childDevices { throw Problem.parentOnly }
            request.auth.login(token)
        }.flatMap {
            next.respond(to: request)
        }.flatMapError { error in
            guard ConstraintViolation(error)?.kind == .foreignKey, let token = request.auth.get(ParentToken.self) else {
                return request.eventLoop.makeFailedFuture(error)
            }
            return request.eventLoop.makeFutureWithTask { () async throws -> Response in
                try await request.requireLiveInDatabase(token)
                throw error
            }
        }
    }
}

extension Request {
    /// Whether a request with this method changes something (and is checked in the database).
    var isWrite: Bool { ![HTTPMethod.GET, .HEAD, .OPTIONS].contains(method) }

    /// The request's parent token when it is valid and its device and account are live (checked
    /// once per request, remembered for the next middleware); the 401 problem otherwise.
    func authenticatedParent() -> EventLoopFuture<ParentToken> {
        if let token = storage[LiveParentTokenKey.self] { return eventLoop.makeSucceededFuture(token) }
        guard let bearer = headers.bearerToken else { return eventLoop.makeFailedFuture(Problem.unauthorized) }
        let request = self
        let verified: EventLoopFuture<ParentToken>
        let services = application.appServices
        if let token = services.verifiedTokens.token(bearer, at: services.clock.now()) {
            verified = eventLoop.makeSucceededFuture(token)
        } else {
            verified = eventLoop.makeFutureWithTask {
                guard let token = await ParentToken.verify(bearer, request: request) else { throw Problem.rejectedToken }
                return token
            }
        }
        return verified.flatMap { token in
            request.requireLiveSession(token).flatMap { () -> EventLoopFuture<ParentToken> in
                guard request.isWrite else { return request.eventLoop.makeSucceededFuture(token) }
                return request.eventLoop.makeFutureWithTask { () async throws -> ParentToken in
                    try await request.requireLiveInDatabase(token)
                    return token
                }
            }
        }.map { token in
            request.storage[LiveParentTokenKey.self] = token
            return token
        }
    }
}

private struct LiveParentTokenKey: StorageKey { typealias Value = ParentToken }
