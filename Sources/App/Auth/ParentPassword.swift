import Foundation
import SQLKit
import Vapor

/// A parent's password: checked against the sign-in budget (`LoginThrottle`), and the rules a new
/// one must meet.
enum ParentPassword {
    /// The account an email signs in to.
    struct SignIn: Decodable { let id: Int; let passwordHash: String; let locked: Bool }
    /// The signed-in parent's address and password hash.
    struct Current: Decodable { let email: String; let passwordHash: String }

    /// The parent whose email and password these are; the 429 of an exhausted budget or the 401 of
    /// a wrong pair otherwise. The same bcrypt time is spent for an unknown email.
    static func verifySignIn(email: String, password: String, req: Request) async throws -> Int {
        let throttle = LoginThrottle(.parent, email: email, request: req)
        try await reserve(throttle, req: req)
        let row = try await req.sql.raw("""
            SELECT id, password_hash, locked_at IS NOT NULL AS locked FROM parents WHERE lower(email) = lower(\(bind: email))
            """).first(decoding: SignIn.self, keyDecodingStrategy: .convertFromSnakeCase)
        guard let parent = row?.id,
              try await matches(password, hash: row?.passwordHash, req: req) else {
            req.appServices.metrics.loginFailed("parent")
            throw Problem(status: .unauthorized, code: "invalid_credentials", detail: "Email or password is wrong.",
                          headers: ["WWW-Authenticate": #"Bearer realm="storytime""#])
        }
        try await throttle.succeeded(on: req.sql)
        // Only the right password learns that the account is locked.
        if row?.locked == true {
            throw Problem(status: .forbidden, code: "account_locked", detail: "This account is locked; contact Storytime support.")
        }
        return parent
    }

    /// Whether `password` is the signed-in parent's, spending the sign-in budget like a sign-in.
    static func verifyCurrent(_ password: String, parent: Int, req: Request) async throws -> Bool {
        guard let row = try await req.sql.raw("SELECT email, password_hash FROM parents WHERE id = \(bind: parent)")
                .first(decoding: Current.self, keyDecodingStrategy: .convertFromSnakeCase) else { return false }
        let throttle = LoginThrottle(.parent, email: row.email, request: req)
        try await reserve(throttle, req: req)
        guard try await matches(password, hash: row.passwordHash, req: req) else { return false }
        try await throttle.succeeded(on: req.sql)
        return true
    }

    /// Throws `problem` (403 `wrong_password`) unless `password` is the signed-in parent's.
    static func requireCurrent(_ password: String, parent: Int, req: Request, problem: Problem = .wrongPassword) async throws {
        guard try await verifyCurrent(password, parent: parent, req: req) else { throw problem }
    }

    private static func reserve(_ throttle: LoginThrottle, req: Request) async throws {
        if let wait = try await throttle.reserve(on: req.sql) {
            throw Problem(status: .tooManyRequests, code: "too_many_requests",
                          detail: "Too many failed sign-ins; try again in \((wait + 59) / 60) minutes.",
                          headers: ["Retry-After": String(wait)])
        }
    }

    private static func matches(_ password: String, hash: String?, req: Request) async throws -> Bool {
        guard let hash else {
            _ = try? await req.password.async.hash(password)   // timing reveals no accounts
            return false
        }
        return (try? await req.password.async.verify(password, created: hash)) ?? false
    }

    static let minimumLength = 10

    /// Throws the `422 weak_password` problem naming `field` when `password` may not be a parent's.
    static func requireStrong(_ password: String, field: String, req: Request) throws {
        if let weakness = weakness(password, common: req.appServices.commonPasswords) {
            throw Problem(status: .unprocessableEntity, code: "weak_password", detail: weakness, field: field)
        }
    }

    /// Why `password` may not be a parent's (nil: it may): at least 10 characters, at most bcrypt's
    /// 72 bytes, no NUL, and not one of the common passwords shipped in `data/common-passwords.txt`.
    static func weakness(_ password: String, common: CommonPasswords) -> String? {
        if password.count < minimumLength { return "password must have at least \(minimumLength) characters" }
        if password.utf8.count > 72 { return "password must have at most 72 bytes" }
        if password.unicodeScalars.contains("\u{0}") { return "password must not contain a NUL character" }
        if common.contains(password) { return "password is one of the most common passwords; choose another" }
        return nil
    }
}

/// Passwords too common to allow (the 10-character-and-longer part of Django's list of 20,000,
/// lowercased), read once at start from `data/common-passwords.txt`.
struct CommonPasswords: Sendable {
    let words: Set<String>

    init(directory: String) {
        let text = (try? String(contentsOfFile: directory + "data/common-passwords.txt", encoding: .utf8)) ?? ""
        words = Set(text.split(whereSeparator: \.isNewline).map(String.init))
    }

    func contains(_ password: String) -> Bool { words.contains(password.lowercased()) }
}

