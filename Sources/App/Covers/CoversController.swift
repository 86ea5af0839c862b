import Foundation
import Vapor

/// `GET /covers/<hash>.<webp|jpg>`: a cover rendition from the `CoverStore`. A name is the hash of
/// its bytes, so an answer never changes: `Cache-Control: public, max-age=31536000, immutable`, a
/// strong ETag (the hash), `If-None-Match` → 304. Browsers, nginx (`make cluster`) and CDNs keep them.
struct CoversController: RouteCollection {
    let store: any CoverStore = PostgresCoverStore()

    func boot(routes: any RoutesBuilder) throws {
        routes.get("covers", ":name", use: serve)
    }

    static let cacheControl = "public, max-age=31536000, immutable"

    @Sendable
    func serve(req: Request) async throws -> Response {
        let name = req.parameters.get("name") ?? ""
        let parts = name.split(separator: ".")
        guard parts.count == 2, parts[0].count == 32, parts[0].allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
              ["webp", "jpg"].contains(parts[1]) else { throw Abort(.notFound) }
        let hash = String(parts[0])
        let etag = "\"\(hash)\""
        var headers: HTTPHeaders = ["Cache-Control": Self.cacheControl, "ETag": etag]
        if EntityTag.matches(req.headers.first(name: .ifNoneMatch), etag) {
            // Still check it exists: a 304 for a name never stored would hide a wrong URL.
            guard try await store.contains(hash: hash, on: req.sql) else { throw Abort(.notFound) }
            return Response(status: .notModified, headers: headers)
        }
        guard let file = try await store.get(hash: hash, on: req.sql),
              file.contentType == (parts[1] == "webp" ? "image/webp" : "image/jpeg") else { throw Abort(.notFound) }
        headers.replaceOrAdd(name: .contentType, value: file.contentType)
        return Response(status: .ok, headers: headers, body: .init(data: file.bytes))
    }
}
