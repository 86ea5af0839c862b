import CBrotli
import CompressNIO
import Vapor

/// Compressed answers: br or gzip, as the client's `Accept-Encoding` prefers (br on a tie), for
/// JSON, problem+json, HTML, CSS, JavaScript and text bodies of at least `minimumBytes` held in
/// memory. Levels for dynamic content (speed over the last percent: gzip 4, brotli 4, as CDNs
/// compress on the fly). The ETag gets the coding's suffix; `Vary: Accept-Encoding` on every such
/// answer, compressed or not.
struct CompressionMiddleware: Middleware {
    static let minimumBytes = 1024
    static let gzipLevel: Int32 = 4
    static let brotliQuality: Int32 = 4

    enum Coding: String { case br, gzip }

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let coding = request.headers.first(name: .acceptEncoding).flatMap(Self.preferred)
        return next.respond(to: request).map { response in
            guard let body = response.body.buffer, body.readableBytes >= Self.minimumBytes,
                  response.status != .noContent, response.status != .notModified,
                  !response.headers.contains(name: .contentEncoding),
                  Self.compressible(response.headers.first(name: .contentType)) else { return response }
            response.headers.add(name: .vary, value: "Accept-Encoding")
            guard let coding, let compressed = Self.compress(body, coding: coding, allocator: request.byteBufferAllocator),
                  compressed.readableBytes < body.readableBytes else { return response }
            response.headers.replaceOrAdd(name: .contentEncoding, value: coding.rawValue)
            if let etag = response.headers.first(name: .eTag) {
                response.headers.replaceOrAdd(name: .eTag, value: EntityTag.encoded(etag, coding: coding.rawValue))
            }
            response.body = .init(buffer: compressed)
            return response
        }
    }

    /// br or gzip from an `Accept-Encoding` value (q-values honoured, `*` counts for both,
    /// `identity` and others ignored); nil when neither is acceptable.
    static func preferred(_ header: String) -> Coding? {
        var quality: [String: Double] = [:]
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let name = parts.first, !name.isEmpty else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") { q = Double(parameter.dropFirst(2)) ?? 0 }
            quality[name] = q
        }
        let any = quality["*"] ?? 0
        let br = quality["br"] ?? any, gzip = quality["gzip"] ?? quality["x-gzip"] ?? any
        if br > 0, br >= gzip { return .br }
        return gzip > 0 ? .gzip : nil
    }

    static func compressible(_ contentType: String?) -> Bool {
        guard let type = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() else { return false }
        return type.hasPrefix("text/") || type == "application/json" || type.hasSuffix("+json") || type == "application/javascript"
    }

    static func compress(_ body: ByteBuffer, coding: Coding, allocator: ByteBufferAllocator) -> ByteBuffer? {
        switch coding {
        case .gzip:
            var input = body
            return try? input.compress(with: .gzip(configuration: .init(compressionLevel: gzipLevel)), allocator: allocator)
        case .br:
            return body.withUnsafeReadableBytes { input -> ByteBuffer? in
                var size = BrotliEncoderMaxCompressedSize(input.count)
                var output = allocator.buffer(capacity: size)
                let done = output.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { out in
                    let ok = BrotliEncoderCompress(brotliQuality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, input.count,
                                                   input.bindMemory(to: UInt8.self).baseAddress, &size,
                                                   out.bindMemory(to: UInt8.self).baseAddress)
                    return ok == BROTLI_TRUE ? size : 0
                }
                return done > 0 ? output : nil
            }
        }
    }
}
