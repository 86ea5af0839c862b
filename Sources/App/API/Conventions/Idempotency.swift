import Crypto
import Foundation
import SQLKit
import Vapor

/// `Idempotency-Key` on every POST and DELETE of the parent API (the IETF httpapi draft, with
/// Stripe's semantics), for a signed-in account: the first answer to a key is kept 24 hours and
/// replayed byte for byte (`Idempotent-Replayed: true`) to a retry with the same method, path
/// and body; the same key with another request is 422 `idempotency_key_reused`; while the first
/// is still running, 409 `idempotency_key_in_use`. Kept in PostgreSQL, so every instance agrees.
///
/// The credential is checked first (signature, expiry, a signed-in device, a live account — in the
/// database: these are writes), and keys belong to it: the parent's account, or one child device
/// (`Credential`), so a child's tablet neither replays nor blocks the parent's answers. Requests
/// without a live bearer token (sign-up, sign-in, a signed-out device, a deleted account) ignore
/// the header and get the route's own answer.
///
/// Not kept: 5xx answers and errors (the retry runs again), refusals of the credential (any 401,
/// the 403s `parent_only` and `parent_role_required`: the same key may serve the request once it
/// is allowed — a caregiver made a parent retries with it), and answers
/// marked `no-store` (they carry tokens, which are never stored: a retried pairing pairs again).
struct IdempotencyMiddleware: Middleware {
    static let lifetime: TimeInterval = 24 * 3600
    /// How long an in-flight claim holds before another request may take it over (the first
    /// instance died mid-request).
    static let claim: TimeInterval = 60
    static let header: HTTPHeaders.Name = "Idempotency-Key"

    /// Future-based: a request without the header (every read) passes with no hop to the task pool.
    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        guard request.method == .POST || request.method == .DELETE, request.isParentAPI,
              let key = request.headers.first(name: Self.header) else { return next.respond(to: request) }
        return request.eventLoop.makeFutureWithTask { try await respond(to: request, key: key, next: next) }
    }

    private func respond(to request: Request, key: String, next: any Responder) async throws -> Response {
        guard let owner = await Self.credential(of: request) else { return try await next.respond(to: request).get() }
        guard !key.isEmpty, key.utf8.count <= 255, key.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            return Problem.invalidParameter("Idempotency-Key", "Idempotency-Key must be 1 to 255 visible ASCII characters.").response()
        }
        let body: ByteBuffer?
        do {
            body = try await request.body.collect(max: request.encodedPath.hasSuffix("/plays/batch") ? 128 * 1024 : 64 * 1024).get()
        } catch {
            return Problem(status: .payloadTooLarge, code: "payload_too_large", detail: "The body is too large.").response()
        }
        let fingerprint = Self.fingerprint(request, body: body)
        let store = IdempotencyStore(sql: request.sql)

        switch try await store.claim(owner, key: key, fingerprint: fingerprint) {
        case .claimed:
            break
        case .reused:
            return Problem(status: .unprocessableEntity, code: "idempotency_key_reused",
                           detail: "This Idempotency-Key was used for another request (method, path or body) in the last 24 hours.").response()
        case .inFlight:
            var problem = Problem(status: .conflict, code: "idempotency_key_in_use",
                                  detail: "The first request with this Idempotency-Key is still running; retry in a moment.")
            problem.headers = ["Retry-After": "1"]
            return problem.response()
        case .done(let stored):
            return stored
        }

        let response: Response
        do {
            response = try await next.respond(to: request).get()
        } catch {
            try? await store.release(owner, key: key)
            throw error
        }
        if response.status.code >= 500 || Self.isRefusal(response) || response.headers.first(name: .cacheControl)?.contains("no-store") == true || response.body.buffer == nil && response.body.count > 0 {
            try? await store.release(owner, key: key)
        } else {
            try await store.keep(response, owner, key: key)
        }
        return response
    }

    /// Who holds a key: the account, and the parent (`parent`) or one child device of it.
    struct Credential: Sendable {
        let parent: Int
        let subject: String
    }

    /// The credential of a live bearer token (`authenticatedParent`), else nil.
    static func credential(of request: Request) async -> Credential? {
        guard request.headers.bearerToken != nil, let token = try? await request.authenticatedParent().get(),
              let parent = token.parentID else { return nil }
        return Credential(parent: parent, subject: token.childID.map { "child_device:\(token.deviceID ?? 0):\($0)" } ?? "parent")
    }

    /// A refusal of the credential rather than an answer to the request: any 401, the 403s
    /// `parent_only` and `parent_role_required`.
    static func isRefusal(_ response: Response) -> Bool {
        if response.status == .unauthorized { return true }
        guard response.status == .forbidden, let buffer = response.body.buffer,
              let problem = try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any] else { return false }
        return ["parent_only", "parent_role_required"].contains(problem["code"] as? String)
    }

    /// What a retry must repeat: the method, the path with its query, and the body.
    static func fingerprint(_ request: Request, body: ByteBuffer?) -> Data {
        var hash = SHA256()
        hash.update(data: Data("\(request.method.rawValue) \(request.url.string)\n".utf8))
        if let body { hash.update(data: Data(body.readableBytesView)) }
        return Data(hash.finalize())
    }
}

