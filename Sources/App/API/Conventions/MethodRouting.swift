import Vapor

/// Which methods each path of the app answers, from the registered routes: for `Allow`.
struct RouteMethods: Sendable {
    private let routes: [(method: HTTPMethod, path: [PathComponent])]

    init(_ routes: Routes) {
        self.routes = routes.all.map { ($0.method, $0.path) }
    }

    /// The methods some route answers at `path` (HEAD with GET, and OPTIONS), sorted; empty when
    /// no route has this path.
    func methods(for path: String) -> [String] {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        var methods = Set<String>()
        for route in routes where Self.matches(route.path, parts) {
            methods.insert(route.method.rawValue)
            if route.method == .GET { methods.insert("HEAD") }
        }
        if methods.isEmpty { return [] }
        methods.insert("OPTIONS")
        return methods.sorted()
    }

    private static func matches(_ pattern: [PathComponent], _ parts: [Substring]) -> Bool {
        var index = 0
        for component in pattern {
            switch component {
            case .catchall: return index < parts.count
            case .anything, .parameter:
                guard index < parts.count else { return false }
            case .constant(let text):
                guard index < parts.count, parts[index] == text else { return false }
            }
            index += 1
        }
        return index == parts.count
    }
}

/// What a client gets for a method a path does not have, and for a body it cannot send: `OPTIONS`
/// on any route's path is 204 with `Allow` (CORS preflights are answered from it); another method
/// the path lacks is 405 `method_not_allowed` with `Allow`; a body on an `/api` write that is not
/// JSON is 415 `unsupported_media_type`. Unknown paths stay 404.
struct MethodRoutingMiddleware: Middleware {
    let table: RouteMethods

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        guard request.route != nil else { return answerUnrouted(request, next: next) }
        if let problem = Self.unsupportedBody(request) { return request.eventLoop.makeFailedFuture(problem) }
        return next.respond(to: request)
    }

    private func answerUnrouted(_ request: Request, next: any Responder) -> EventLoopFuture<Response> {
        let methods = table.methods(for: request.encodedPath)
        guard !methods.isEmpty else { return next.respond(to: request) }
        let allow = methods.joined(separator: ", ")
        if request.method == .OPTIONS {
            return request.eventLoop.makeSucceededFuture(Response(status: .noContent, headers: ["Allow": allow]))
        }
        return request.eventLoop.makeFailedFuture(Problem(
            status: .methodNotAllowed, code: "method_not_allowed",
            detail: "\(request.method.rawValue) is not allowed here; this path answers \(allow).", headers: ["Allow": allow]))
    }

    /// A 415 for an `/api` request whose body is not JSON (a missing Content-Type included).
    static func unsupportedBody(_ request: Request) -> Problem? {
        guard [.POST, .PUT, .PATCH].contains(request.method), request.isParentAPI else { return nil }
        let length = request.headers.first(name: .contentLength).flatMap(Int.init) ?? (request.headers.contains(name: .transferEncoding) ? 1 : 0)
        guard length > 0 else { return nil }
        if let type = request.headers.contentType, type.type == "application", type.subType == "json" || type.subType.hasSuffix("+json") {
            return nil
        }
        return Problem(status: .unsupportedMediaType, code: "unsupported_media_type",
                       detail: "The body must be JSON, sent with Content-Type: application/json.")
    }
}
