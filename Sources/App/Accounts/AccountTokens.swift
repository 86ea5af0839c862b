import Foundation
import SQLKit

/// Mailed single-use links (`account_tokens`): a 32-byte random secret, kept only as its SHA-256.
enum AccountTokens {
    enum Purpose: String, Sendable {
        /// Confirms the address an account signed up with.
        case verify
        /// Sets a new password without the old one; ends every session.
        case reset
        /// Confirms a new address before it replaces the old one.
        case email

        var lifetime: TimeInterval {
            switch self {
            case .verify: 7 * 24 * 3600
            case .reset: 3600
            case .email: 24 * 3600
            }
        }

        var lifetimeText: String {
            switch self {
            case .verify: "7 days"
            case .reset: "one hour"
            case .email: "24 hours"
            }
        }

        /// Where the mailed link opens (a page of this service that asks before it acts, so a
        /// mail scanner following links uses nothing up).
        var page: String { self == .reset ? "/account/reset" : "/account/verify" }
    }

    /// A new token for `parent`, mailed to `email`; returns the link to put in the mail. An `email`
    /// link carries `stamp`, the account's `security_stamp` when the change was asked.
    static func issue(_ purpose: Purpose, parent: Int, email: String, stamp: Int? = nil, baseURL: String, on sql: any SQLDatabase) async throws -> String {
        let secret = RefreshSecret.make()
        try await sql.raw("""
            INSERT INTO account_tokens (hash, parent_id, purpose, email, stamp, expires_at)
            VALUES (\(bind: RefreshSecret.hash(secret)), \(bind: parent), \(bind: purpose.rawValue), \(bind: email), \(bind: stamp),
                    now() + make_interval(secs => \(bind: purpose.lifetime)))
            """).run()
        return baseURL + purpose.page + "?token=" + secret
    }

    struct Claim: Sendable {
        let parent: Int
        let purpose: Purpose
        let email: String
        /// The account's security stamp the link was asked at (`email` links).
        let stamp: Int?
    }

    /// Uses `secret` once, when it is one of `purposes`, unused, unexpired and still about the
    /// account as it is: an `email` link while the account's security stamp is the one it was
    /// asked at (no reset, password change, sign-out everywhere, verification or newer request
    /// since), any other link while it was mailed to the account's address. Nil otherwise (the
    /// caller answers one `invalid_token` without saying which). The account's row is locked first
    /// — the order every change of the account takes — so a use racing a reset or another use
    /// waits for it and then sees its outcome: of two, one wins.
    static func claim(_ secret: String, purposes: [Purpose], on sql: any SQLDatabase) async throws -> Claim? {
        let hash = RefreshSecret.hash(secret)
        try await sql.raw("""
            SELECT p.id FROM parents p JOIN account_tokens t ON t.parent_id = p.id WHERE t.hash = \(bind: hash) FOR UPDATE OF p
            """).run()
        guard let row = try await sql.raw("""
            UPDATE account_tokens t SET used_at = now() FROM parents p
             WHERE t.hash = \(bind: hash) AND p.id = t.parent_id AND t.purpose = ANY(\(bind: purposes.map(\.rawValue)))
               AND t.used_at IS NULL AND t.expires_at > now()
               AND CASE WHEN t.purpose = 'email' THEN t.stamp = p.security_stamp ELSE lower(t.email) = lower(p.email) END
            RETURNING t.parent_id, t.purpose, t.email, t.stamp
            """).first(decoding: Claimed.self, keyDecodingStrategy: .convertFromSnakeCase) else { return nil }
        return Claim(parent: row.parentId, purpose: Purpose(rawValue: row.purpose)!, email: row.email, stamp: row.stamp)
    }

    /// The row of a used token.
    struct Claimed: Decodable { let parentId: Int; let purpose: String; let email: String; let stamp: Int? }

    /// Ends every unused token of `parent` for `purpose` (a reset used, an address confirmed).
    static func retire(_ purpose: Purpose, parent: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            UPDATE account_tokens SET used_at = now() WHERE parent_id = \(bind: parent) AND purpose = \(bind: purpose.rawValue) AND used_at IS NULL
            """).run()
    }

    /// Deletes every unused token of `parent` for `purpose` (a newer address change ends the older).
    static func endPending(_ purpose: Purpose, parent: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            DELETE FROM account_tokens WHERE parent_id = \(bind: parent) AND purpose = \(bind: purpose.rawValue) AND used_at IS NULL
            """).run()
    }

    /// Expired and used tokens older than a day: nothing can use them any more.
    static func purge(on sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM account_tokens WHERE expires_at < now() - interval '1 day'").run()
    }
}
