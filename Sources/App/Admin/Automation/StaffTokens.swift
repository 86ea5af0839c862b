import Core
import Crypto
import Foundation
import SQLKit
import Vapor

/// Scoped staff API tokens: `stk_` + 32 random bytes, shown once, stored as SHA-256. A token acts
/// as its staff member (their role still applies) within its scopes:
/// - `read_catalog`: GET of console pages and CSV exports (not the account pages);
/// - `import`: the book import's upload and run;
/// - `batch`: batch actions on a list.
/// Requests with a token carry no cookie, so the console's CSRF check does not apply to them.
enum StaffTokens {
    enum Scope: String, CaseIterable, Sendable {
        case readCatalog = "read_catalog", `import`, batch
        var label: String {
            switch self {
            case .readCatalog: return "Read the catalog (pages and CSV exports)"
            case .import: return "Import books (CSV)"
            case .batch: return "Run batch actions"
            }
        }
    }

    static let prefix = "stk_"

    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).hex
    }

    static func newToken() -> String {
        prefix + Data([UInt8].random(count: 32)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The staff member and scopes of a live token, its use recorded (at most once a minute).
    static func authenticate(_ token: String, on sql: any SQLDatabase) async throws -> (StaffUser, Set<Scope>)? {
        guard token.hasPrefix(prefix), token.utf8.count < 100 else { return nil }
        guard let row = try await sql.raw("""
            UPDATE staff_api_tokens k SET last_used_at = CASE WHEN k.last_used_at > now() - interval '1 minute' THEN k.last_used_at ELSE now() END
              FROM staff_users u
             WHERE u.id = k.staff_user_id AND k.token_hash = \(bind: hash(token)) AND k.revoked_at IS NULL
            RETURNING u.id, u.email, u.role, u.time_zone, k.scopes
            """).first(), let role = StaffRole(rawValue: try row.decode(column: "role", as: String.self)) else { return nil }
        let user = StaffUser(id: try row.decode(column: "id", as: Int.self), email: try row.decode(column: "email", as: String.self), role: role,
                             hasSecondFactor: true, timeZone: try row.decode(column: "time_zone", as: String.self))
        return (user, Set(try row.decode(column: "scopes", as: [String].self).compactMap(Scope.init(rawValue:))))
    }

    /// The scope a request needs, or nil when no token may make it.
    static func scope(method: HTTPMethod, path: String) -> Scope? {
        let parts = path.split(separator: "/").map(String.init)
        if method == .GET || method == .HEAD {
            return path.hasPrefix(AdminPath.account) ? nil : .readCatalog
        }
        guard method == .POST, parts.first == AdminPath.prefix else { return nil }
        let rest = Array(parts.dropFirst())
        if rest == ["books", "import"] || (rest.count == 3 && rest[0] == "books" && rest[1] == "import" && Int(rest[2]) != nil) { return .import }
        if rest.last == ResourcePath.batch && rest.count >= 2 { return .batch }
        return nil
    }
}
