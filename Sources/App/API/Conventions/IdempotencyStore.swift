import Foundation
import SQLKit
import Vapor

/// The kept answers of `IdempotencyMiddleware`, one row per credential (account and subject) and key.
struct IdempotencyStore {
    let sql: any SQLDatabase

    enum Claim {
        case claimed, reused, inFlight
        case done(Response)
    }

    /// A kept key's row: its request's fingerprint and, once answered, the answer.
    struct Kept: Decodable { let fingerprint: Data; let status: Int?; let headers: String?; let body: Data? }

    /// Claims the key for this request (a new key, one older than 24 hours, or an in-flight claim
    /// that lapsed), or says what holds it — in one statement, so concurrent retries on any
    /// instance see exactly one claim.
    func claim(_ owner: IdempotencyMiddleware.Credential, key: String, fingerprint: Data) async throws -> Claim {
        let claimed = try await sql.raw("""
            INSERT INTO idempotency_keys (parent_id, subject, key, fingerprint, locked_until)
            VALUES (\(bind: owner.parent), \(bind: owner.subject), \(bind: key), \(bind: fingerprint), now() + make_interval(secs => \(bind: IdempotencyMiddleware.claim)))
            ON CONFLICT (parent_id, subject, key) DO UPDATE
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
            WHERE parent_id = \(bind: owner.parent) AND subject = \(bind: owner.subject) AND key = \(bind: key)
            """).first(decoding: Kept.self) else { return .inFlight }
        guard row.fingerprint == fingerprint else { return .reused }
        guard let status = row.status else { return .inFlight }
        var headers = HTTPHeaders()
        let pairs = try JSONDecoder().decode([[String]].self, from: Data((row.headers ?? "[]").utf8))
        for pair in pairs where pair.count == 2 { headers.add(name: pair[0], value: pair[1]) }
        headers.replaceOrAdd(name: "Idempotent-Replayed", value: "true")
        let body = row.body ?? Data()
        return .done(Response(status: HTTPStatus(statusCode: status), headers: headers, body: body.isEmpty ? .empty : .init(data: body)))
    }

    /// Keeps the first answer (its status, headers and exact body bytes).
    func keep(_ response: Response, _ owner: IdempotencyMiddleware.Credential, key: String) async throws {
        let skipped: Set<String> = ["content-length", "date", "connection", "transfer-encoding", "set-cookie"]
        let headers = response.headers.filter { !skipped.contains($0.name.lowercased()) }.map { [$0.name, $0.value] }
        let body = response.body.buffer.map { Data($0.readableBytesView) } ?? Data()
        try await sql.raw("""
            UPDATE idempotency_keys SET status = \(bind: Int(response.status.code)),
                headers = \(bind: String(decoding: try JSONEncoder().encode(headers), as: UTF8.self))::jsonb,
                body = \(bind: body), locked_until = NULL
            WHERE parent_id = \(bind: owner.parent) AND subject = \(bind: owner.subject) AND key = \(bind: key)
            """).run()
    }

    /// Lets the key go (the request failed in a way a retry should run again).
    func release(_ owner: IdempotencyMiddleware.Credential, key: String) async throws {
        try await sql.raw("DELETE FROM idempotency_keys WHERE parent_id = \(bind: owner.parent) AND subject = \(bind: owner.subject) AND key = \(bind: key) AND status IS NULL").run()
    }

    /// Drops keys past their 24 hours (run from the retention task).
    static func purge(on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(secs => \(bind: IdempotencyMiddleware.lifetime))
            """).run()
    }
}
