import Vapor

extension Request {
    /// A console page rendered from `template` with `status` and `headers` (a form shown again
    /// with its errors is a 4xx; a page holding a secret is `no-store`).
    func page(_ template: String, _ context: some Encodable, status: HTTPStatus = .ok, headers: HTTPHeaders = [:]) async throws -> Response {
        let response = try await view.render(template, context).encodeResponse(for: self)
        response.status = status
        for (name, value) in headers { response.headers.replaceOrAdd(name: name, value: value) }
        return response
    }
}

extension Sequence<UInt8> {
    /// Lowercase hexadecimal: how digests are stored and compared.
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
