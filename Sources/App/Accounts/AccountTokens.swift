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

    /// A new token for `parent`, mailed to `email`; returns the link to put in the mail.
    static func issue(_ purpose: Purpose, parent: Int, email: String, baseURL: String, on sql: any SQLDatabase) async throws -> String {
        let secret = RefreshSecret.make()
        try await sql.raw("""
            INSERT INTO account_tokens (hash, parent_id, purpose, email, expires_at)
            VALUES (\(bind: RefreshSecret.hash(secret)), \(bind: parent), \(bind: purpose.rawValue), \(bind: email),
                    now() + make_interval(secs => \(bind: purpose.lifetime)))
            """).run()
        return baseURL + purpose.page + "?token=" + secret
    }

    struct Claim: Sendable {
        let parent: Int
        let purpose: Purpose
        let email: String
    }

    /// Uses `secret` once, when it is one of `purposes`, unused and unexpired; nil otherwise (the
    /// caller answers one `invalid_token` without saying which). One statement: of two concurrent
    /// uses, one claims it.
    static func claim(_ secret: String, purposes: [Purpose], on sql: any SQLDatabase) async throws -> Claim? {
        guard let row = try await sql.raw("""
            UPDATE account_tokens SET used_at = now()
             WHERE hash = \(bind: RefreshSecret.hash(secret)) AND purpose = ANY(\(bind: purposes.map(\.rawValue))) AND used_at IS NULL AND expires_at > now()
            RETURNING parent_id, purpose, email
            """).first() else { return nil }
        return Claim(parent: try row.decode(column: "parent_id", as: Int.self),
                     purpose: Purpose(rawValue: try row.decode(column: "purpose", as: String.self))!,
                     email: try row.decode(column: "email", as: String.self))
    }

    /// Ends every unused token of `parent` for `purpose` (a reset used, an address confirmed).
    static func retire(_ purpose: Purpose, parent: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            UPDATE account_tokens SET used_at = now() WHERE parent_id = \(bind: parent) AND purpose = \(bind: purpose.rawValue) AND used_at IS NULL
            """).run()
    }

    /// Expired and used tokens older than a day: nothing can use them any more.
    static func purge(on sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM account_tokens WHERE expires_at < now() - interval '1 day'").run()
    }
}
