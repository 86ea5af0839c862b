import SQLKit
import Vapor

/// Sign-in throttling shared by the console and the parent API: per email and per client address,
/// counted in PostgreSQL so every instance sees the same budget.
///
/// An attempt is *reserved* before the password is verified, in one statement that increments the
/// counters under their row locks (no check-then-act: concurrent guesses get distinct counts). A
/// success clears the email's counter and gives the address its attempt back, so the address
/// budget counts failures.
struct LoginThrottle: Sendable {
    /// `mail`: requests that mail an address (sign-up, resend, password reset).
    /// `staffCode`: a staff member's second-factor codes, counted apart from their passwords.
    enum Kind: String, Sendable { case parent, staff, mail, staffCode = "staff_code" }

    static let window: TimeInterval = 15 * 60
    /// Failed sign-ins one email may have in a window.
    static let perEmail = 5
    /// Failed sign-ins one client address may have in a window, over every email.
    static let perAddress = 30

    let kind: Kind
    let email: String
    let address: String

    /// `email` as typed: the budget's key is PostgreSQL's `lower()` of it, the same normalisation
    /// accounts are found by (Swift's lowercasing differs, e.g. for `İ`, and would give a second budget).
    init(_ kind: Kind, email: String, request: Request) {
        self.kind = kind
        self.email = email
        self.address = request.clientAddress
    }

    private var emailScope: String { kind.rawValue + "_email" }
    private var addressScope: String { kind.rawValue + "_address" }

    /// Counts this attempt; returns the seconds to wait when the email or the address is over its
    /// budget (the attempt must then not be verified), nil when it may go on.
    func reserve(on sql: any SQLDatabase) async throws -> Int? {
        // Old windows and, with them, every row nobody used lately.
        try await sql.raw("""
            DELETE FROM login_throttle WHERE window_start < now() - make_interval(secs => \(bind: Self.window))
            """).run()
        let rows = try await sql.raw("""
            INSERT INTO login_throttle AS t (scope, key, window_start, attempts)
            VALUES (\(bind: emailScope), lower(\(bind: email)), now(), 1), (\(bind: addressScope), \(bind: address), now(), 1)
            ON CONFLICT (scope, key) DO UPDATE SET
                attempts = CASE WHEN t.window_start <= now() - make_interval(secs => \(bind: Self.window)) THEN 1 ELSE t.attempts + 1 END,
                window_start = CASE WHEN t.window_start <= now() - make_interval(secs => \(bind: Self.window)) THEN now() ELSE t.window_start END
            RETURNING t.scope, t.attempts,
                      ceil(extract(epoch FROM t.window_start + make_interval(secs => \(bind: Self.window)) - now()))::int AS retry_after
            """).all(decoding: Counted.self, keyDecodingStrategy: .convertFromSnakeCase)
        var wait: Int?
        for row in rows {
            let limit = row.scope == emailScope ? Self.perEmail : Self.perAddress
            if row.attempts > limit {
                wait = max(wait ?? 1, row.retryAfter)
            }
        }
        return wait
    }

    /// A counter after an attempt: its scope, the attempts in its window, and the seconds until
    /// the window ends.
    private struct Counted: Decodable { let scope: String; let attempts: Int; let retryAfter: Int }

    /// The right password: the email starts over and the address gets its attempt back.
    func succeeded(on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            UPDATE login_throttle SET attempts = CASE WHEN scope = \(bind: emailScope) THEN 0 ELSE greatest(attempts - 1, 0) END
             WHERE (scope = \(bind: emailScope) AND key = lower(\(bind: email))) OR (scope = \(bind: addressScope) AND key = \(bind: address))
            """).run()
    }

    /// Lets a locked-out account in again at once (`parent unlock` / `staff unlock`).
    static func clear(_ kind: Kind, email: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM login_throttle WHERE scope = \(bind: kind.rawValue + "_email") AND key = lower(\(bind: email))").run()
    }
}

extension Request {
    /// The client's address: the TCP peer, or — when the peer is one of `TRUSTED_PROXIES` — the
    /// rightmost address of `X-Forwarded-For` (every header line, in order) that is not itself a
    /// trusted proxy. Addresses left of it were written by the client and are never believed.
    var clientAddress: String {
        let peer = remoteAddress?.ipAddress ?? "unknown"
        let trusted = application.settings.trustedProxies
        guard trusted.contains(peer) else { return peer }
        let chain = headers[.xForwardedFor].joined(separator: ",").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return chain.last { !trusted.contains($0) } ?? chain.first ?? peer
    }
}
