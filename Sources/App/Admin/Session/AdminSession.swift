import Crypto
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// The signed-in staff member of a console request.
struct StaffUser: Sendable, Equatable {
    let id: Int
    let email: String
    let role: StaffRole

    var canEdit: Bool { role != .viewer }
    var isAdmin: Bool { role == .admin }
}

/// A console session: a random id in an HttpOnly cookie, its data in PostgreSQL (so any app
/// instance can serve it). The table holds an HMAC of the id (keyed by SESSION_SECRET), so a
/// copy of the database cannot be replayed as cookies.
final class AdminSession: Sendable {
    struct Data: Codable, Sendable {
        var staffUserID: Int?
        var csrf: String
        var flash: [String] = []
    }

    static let cookieName = "storytime_session"
    static let lifetime: TimeInterval = 12 * 3600

    private struct State: Sendable {
        var id: String?
        var data: Data
        var user: StaffUser?
        var dirty = false
        var destroyedID: String?
    }
    private let state: NIOLockedValueBox<State>

    init(id: String?, data: Data, user: StaffUser?) {
        state = .init(State(id: id, data: data, user: user))
    }

    var user: StaffUser? { state.withLockedValue { $0.user } }
    /// The form token; reading it for a visitor without a session starts one (the login form).
    var csrfToken: String {
        state.withLockedValue { state in
            if state.id == nil { state.dirty = true }
            return state.data.csrf
        }
    }

    /// Whether `token` is this session's CSRF token (constant-time comparison).
    func verifyCSRF(_ token: String?) -> Bool {
        let expected = state.withLockedValue { $0.id == nil ? nil : $0.data.csrf }
        guard let expected, let token, token.utf8.count == expected.utf8.count else { return false }
        return zip(token.utf8, expected.utf8).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// Flash messages, shown once.
    func takeFlash() -> [String] {
        state.withLockedValue { state in
            defer { if !state.data.flash.isEmpty { state.data.flash = []; state.dirty = true } }
            return state.data.flash
        }
    }

    func flash(_ message: String) {
        state.withLockedValue { $0.data.flash.append(message); $0.dirty = true }
    }

    /// Signs in: a new session id and CSRF token (no fixation), the old session removed.
    func signIn(_ user: StaffUser) {
        state.withLockedValue { state in
            state.destroyedID = state.id
            state.id = nil
            state.data = Data(staffUserID: user.id, csrf: Self.randomToken())
            state.user = user
            state.dirty = true
        }
    }

    func signOut() {
        state.withLockedValue { state in
            state.destroyedID = state.id
            state.id = nil
            state.data = Data(staffUserID: nil, csrf: Self.randomToken())
            state.user = nil
            state.dirty = true
        }
    }

    static func randomToken() -> String {
        [UInt8].random(count: 32).base64.replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func storageKey(for id: String, secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(id.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return mac.map { String(format: "%02x", $0) }.joined()
    }

    /// Writes what changed: a new row (new session), an update, or nothing.
    /// Returns the cookie to set, when there is a new id.
    func persist(on sql: any SQLDatabase, secret: String) async throws -> String? {
        let snapshot = state.withLockedValue { state -> State in
            defer { state.dirty = false; state.destroyedID = nil }
            return state
        }
        if let old = snapshot.destroyedID {
            try await sql.raw("DELETE FROM admin_sessions WHERE id = \(bind: Self.storageKey(for: old, secret: secret))").run()
        }
        guard snapshot.dirty else { return nil }
        let json = String(decoding: try JSONEncoder().encode(snapshot.data), as: UTF8.self)
        let id = snapshot.id ?? Self.randomToken()
        try await sql.raw("""
            INSERT INTO admin_sessions (id, data, expires_at)
            VALUES (\(bind: Self.storageKey(for: id, secret: secret)), \(bind: json)::jsonb, now() + make_interval(secs => \(bind: Self.lifetime)))
            ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, expires_at = EXCLUDED.expires_at
            """).run()
        state.withLockedValue { $0.id = id }
        return snapshot.id == nil ? id : nil
    }
}

/// Loads the session (and its staff user, in the same query) before the console's handlers and
/// saves it after, only when it changed.
struct AdminSessionMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let secret = request.application.settings.sessionSecret
        let sql = request.sql
        var session: AdminSession?
        if let cookie = request.cookies[AdminSession.cookieName]?.string, !cookie.isEmpty, cookie.count <= 100 {
            if let row = try await sql.raw("""
                SELECT s.data::text AS data, u.id AS user_id, u.email, u.role
                  FROM admin_sessions s
                  LEFT JOIN staff_users u ON u.id = (s.data->>'staffUserID')::bigint
                 WHERE s.id = \(bind: AdminSession.storageKey(for: cookie, secret: secret)) AND s.expires_at > now()
                """).first() {
                let data = try JSONDecoder().decode(AdminSession.Data.self, from: Foundation.Data(try row.decode(column: "data", as: String.self).utf8))
                var user: StaffUser?
                if let id = try row.decode(column: "user_id", as: Int?.self),
                   let role = StaffRole(rawValue: try row.decode(column: "role", as: String.self)) {
                    user = StaffUser(id: id, email: try row.decode(column: "email", as: String.self), role: role)
                }
                session = AdminSession(id: cookie, data: data, user: user)
            }
        }
        let current = session ?? AdminSession(id: nil, data: .init(staffUserID: nil, csrf: AdminSession.randomToken()), user: nil)
        request.storage[AdminSessionKey.self] = current
        let response = try await next.respond(to: request)
        if let newID = try await current.persist(on: sql, secret: secret) {
            response.cookies[AdminSession.cookieName] = HTTPCookies.Value(
                string: newID, expires: Date().addingTimeInterval(AdminSession.lifetime), maxAge: Int(AdminSession.lifetime),
                path: "/admin", isSecure: request.application.environment == .production, isHTTPOnly: true, sameSite: .lax)
        }
        return response
    }
}

struct AdminSessionKey: StorageKey { typealias Value = AdminSession }

extension Request {
    var adminSession: AdminSession {
        guard let session = storage[AdminSessionKey.self] else {
            fatalError("AdminSessionMiddleware must run before console handlers")
        }
        return session
    }

    /// The signed-in staff member (behind `StaffAuthMiddleware`).
    var staff: StaffUser {
        get throws {
            guard let user = adminSession.user else { throw Abort(.unauthorized) }
            return user
        }
    }
}
