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
}

private struct PathKey: StorageKey {
    typealias Value = String
}
