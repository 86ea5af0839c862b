import Core
import Vapor

/// Every state-changing console request carries the session's `csrf_token`, or is refused (403).
/// The form body is read here, before the route, so this is where its size is limited (413).
struct CSRFMiddleware: AsyncMiddleware {
    /// The sign-in form: an email and a password.
    static let loginLimit = 8 * 1024
    /// The largest form accepted (`Settings.consoleFormLimit`, or `loginLimit`).
    let maxBody: Int

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if request.method != .GET && request.method != .HEAD {
            if let length = request.headers.first(name: .contentLength).flatMap(Int.init), length > maxBody {
                throw Abort(.payloadTooLarge, reason: "The form is larger than \(maxBody / 1024) kB.")
            }
            if request.body.data == nil { _ = try await request.body.collect(max: maxBody).get() }
            let form = try FormBody(request)
            guard request.adminSession.verifyCSRF(form.value("csrf_token")) else {
                throw Abort(.forbidden, reason: "The form has expired or did not come from this console. Go back, reload the page and try again.")
            }
            request.storage[FormBodyKey.self] = form
        }
        return try await next.respond(to: request)
    }
}

/// An urlencoded form body as ordered pairs (repeated names such as `category_ids[]` kept).
struct FormBody: Sendable {
    let parameters: QueryParameters

    init(_ request: Request) throws {
        if let stored = request.storage[FormBodyKey.self] { self = stored; return }
        guard let buffer = request.body.data else { parameters = QueryParameters(pairs: []); return }
        parameters = QueryParameters(query: String(decoding: buffer.readableBytesView, as: UTF8.self))
    }

    func value(_ name: String) -> String? { parameters.pairs.first { $0.name == name }?.value }
    func values(_ name: String) -> [String] { parameters.pairs.filter { $0.name == name }.map(\.value) }
}

struct FormBodyKey: StorageKey { typealias Value = FormBody }

