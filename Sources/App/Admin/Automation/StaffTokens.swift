import Core
import Crypto
import Foundation
import SQLKit
import Vapor

/// Scoped staff API tokens: `stk_` + 32 random bytes, shown once, stored as SHA-256. A token acts
/// as its staff member with the lower of the role they had when it was made and their role now,
/// and only on routes declared for one of its scopes (`TokenScopedRoutes`, in `ConsoleRoutes`):
/// - `read_catalog`: the catalog's pages and CSV exports (books, categories, publishers, rights,
///   videos, synonyms, the dashboard, review queue, preview, search) — never families, staff,
///   webhooks, the audit log, reports, the Outbox or the account pages;
/// - `import`: the book import's upload and run;
/// - `batch`: batch actions on the catalog's lists.
/// A token ends when its owner's password changes, their second factor is removed or replaced,
/// they are demoted or locked (a trigger, migration 0032).
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

    private struct Holder: Decodable { let id: Int; let email: String; let role: String; let timeZone: String; let scopes: [String] }

    /// The staff member (at the token's role) and scopes of a live token of an unlocked account,
    /// its use recorded (at most once a minute).
    static func authenticate(_ token: String, on sql: any SQLDatabase) async throws -> (StaffUser, Set<Scope>)? {
        guard token.hasPrefix(prefix), token.utf8.count < 100 else { return nil }
        guard let row = try await sql.raw("""
            UPDATE staff_api_tokens k SET last_used_at = CASE WHEN k.last_used_at > now() - interval '1 minute' THEN k.last_used_at ELSE now() END
              FROM staff_users u
             WHERE u.id = k.staff_user_id AND k.token_hash = \(bind: hash(token)) AND k.revoked_at IS NULL AND u.locked_at IS NULL
            RETURNING u.id, u.email, CASE WHEN storytime_staff_rank(k.role) < storytime_staff_rank(u.role) THEN k.role ELSE u.role END AS role,
                      u.time_zone, k.scopes
            """).first(decoding: Holder.self, keyDecodingStrategy: .convertFromSnakeCase), let role = StaffRole(rawValue: row.role) else { return nil }
        let user = StaffUser(id: row.id, email: row.email, role: role, hasSecondFactor: true, timeZone: row.timeZone)
        return (user, Set(row.scopes.compactMap(Scope.init(rawValue:))))
    }
}
