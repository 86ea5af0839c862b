import Crypto
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// A console session: a random id in an HttpOnly cookie, its data in PostgreSQL (so any app
/// instance can serve it). The table holds an HMAC of the id (keyed by SESSION_SECRET), so a
/// copy of the database cannot be replayed as cookies.
///
/// Only signed-in sessions are stored. A visitor who has not signed in gets a cookie id and a
/// CSRF token derived from it (an HMAC), so the login page writes nothing to the database.
/// A stored session lives `lifetime` from sign-in whatever it does (an absolute lifetime), and is
/// only ever updated, never re-created: once logout deletes the row, a request still in flight
/// cannot bring it back.
final class AdminSession: Sendable {
    struct Data: Codable, Sendable {
        var staffUserID: Int?
        var csrf: String
        var flash: [String] = []
        /// A TOTP secret being enrolled, sealed (`SecretBox`), until its first code confirms it.
        var pendingTOTP: String?
    }

    static let cookieName = "storytime_session"
    static let lifetime: TimeInterval = 12 * 3600

    private struct State: Sendable {
        var id: String
        /// Whether `id` has a row in admin_sessions.
        var stored: Bool
        var data: Data
        var user: StaffUser?
        var dirty = false
        /// The visitor has no cookie yet and was shown a CSRF token: send one.
        var needsCookie = false
        var destroyedID: String?
        /// A staff API token's request: no cookie, nothing stored, no CSRF (nothing a browser sends by itself).
        var bearer = false
    }
    private let state: NIOLockedValueBox<State>
    private let secret: String

    /// A stored, signed-in (or formerly signed-in) session.
    init(storedID id: String, data: Data, user: StaffUser?, secret: String) {
        self.secret = secret
        state = .init(State(id: id, stored: true, data: data, user: user))
    }

    /// A request authenticated by a staff API token (`StaffTokens`).
    init(bearer user: StaffUser, secret: String) {
        self.secret = secret
        state = .init(State(id: "bearer", stored: false, data: Data(staffUserID: user.id, csrf: ""), user: user, bearer: true))
    }

    var isBearer: Bool { state.withLockedValue { $0.bearer } }

    /// A visitor without a stored session; `cookie` is their anonymous id, when they have one.
    init(anonymous cookie: String?, secret: String) {
        self.secret = secret
        let id = cookie ?? Self.randomToken()
        state = .init(State(id: id, stored: false, data: Data(staffUserID: nil, csrf: Self.anonymousCSRF(for: id, secret: secret)),
                            user: nil, needsCookie: cookie == nil))
    }

    var user: StaffUser? { state.withLockedValue { $0.user } }
    /// The cookie's id (a visitor's too): what a second-factor ticket is bound to.
    var visitorID: String { state.withLockedValue { $0.id } }

    var pendingTOTP: String? {
        get { state.withLockedValue { $0.data.pendingTOTP } }
        set { state.withLockedValue { $0.data.pendingTOTP = newValue; $0.dirty = true } }
    }
    /// The form token; reading it for a visitor without a cookie sends them one.
    var csrfToken: String {
        state.withLockedValue { state in
            if state.needsCookie { state.dirty = true }
            return state.data.csrf
        }
    }

    /// Whether `token` is this session's CSRF token (constant-time comparison).
    func verifyCSRF(_ token: String?) -> Bool {
        if isBearer { return true }
        let expected = state.withLockedValue { $0.needsCookie ? nil : $0.data.csrf }
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

    /// A message for the next page; kept only for signed-in staff (visitors have no stored session).
    func flash(_ message: String) {
        state.withLockedValue { state in
            guard state.user != nil, !state.bearer else { return }
            state.data.flash.append(message)
            state.dirty = true
        }
    }

    /// Signs in: a new session id and CSRF token (no fixation), the old session removed.
    func signIn(_ user: StaffUser) {
        state.withLockedValue { state in
            if state.stored { state.destroyedID = state.id }
            state = State(id: Self.randomToken(), stored: false, data: Data(staffUserID: user.id, csrf: Self.randomToken()),
                          user: user, dirty: true, destroyedID: state.destroyedID)
        }
    }

    func signOut() {
        let secret = secret
        state.withLockedValue { state in
            if state.stored { state.destroyedID = state.id }
            let id = Self.randomToken()
            state = State(id: id, stored: false, data: Data(staffUserID: nil, csrf: Self.anonymousCSRF(for: id, secret: secret)),
                          user: nil, dirty: true, needsCookie: true, destroyedID: state.destroyedID)
        }
    }

    static func randomToken() -> String {
        base64URL([UInt8].random(count: 32))
    }

    private static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Array(bytes).base64.replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func storageKey(for id: String, secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(id.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return mac.hex
    }

    /// A visitor's CSRF token: bound to their cookie id and to SESSION_SECRET, stored nowhere.
    static func anonymousCSRF(for id: String, secret: String) -> String {
        base64URL(HMAC<SHA256>.authenticationCode(for: Array(("csrf\u{0}" + id).utf8), using: SymmetricKey(data: Array(secret.utf8))))
    }

    /// The cookie to send after the request, if any.
    struct Cookie { let value: String; let maxAge: TimeInterval? }

    /// Writes what changed: a new row (sign-in), an update of a live row, or nothing.
    func persist(on sql: any SQLDatabase) async throws -> Cookie? {
        if isBearer { return nil }
        let snapshot = state.withLockedValue { state -> State in
            defer { state.dirty = false; state.destroyedID = nil; state.needsCookie = false }
            return state
        }
        if let old = snapshot.destroyedID {
            try await sql.raw("DELETE FROM admin_sessions WHERE id = \(bind: Self.storageKey(for: old, secret: secret))").run()
        }
        guard snapshot.dirty else { return nil }
        let key = Self.storageKey(for: snapshot.id, secret: secret)
        if snapshot.stored {
            // An update only: a row deleted meanwhile (logout elsewhere) stays deleted, and the
            // expiry set at sign-in is never pushed out.
            try await sql.raw("""
                UPDATE admin_sessions SET data = \(bind: try Self.json(snapshot.data))::jsonb WHERE id = \(bind: key) AND expires_at > now()
                """).run()
            return nil
        }
        guard snapshot.user != nil else {
            return snapshot.needsCookie ? Cookie(value: snapshot.id, maxAge: nil) : nil
        }
        // Sign-in is also when expired sessions are cleared away, so the table stays bounded.
        try await sql.raw("DELETE FROM admin_sessions WHERE expires_at <= now()").run()
        try await sql.raw("""
            INSERT INTO admin_sessions (id, data, expires_at)
            VALUES (\(bind: key), \(bind: try Self.json(snapshot.data))::jsonb, now() + make_interval(secs => \(bind: Self.lifetime)))
            """).run()
        state.withLockedValue { if $0.id == snapshot.id { $0.stored = true } }
        return Cookie(value: snapshot.id, maxAge: Self.lifetime)
    }

    private static func json(_ data: Data) throws -> String {
        String(decoding: try JSONEncoder().encode(data), as: UTF8.self)
    }
}

/// Loads the session (and its staff user, in the same query) before the console's handlers and
/// saves it after, only when it changed.
struct AdminSessionMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let secret = request.application.settings.sessionSecret
        let sql = request.sql
        var session: AdminSession?
        let cookie = (request.cookies[AdminSession.cookieName]?.string).flatMap { value in
            (16...100).contains(value.count) && value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") } ? value : nil
        }
        if let cookie {
            if let row = try await AdminSessionQueries.load(key: AdminSession.storageKey(for: cookie, secret: secret), on: sql) {
                let data = try JSONDecoder().decode(AdminSession.Data.self, from: Foundation.Data(row.data.utf8))
                var user: StaffUser?
                if let id = row.userId, let role = row.role.flatMap(StaffRole.init(rawValue:)), let email = row.email,
                   let hasTotp = row.hasTotp, let timeZone = row.timeZone, let theme = row.theme {
                    user = StaffUser(id: id, email: email, role: role, hasSecondFactor: hasTotp, timeZone: timeZone, theme: theme)
                }
                session = AdminSession(storedID: cookie, data: data, user: user, secret: secret)
            }
        }
        let current = session ?? AdminSession(anonymous: cookie, secret: secret)
        request.storage[AdminSessionKey.self] = current
        let response = try await next.respond(to: request)
        if let cookie = try await current.persist(on: sql) {
            response.cookies[AdminSession.cookieName] = HTTPCookies.Value(
                string: cookie.value, expires: cookie.maxAge.map { request.now.addingTimeInterval($0) }, maxAge: cookie.maxAge.map { Int($0) },
                path: AdminPath.dashboard, isSecure: request.application.environment == .production, isHTTPOnly: true, sameSite: .lax)
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
