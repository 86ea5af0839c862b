import Vapor

/// The outermost middleware: security headers on console pages (and their CSV and error pages),
/// and the one place that refuses a response header value with CR, LF or NUL — whatever built
/// it, a value that could split the header block never leaves the app. Future-based, so it adds
/// no hop to the task pool.
struct SecurityHeadersMiddleware: Middleware {
    /// No inline script or style (the console has none), nothing framed, forms only to ourselves.
    static let consolePolicy = [
        "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' https: data: blob:",
        "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        next.respond(to: request).map { Self.secure($0, for: request) }
    }

    private static func secure(_ response: Response, for request: Request) -> Response {
        let path = request.encodedPath
        response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        if AdminPath.contains(path) {
            response.headers.replaceOrAdd(name: "Content-Security-Policy", value: consolePolicy)
            response.headers.replaceOrAdd(name: "X-Frame-Options", value: "DENY")
            response.headers.replaceOrAdd(name: "Referrer-Policy", value: "same-origin")
            response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        }
        if let bad = response.headers.first(where: { isUnsafe($0.name) || isUnsafe($0.value) }) {
            request.logger.error("refused a response header with CR, LF or NUL", metadata: ["header": .string(bad.name), "path": .string(path)])
            return Response(status: .internalServerError, headers: ["Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"],
                            body: .init(string: "Something went wrong.\n"))
        }
        return response
    }

    static func isUnsafe(_ text: String) -> Bool {
        text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }
}
