import Vapor

extension Request {
    /// The request's percent-encoded path, worked out once per request. Vapor's `url.path`
    /// re-parses the whole URI with Foundation on every read, and four middlewares and handlers
    /// on the catalog path each need it.
    var encodedPath: String {
        if let path = storage[PathKey.self] { return path }
        let path = url.path
        storage[PathKey.self] = path
        return path
    }

    /// A request to the parent API: the HTTP conventions of docs/api.md apply (CORS, the request
    /// budget, Idempotency-Key, conditional GETs, 405/415). Decided here, once, for the global
    /// middlewares that keep them: they sit outside the router because they must also answer
    /// what no route matches (a CORS preflight, a 405, a 404's problem) and wrap the error
    /// middleware's answers (an error's stored replay, its 429).
    var isParentAPI: Bool { encodedPath.hasPrefix("/api/") }

    /// Errors answered as problem+json rather than a page: the parent API, the health check, the
    /// webhooks we receive.
    var answersProblemJSON: Bool {
        isParentAPI || encodedPath == "/api" || encodedPath == "/healthz" || encodedPath.hasPrefix("/webhooks/")
    }
}

private struct PathKey: StorageKey {
    typealias Value = String
}
