import Foundation
import SQLKit

/// The PIN and its throttle (`parents.pin_hash`, `pin_attempts`, `pin_locked_until`).
enum ParentGateQueries {
    static let attemptsBeforeLock = 5
    static let lockSeconds = 15 * 60

    static func setPIN(_ hash: String?, parent: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            UPDATE parents SET pin_hash = \(bind: hash), pin_attempts = 0, pin_locked_until = NULL WHERE id = \(bind: parent)
            """).run()
        try await sql.raw("""
            INSERT INTO parent_audit_log (parent_id, action) VALUES (\(bind: parent), \(bind: hash == nil ? "pin.remove" : "pin.set"))
            """).run()
    }

    struct Attempt: Decodable { let hash: String?; let attempts: Int; let lockedFor: Int? }

    /// Counts an attempt before the PIN is checked, in one statement (concurrent guesses get
    /// distinct counts, so no more than five are ever checked in a row); a lock that has run out
    /// starts the count again.
    static func reserveAttempt(parent: Int, on sql: any SQLDatabase) async throws -> Attempt {
        try await sql.raw("""
            UPDATE parents SET
                pin_attempts = CASE WHEN pin_locked_until <= now() THEN 1 ELSE pin_attempts + 1 END,
                pin_locked_until = CASE WHEN pin_locked_until <= now() THEN NULL ELSE pin_locked_until END
             WHERE id = \(bind: parent)
            RETURNING pin_hash AS hash, pin_attempts AS attempts,
                      CASE WHEN pin_locked_until > now() THEN ceil(extract(epoch FROM pin_locked_until - now()))::int END AS locked_for
            """).first(decoding: Attempt.self, keyDecodingStrategy: .convertFromSnakeCase)
            ?? Attempt(hash: nil, attempts: 0, lockedFor: nil)
    }

    static func succeeded(parent: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("UPDATE parents SET pin_attempts = 0 WHERE id = \(bind: parent)").run()
    }

    /// Locks the PIN for `lockSeconds` and records it for the parent; the seconds it stays locked.
    static func lock(parent: Int, device: Int?, on sql: any SQLDatabase) async throws -> Int {
        try await sql.raw("""
            WITH locked AS (
                UPDATE parents SET pin_locked_until = now() + make_interval(secs => \(bind: lockSeconds))
                 WHERE id = \(bind: parent) AND pin_locked_until IS NULL RETURNING id
            )
            INSERT INTO parent_audit_log (parent_id, action, after)
            SELECT id, 'pin.locked', jsonb_build_object('device_id', \(bind: device)::bigint, 'minutes', \(bind: lockSeconds / 60)) FROM locked
            """).run()
        return lockSeconds
    }
}
