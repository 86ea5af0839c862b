import Foundation
import SQLKit
import Vapor

/// The statements of signed-in devices and their refresh tokens (`migrations/0022`).
enum SessionQueries {
    /// A new device of `parent` (paired to `child` in child mode) and its first refresh token, in
    /// `sql`'s transaction.
    static func createDevice(parent: Int, child: Int? = nil, name: String, on sql: any SQLDatabase) async throws -> (device: Int, refresh: String) {
        let device = try await sql.raw("""
            INSERT INTO parent_devices (parent_id, name, child_device, child_id)
            VALUES (\(bind: parent), \(bind: name), \(bind: child != nil), \(bind: child)) RETURNING id
            """).one(decoding: IDRow.self).id
        return (device, try await issueRefresh(device: device, on: sql))
    }

    /// A fresh refresh token for `device`: `<32 random bytes, base64url>`, stored as its SHA-256.
    static func issueRefresh(device: Int, on sql: any SQLDatabase) async throws -> String {
        let secret = RefreshSecret.make()
        try await sql.raw("INSERT INTO refresh_tokens (hash, device_id) VALUES (\(bind: RefreshSecret.hash(secret)), \(bind: device))").run()
        return secret
    }

    struct IDRow: Decodable { let id: Int }
    struct TokenRow: Decodable { let deviceId: Int }
    /// The device a rotated token belongs to.
    struct Rotated: Decodable { let parentId: Int; let childId: Int? }

    enum Rotation { case rotated(parent: Int, device: Int, child: Int?, refresh: String), reused(device: Int), unknown }

    /// Uses `secret` once: marks it used and issues the device's next token. A token used before
    /// (or of a signed-out device) signs its device out — whoever holds a copy is not the device.
    ///
    /// Every path locks the device's row before any of its tokens (as signing out does), so
    /// concurrent refreshes — of one token, or of an old and the current one — queue on the device
    /// and never deadlock: the first rotates, each later one finds the token used (or gone).
    static func rotate(_ secret: String, on sql: any SQLDatabase) async throws -> Rotation {
        let hash = RefreshSecret.hash(secret)
        guard let device = try await sql.raw("SELECT device_id FROM refresh_tokens WHERE hash = \(bind: hash)")
            .first(decoding: TokenRow.self, keyDecodingStrategy: .convertFromSnakeCase)?.deviceId else { return .unknown }
        try await sql.raw("SELECT id FROM parent_devices WHERE id = \(bind: device) FOR UPDATE").run()
        if let row = try await sql.raw("""
            WITH used AS (UPDATE refresh_tokens SET used_at = now() WHERE hash = \(bind: hash) AND used_at IS NULL RETURNING device_id)
            UPDATE parent_devices d SET last_used_at = now() FROM used WHERE d.id = used.device_id AND d.revoked_at IS NULL
               AND (NOT d.child_device OR d.child_id IS NOT NULL)
            RETURNING d.id, d.parent_id, d.child_id
            """).first(decoding: Rotated.self, keyDecodingStrategy: .convertFromSnakeCase) {
            return .rotated(parent: row.parentId, device: device, child: row.childId, refresh: try await issueRefresh(device: device, on: sql))
        }
        _ = try await revoke(devices: "d.id = \(bind: device)", on: sql)
        return .reused(device: device)
    }

    /// Signs out `parent`'s `device` (nothing when it is not theirs).
    static func revoke(device: Int, parent: Int, on sql: any SQLDatabase) async throws -> [Int] {
        try await revoke(devices: "d.id = \(bind: device) AND d.parent_id = \(bind: parent)", on: sql)
    }

    /// Signs out every device of `parent`.
    static func revokeAll(parent: Int, on sql: any SQLDatabase) async throws -> [Int] {
        try await revoke(devices: "d.parent_id = \(bind: parent)", on: sql)
    }

    /// Signs out the devices `condition` selects (on `parent_devices d`): marks them revoked and
    /// drops their refresh tokens. Returns the ids signed out.
    static func revoke(devices condition: SQLQueryString, on sql: any SQLDatabase) async throws -> [Int] {
        let ids = try await sql.raw("""
            UPDATE parent_devices d SET revoked_at = now() WHERE \(condition) AND d.revoked_at IS NULL RETURNING d.id
            """).all(decoding: IDRow.self).map(\.id)
        if !ids.isEmpty { try await sql.raw("DELETE FROM refresh_tokens WHERE device_id = ANY(\(bind: ids))").run() }
        return ids
    }

    struct DeviceRow: Codable, Sendable {
        let id: Int
        let name: String
        let childId: Int?
        let createdAt: Date
        let lastUsedAt: Date
    }

    static func devices(of parent: Int, on sql: any SQLDatabase) async throws -> [DeviceRow] {
        try await sql.raw("""
            SELECT id, name, child_id, created_at, last_used_at FROM parent_devices WHERE parent_id = \(bind: parent) AND revoked_at IS NULL ORDER BY id
            """).all(decoding: DeviceRow.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// Devices signed out and accounts deleted within `window` seconds: the ones whose access
    /// tokens may still be alive.
    static func recentlyRevoked(within window: TimeInterval, on sql: any SQLDatabase) async throws -> (devices: Set<Int>, accounts: Set<Int>) {
        struct Row: Decodable { let account: Bool; let id: Int }
        let rows = try await sql.raw("""
            SELECT false AS account, id FROM parent_devices WHERE revoked_at > now() - make_interval(secs => \(bind: window))
            UNION ALL
            SELECT true, parent_id FROM ended_accounts WHERE ended_at > now() - make_interval(secs => \(bind: window))
            """).all(decoding: Row.self)
        return (Set(rows.filter { !$0.account }.map(\.id)), Set(rows.filter(\.account).map(\.id)))
    }

    enum Liveness { case live, signedOut, accountGone }

    /// Whether `parent`'s account exists and `device` (when the token names one) is still signed in, now.
    static func liveness(parent: Int, device: Int?, on sql: any SQLDatabase) async throws -> Liveness {
        struct Row: Decodable { let account: Bool; let device: Bool }
        let row = try await sql.raw("""
            SELECT EXISTS (SELECT 1 FROM parents WHERE id = \(bind: parent)) AS account,
                   \(bind: device)::bigint IS NULL OR EXISTS (
                       SELECT 1 FROM parent_devices WHERE id = \(bind: device) AND parent_id = \(bind: parent) AND revoked_at IS NULL) AS device
            """).first(decoding: Row.self)
        guard row?.account == true else { return .accountGone }
        return row?.device == true ? .live : .signedOut
    }
}

/// Refresh token secrets: random, shown once, kept only as a hash.
enum RefreshSecret {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func hash(_ secret: String) -> Data { Data(SHA256.hash(data: Array(secret.utf8))) }
}
