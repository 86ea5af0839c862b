import Vapor

/// The web origins allowed to call the parent API from a browser (`CORS_ORIGINS`).
enum CORSOrigins: Sendable, Equatable {
    case none
    case any
    case list(Set<String>)

    /// `https://a.example, https://b.example`, `*`, or empty (none). An origin is a scheme and a
    /// host with an optional port — no path, no trailing slash.
    init(setting: String) throws {
        let items = setting.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if items.isEmpty { self = .none; return }
        if items == ["*"] { self = .any; return }
        for item in items {
            guard let url = URL(string: item), let scheme = url.scheme, ["http", "https"].contains(scheme),
                  url.host != nil, url.path.isEmpty, url.query == nil, item.lowercased() == item else {
                throw Settings.Invalid.invalid("CORS_ORIGINS must be `*` or comma-separated origins such as https://app.example.com (lowercase, no path): \(item)")
            }
        }
        self = .list(Set(items))
    }

    func allows(_ origin: String) -> Bool {
        switch self {
        case .none: return false
        case .any: return true
        case .list(let origins): return origins.contains(origin)
        }
    }
}

/// CORS for `/api/v1` (never the console): an allowed `Origin` gets `Access-Control-Allow-Origin`
/// on every answer, errors included, and a preflight (`OPTIONS` with
/// `Access-Control-Request-Method`) gets 204 with the route's methods and the headers a client
/// sends. Bearer tokens, not cookies: no `Allow-Credentials`. `Vary: Origin` on every API answer
/// when origins are configured, so a shared cache never hands one origin's answer to another.
struct CORSMiddleware: Middleware {
    let origins: CORSOrigins
    static let allowedHeaders = "Authorization, Content-Type, If-None-Match, If-Match, Idempotency-Key, Accept-Language"
    static let exposedHeaders = "ETag, Link, Location, Retry-After, RateLimit, RateLimit-Policy, Idempotent-Replayed"

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        guard origins != .none, request.isParentAPI else { return next.respond(to: request) }
        let origin = request.headers.first(name: .origin).flatMap { origins.allows($0) ? $0 : nil }
        let preflight = request.method == .OPTIONS && request.headers.first(name: .accessControlRequestMethod) != nil
        return next.respond(to: request).map { response in
            response.headers.add(name: .vary, value: "Origin")
            guard let origin else { return response }
            response.headers.replaceOrAdd(name: .accessControlAllowOrigin, value: origins == .any ? "*" : origin)
            if preflight, response.status == .noContent {
                response.headers.replaceOrAdd(name: .accessControlAllowMethods, value: response.headers.first(name: .allow) ?? "")
                response.headers.replaceOrAdd(name: .accessControlAllowHeaders, value: Self.allowedHeaders)
                response.headers.replaceOrAdd(name: .accessControlMaxAge, value: "600")
            } else {
                response.headers.replaceOrAdd(name: .accessControlExpose, value: Self.exposedHeaders)
            }
            return response
        }
    }
}
