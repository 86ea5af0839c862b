import Core
import NIOCore
import Vapor

/// The list envelope: `{"data": [...], "meta": {...}}`.
struct PageDTO<Item: Content>: Content {
    struct Meta: Content { let page: Int; let perPage: Int; let totalCount: Int; let totalPages: Int }
    let data: [Item]
    let meta: Meta
}

/// A single object: `{"data": {...}}`.
struct ItemDTO<Item: Content>: Content {
    let data: Item
}

extension ByteBuffer {
    /// JSON with the app's encoder settings (snake_case, sorted keys, ISO 8601 dates).
    static func json<T: Encodable>(_ value: T) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        var headers = HTTPHeaders()
        try ContentConfiguration.global.requireEncoder(for: .json).encode(value, to: &buffer, headers: &headers)
        return buffer
    }
}

extension Response {
    /// Encoded JSON bytes as an answer.
    static func json(_ body: ByteBuffer, status: HTTPStatus = .ok) -> Response {
        Response(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: .init(buffer: body))
    }

    /// A list page in the envelope, with its Link header.
    static func page<Item: Content>(_ items: [Item], page: PageRequest, total: Int, query: QueryParameters, req: Request) throws -> Response {
        let dto = PageDTO(data: items, meta: .init(page: page.page, perPage: page.perPage, totalCount: total,
                                                     totalPages: page.totalPages(for: total)))
        let response = Response.json(try .json(dto))
        response.headers.replaceOrAdd(name: "Link", value: page.linkHeader(path: req.encodedPath, query: query, totalCount: total))
        return response
    }
}

extension Response {
    /// `body` as JSON that no cache may keep (tokens).
    static func noStore(status: HTTPStatus = .ok, _ body: some Encodable) throws -> Response {
        let response = Response.json(try .json(body), status: status)
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return response
    }
}
