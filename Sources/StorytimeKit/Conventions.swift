import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Every POST and DELETE carries an `Idempotency-Key` (a new UUID per call); a call whose answer
/// was lost (the transport threw) is sent again up to `retries` times with the same key, and one
/// the server is still running (409 `idempotency_key_in_use`) after a second — so a retried play
/// or library change is stored once (docs/api.md, "API conventions").
struct IdempotencyMiddleware: ClientMiddleware {
    var retries = 2

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        guard request.method == .post || request.method == .delete else { return try await next(request, body, baseURL) }
        var request = request
        let key = HTTPField.Name("Idempotency-Key")!
        if request.headerFields[key] == nil { request.headerFields[key] = UUID().uuidString }
        let replayable = body == nil || body?.iterationBehavior == .multiple
        var attempt = 0
        while true {
            attempt += 1
            do {
                let (response, responseBody) = try await next(request, body, baseURL)
                if response.status.code == 409, attempt <= retries, replayable,
                   let data = try? await Data(collecting: responseBody ?? HTTPBody(), upTo: 64 * 1024),
                   String(decoding: data, as: UTF8.self).contains("idempotency_key_in_use") {
                    try await Task.sleep(for: .seconds(1))
                    continue
                }
                return (response, responseBody)
            } catch {
                guard attempt <= retries, replayable, !(error is CancellationError) else { throw error }
                try await Task.sleep(for: .milliseconds(200 * attempt))
            }
        }
    }
}

/// Conditional GETs: the last answer of each URL is kept with its ETag (per bearer token), sent
/// back as `If-None-Match`, and a 304 is answered from it — the app re-downloads only what
/// changed. At most `capacity` answers; all dropped when full.
struct ETagCacheMiddleware: ClientMiddleware {
    final class Store: @unchecked Sendable {
        struct Entry { let etag: String; let headers: HTTPFields; let body: Data }
        private let lock = NSLock()
        private var entries: [String: Entry] = [:]
        let capacity: Int
        init(capacity: Int) { self.capacity = capacity }

        func entry(_ key: String) -> Entry? { lock.withLock { entries[key] } }
        func keep(_ entry: Entry, for key: String) {
            lock.withLock {
                if entries.count >= capacity { entries.removeAll() }
                entries[key] = entry
            }
        }
        func clear() { lock.withLock { entries.removeAll() } }
        var count: Int { lock.withLock { entries.count } }
    }

    let store: Store

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        guard request.method == .get else { return try await next(request, body, baseURL) }
        let key = (request.headerFields[.authorization] ?? "") + " " + baseURL.absoluteString + (request.path ?? "")
        var request = request
        let kept = store.entry(key)
        if let kept { request.headerFields[.ifNoneMatch] = kept.etag }
        let (response, responseBody) = try await next(request, body, baseURL)
        if response.status.code == 304, let kept {
            var answer = HTTPResponse(status: .ok)
            answer.headerFields = kept.headers
            return (answer, HTTPBody(kept.body))
        }
        guard response.status.code == 200, let etag = response.headerFields[.eTag], let responseBody else { return (response, responseBody) }
        let data = try await Data(collecting: responseBody, upTo: 16 * 1024 * 1024)
        store.keep(.init(etag: etag, headers: response.headerFields, body: data), for: key)
        return (response, HTTPBody(data))
    }
}
