import Crypto
import Foundation
import Vapor

/// Serves the files of `public/` (the console's CSS and script, `openapi.json`), read once at
/// start-up into memory: a handful of small files, each with a strong ETag (a digest of its
/// bytes) and `Cache-Control: no-cache` (revalidated, answered 304 when unchanged), compressed
/// like any answer. Only a path naming one of them is looked at; every other request passes
/// straight through. A changed file is served after a restart.
struct PublicFilesMiddleware: Middleware {
    struct File: Sendable {
        let body: ByteBuffer
        let contentType: String
        let etag: String
    }

    private let files: [String: File]

    init(directory: String) {
        var files: [String: File] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            var isDirectory: ObjCBool = false
            guard !name.hasPrefix("."), FileManager.default.fileExists(atPath: directory + name, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let data = FileManager.default.contents(atPath: directory + name) else { continue }
            let type = HTTPMediaType.fileExtension(String(name.split(separator: ".").last ?? ""))
            let contentType = type.map { $0.type == "text" || $0.subType == "javascript" ? "\($0.type)/\($0.subType); charset=utf-8" : "\($0.type)/\($0.subType)" }
            files["/" + name] = File(body: ByteBuffer(bytes: data), contentType: contentType ?? "application/octet-stream",
                                     etag: EntityTag.strong(for: ByteBuffer(bytes: data)))
        }
        self.files = files
    }

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        guard request.method == .GET || request.method == .HEAD,
              let file = files[request.encodedPath] ?? request.encodedPath.removingPercentEncoding.flatMap({ files[$0] }) else {
            return next.respond(to: request)
        }
        var headers: HTTPHeaders = ["ETag": file.etag, "Cache-Control": "no-cache"]
        if EntityTag.matches(request.headers.first(name: .ifNoneMatch), file.etag) {
            return request.eventLoop.makeSucceededFuture(Response(status: .notModified, headers: headers))
        }
        headers.add(name: .contentType, value: file.contentType)
        return request.eventLoop.makeSucceededFuture(Response(status: .ok, headers: headers, body: .init(buffer: file.body)))
    }
}
