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
/// Not kept: 5xx answers and errors (the retry runs again), and answers marked `no-store` (they
/// carry tokens, which are never stored: a retried pairing pairs again). Requests without a
/// valid bearer token (sign-up, sign-in) ignore the header.
struct IdempotencyMiddleware: Middleware {
    static let lifetime: TimeInterval = 24 * 3600
    /// How long an in-flight claim holds before another request may take it over (the first
    /// instance died mid-request).
    static let claim: TimeInterval = 60
    static let header: HTTPHeaders.Name = "Idempotency-Key"

    /// Future-based: a request without the header (every read) passes with no hop to the task pool.
    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        guard request.method == .POST || request.method == .DELETE, request.encodedPath.hasPrefix("/api/"),
              let key = request.headers.first(name: Self.header) else { return next.respond(to: request) }
        return request.eventLoop.makeFutureWithTask { try await respond(to: request, key: key, next: next) }
    }

    private func respond(to request: Request, key: String, next: any Responder) async throws -> Response {
        guard !key.isEmpty, key.utf8.count <= 255, key.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            return Problem.invalidParameter("Idempotency-Key", "Idempotency-Key must be 1 to 255 visible ASCII characters.").response()
        }
        guard let parent = await Self.account(of: request) else { return try await next.respond(to: request).get() }
        let body: ByteBuffer?
        do {
            body = try await request.body.collect(max: request.encodedPath.hasSuffix("/plays/batch") ? 128 * 1024 : 64 * 1024).get()
        } catch {
            return Problem(status: .payloadTooLarge, code: "payload_too_large", detail: "The body is too large.").response()
        }
        let fingerprint = Self.fingerprint(request, body: body)
        let store = IdempotencyStore(sql: request.sql)

        switch try await store.claim(parent: parent, key: key, fingerprint: fingerprint) {
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
            try? await store.release(parent: parent, key: key)
            throw error
        }
        if response.status.code >= 500 || response.headers.first(name: .cacheControl)?.contains("no-store") == true || response.body.buffer == nil && response.body.count > 0 {
            try? await store.release(parent: parent, key: key)
        } else {
            try await store.keep(response, parent: parent, key: key)
        }
        return response
    }

    /// The account of a valid bearer token (parent or child device: the parent's), else nil.
    static func account(of request: Request) async -> Int? {
        guard let bearer = request.headers.bearerToken else { return nil }
        return await ParentToken.verify(bearer, request: request)?.parentID
    }

    /// What a retry must repeat: the method, the path with its query, and the body.
    static func fingerprint(_ request: Request, body: ByteBuffer?) -> Data {
        var hash = SHA256()
        hash.update(data: Data("\(request.method.rawValue) \(request.url.string)\n".utf8))
        if let body { hash.update(data: Data(body.readableBytesView)) }
        return Data(hash.finalize())
    }
}

/// The kept answers of `IdempotencyMiddleware`, one row per account and key.
struct IdempotencyStore {
    let sql: any SQLDatabase

    enum Claim {
        case claimed, reused, inFlight
        case done(Response)
    }

    /// Claims the key for this request (a new key, one older than 24 hours, or an in-flight claim
    /// that lapsed), or says what holds it — in one statement, so concurrent retries on any
    /// instance see exactly one claim.
    func claim(parent: Int, key: String, fingerprint: Data) async throws -> Claim {
        let claimed = try await sql.raw("""
            INSERT INTO idempotency_keys (parent_id, key, fingerprint, locked_until)
            VALUES (\(bind: parent), \(bind: key), \(bind: fingerprint), now() + make_interval(secs => \(bind: IdempotencyMiddleware.claim)))
            ON CONFLICT (parent_id, key) DO UPDATE
                SET fingerprint = EXCLUDED.fingerprint, status = NULL, headers = NULL, body = NULL,
                    created_at = now(), locked_until = EXCLUDED.locked_until
                WHERE idempotency_keys.created_at < now() - make_interval(secs => \(bind: IdempotencyMiddleware.lifetime))
                   OR (idempotency_keys.status IS NULL AND idempotency_keys.locked_until < now()
                       AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
            RETURNING 1 AS claimed
            """).first()
        if claimed != nil { return .claimed }
        guard let row = try await sql.raw("""
            SELECT fingerprint, status, headers::text AS headers, body FROM idempotency_keys
            WHERE parent_id = \(bind: parent) AND key = \(bind: key)
            """).first() else { return .inFlight }
        guard try row.decode(column: "fingerprint", as: Data.self) == fingerprint else { return .reused }
        guard let status = try row.decode(column: "status", as: Int?.self) else { return .inFlight }
        var headers = HTTPHeaders()
        let pairs = try JSONDecoder().decode([[String]].self, from: Data((try row.decode(column: "headers", as: String?.self) ?? "[]").utf8))
        for pair in pairs where pair.count == 2 { headers.add(name: pair[0], value: pair[1]) }
        headers.replaceOrAdd(name: "Idempotent-Replayed", value: "true")
        let body = try row.decode(column: "body", as: Data?.self) ?? Data()
        return .done(Response(status: HTTPStatus(statusCode: status), headers: headers, body: body.isEmpty ? .empty : .init(data: body)))
    }

    /// Keeps the first answer (its status, headers and exact body bytes).
    func keep(_ response: Response, parent: Int, key: String) async throws {
        let skipped: Set<String> = ["content-length", "date", "connection", "transfer-encoding", "set-cookie"]
        let headers = response.headers.filter { !skipped.contains($0.name.lowercased()) }.map { [$0.name, $0.value] }
        let body = response.body.buffer.map { Data($0.readableBytesView) } ?? Data()
        try await sql.raw("""
            UPDATE idempotency_keys SET status = \(bind: Int(response.status.code)),
                headers = \(bind: String(decoding: try JSONEncoder().encode(headers), as: UTF8.self))::jsonb,
                body = \(bind: body), locked_until = NULL
            WHERE parent_id = \(bind: parent) AND key = \(bind: key)
            """).run()
    }

    /// Lets the key go (the request failed in a way a retry should run again).
    func release(parent: Int, key: String) async throws {
        try await sql.raw("DELETE FROM idempotency_keys WHERE parent_id = \(bind: parent) AND key = \(bind: key) AND status IS NULL").run()
    }

    /// Drops keys past their 24 hours (run from the retention task).
    static func purge(on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(secs => \(bind: IdempotencyMiddleware.lifetime))
            """).run()
    }
}
