import Crypto
import Foundation
import SQLKit
import Vapor

/// A staff member's second factor in PostgreSQL: the sealed TOTP secret, the last step a code was
/// accepted for (each code works once: the update is conditional), and ten recovery codes kept as
/// SHA-256, each spent by one conditional update.
struct TwoFactorStore: Sendable {
    let req: Request
    let keys: StaffSecretKeys
    var sql: any SQLDatabase { req.sql }

    init(_ req: Request) {
        self.req = req
        keys = StaffSecretKeys(req.application.settings)
    }

    static let recoveryCount = 10

    /// `xxxxx-xxxxx`: 50 random bits in base32 (no 0/1/8/9 to misread).
    static func newRecoveryCodes() -> [String] {
        (0..<recoveryCount).map { _ in
            let text = Data([UInt8].random(count: 7)).base32EncodedString().lowercased().prefix(10)
            return text.prefix(5) + "-" + text.suffix(5)
        }
    }

    static func hash(recoveryCode code: String) -> String {
        let normal = code.lowercased().filter { $0.isLetter || $0.isNumber }
        return SHA256.hash(data: Data(normal.utf8)).hex
    }

    /// Turns the factor on with `secret` once `code` matches it (at the app's time now); returns the
    /// recovery codes to show once.
    func enable(user: Int, secret: [UInt8], code: String) async throws -> [String]? {
        guard let step = StaffTOTP.matchingStep(of: code, secret: secret, at: req.now) else { return nil }
        let codes = Self.newRecoveryCodes()
        let sealed = try keys.current.seal(secret)
        try await req.transaction { sql in
            try await sql.raw("""
                UPDATE staff_users SET totp_secret = \(bind: sealed), totp_enabled_at = now(), totp_last_step = \(bind: step)
                 WHERE id = \(bind: user)
                """).run()
            try await Self.replaceRecoveryCodes(codes, user: user, on: sql)
        }
        return codes
    }

    static func replaceRecoveryCodes(_ codes: [String], user: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM staff_recovery_codes WHERE staff_user_id = \(bind: user)").run()
        try await sql.raw("""
            INSERT INTO staff_recovery_codes (staff_user_id, code_hash) SELECT \(bind: user), unnest(\(bind: codes.map(hash(recoveryCode:)))::text[])
            """).run()
    }

    enum Accepted: Equatable { case code, recoveryCode(left: Int) }

    private struct Sealed: Decodable { let totpSecret: String? }
    private struct Spent: Decodable { let spent: Int; let left: Int }
    private struct Count: Decodable { let n: Int }

    /// Checks a code typed at sign-in: a TOTP code (at the app's time now) of a step not used
    /// before, or an unused recovery code (spent now). Nil: neither. A secret still sealed under
    /// the legacy key (`SESSION_SECRET`) is sealed under `STAFF_2FA_KEY` once a code is accepted.
    func verify(user: Int, code: String) async throws -> Accepted? {
        guard let row = try await sql.raw("SELECT totp_secret FROM staff_users WHERE id = \(bind: user) AND totp_enabled_at IS NOT NULL")
                .first(decoding: Sealed.self, keyDecodingStrategy: .convertFromSnakeCase),
              let sealed = row.totpSecret, let opened = try keys.open(sealed) else { return nil }
        let accepted = try await accept(user: user, code: code, secret: opened.secret)
        if accepted != nil, let resealed = opened.resealed {
            try await StaffSecondFactorQueries.reseal(user: user, from: sealed, to: resealed, on: sql)
        }
        return accepted
    }

    private func accept(user: Int, code: String, secret: [UInt8]) async throws -> Accepted? {
        if let step = StaffTOTP.matchingStep(of: code, secret: secret, at: req.now) {
            let used = try await sql.raw("""
                UPDATE staff_users SET totp_last_step = \(bind: step) WHERE id = \(bind: user) AND totp_last_step < \(bind: step) RETURNING id
                """).first()
            return used == nil ? nil : .code
        }
        guard code.count <= 40 else { return nil }
        let spent = try await sql.raw("""
            WITH spent AS (
                UPDATE staff_recovery_codes SET used_at = now()
                 WHERE staff_user_id = \(bind: user) AND code_hash = \(bind: Self.hash(recoveryCode: code)) AND used_at IS NULL RETURNING 1
            )
            SELECT (SELECT count(*) FROM spent) AS spent,
                   (SELECT count(*) FROM staff_recovery_codes WHERE staff_user_id = \(bind: user) AND used_at IS NULL) - 1 AS left
            """).first(decoding: Spent.self)!
        guard spent.spent == 1 else { return nil }
        return .recoveryCode(left: spent.left)
    }

    func recoveryCodesLeft(user: Int) async throws -> Int {
        try await sql.raw("SELECT count(*) AS n FROM staff_recovery_codes WHERE staff_user_id = \(bind: user) AND used_at IS NULL")
            .first(decoding: Count.self)!.n
    }

    /// Turns the factor off (the staff member themselves, or an admin's reset).
    static func disable(user: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("UPDATE staff_users SET totp_secret = NULL, totp_enabled_at = NULL WHERE id = \(bind: user)").run()
        try await sql.raw("DELETE FROM staff_recovery_codes WHERE staff_user_id = \(bind: user)").run()
    }
}

/// Between the password and the code: a signed, five-minute ticket naming the staff member, bound
/// to the visitor's cookie — nothing is stored, and a ticket cannot be carried to another browser.
enum SecondFactorTicket {
    static let lifetime: TimeInterval = 300

    static func make(user: Int, visitor: String, secret: String, now: Date) -> String {
        let expires = Int(now.timeIntervalSince1970 + lifetime)
        return "\(user).\(expires).\(mac(user: user, expires: expires, visitor: visitor, secret: secret))"
    }

    /// The staff member's id when `ticket` is genuine, this visitor's and not expired.
    static func user(of ticket: String, visitor: String, secret: String, now: Date) -> Int? {
        let parts = ticket.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let user = Int(parts[0]), let expires = Int(parts[1]), Double(expires) > now.timeIntervalSince1970,
              Array(parts[2].utf8).secureCompare(to: Array(mac(user: user, expires: expires, visitor: visitor, secret: secret).utf8)) else { return nil }
        return user
    }

    private static func mac(user: Int, expires: Int, visitor: String, secret: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data("second factor\u{0}\(user)\u{0}\(expires)\u{0}\(visitor)".utf8),
                                        using: SymmetricKey(data: Data(secret.utf8))).hex
    }
}
