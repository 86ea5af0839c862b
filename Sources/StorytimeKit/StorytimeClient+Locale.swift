import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The language the catalog answers in (docs/localization.md). By default the client sends no
/// language of its own (URLSession sends the device's languages as `Accept-Language` on Apple
/// platforms; the server then falls back to the account's `preferred_locale`, then its default).
/// `setLanguages(["fr-CA", "fr"])` sends them, best first, with q-values, on every request.
extension StorytimeClient {
    public func setLanguages(_ tags: [String]) {
        languages.set(tags)
    }

    /// The `Accept-Language` value sent (nil: none set).
    public var acceptLanguage: String? { languages.header }
}

/// The languages set on a client, shared with its middleware.
final class LanguageStore: @unchecked Sendable {
    private let lock = NSLock()
    private var value: String?

    func set(_ tags: [String]) {
        let clean = tags.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.contains(",") && !$0.contains(";") }
        let header = clean.enumerated().map { i, tag in i == 0 ? tag : tag + ";q=" + String(format: "%.1f", max(0.1, 1.0 - Double(i) * 0.1)) }
            .joined(separator: ", ")
        lock.withLock { value = header.isEmpty ? nil : header }
    }

    var header: String? { lock.withLock { value } }
}

/// Adds the client's `Accept-Language` to every request (when set).
struct LanguageMiddleware: ClientMiddleware {
    let store: LanguageStore

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let header = store.header, request.headerFields[.acceptLanguage] == nil { request.headerFields[.acceptLanguage] = header }
        return try await next(request, body, baseURL)
    }
}
