import CBrotli
import CompressNIO
import NIOConcurrencyHelpers
import NIOPosix
import Vapor

/// Compressed answers: br or gzip, as the client's `Accept-Encoding` prefers (br on a tie), for
/// JSON, problem+json, HTML, CSS, JavaScript and text bodies of at least `minimumBytes` held in
/// memory. Levels for content made on the fly (speed first, as CDNs do: gzip 3, brotli 2); one
/// zlib stream per event-loop thread, reset between answers. An answer with an ETag (every GET of
/// the parent API) is compressed once per coding and kept by its tag (`CompressedAnswers`): the
/// engine's kept answers repeat, and so do their compressed forms. The ETag gets the coding's
/// suffix; `Vary: Accept-Encoding` on every such answer, compressed or not.
struct CompressionMiddleware: Middleware {
    static let minimumBytes = 1024
    static let gzipLevel: Int32 = 3
    static let brotliQuality: Int32 = 2
    /// 2^18 = 256 kB of history: more than any answer, and a small encoder.
    static let brotliWindow: Int32 = 18

    enum Coding: String { case br, gzip }

    let kept = CompressedAnswers(limitBytes: 32 * 1024 * 1024)

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let coding = request.headers.first(name: .acceptEncoding).flatMap(Self.preferred)
        return next.respond(to: request).map { response in
            guard let body = response.body.buffer, body.readableBytes >= Self.minimumBytes,
                  response.status != .noContent, response.status != .notModified,
                  !response.headers.contains(name: .contentEncoding),
                  Self.compressible(response.headers.first(name: .contentType)) else { return response }
            response.headers.add(name: .vary, value: "Accept-Encoding")
            guard let coding else { return response }
            let etag = response.headers.first(name: .eTag)
            let key = etag.map { coding.rawValue + $0 }
            guard let compressed = key.flatMap(kept.answer) ?? Self.compress(body, coding: coding, allocator: request.byteBufferAllocator),
                  compressed.readableBytes < body.readableBytes else { return response }
            if let key { kept.keep(compressed, for: key) }
            response.headers.replaceOrAdd(name: .contentEncoding, value: coding.rawValue)
            if let etag { response.headers.replaceOrAdd(name: .eTag, value: EntityTag.encoded(etag, coding: coding.rawValue)) }
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

    /// This thread's gzip stream (zlib's state is about 270 kB to set up: once per thread, not per answer).
    /// `nonisolated(unsafe)`: each thread reads and writes only its own value.
    nonisolated(unsafe) private static let gzipStreams = ThreadSpecificVariable<ZlibCompressor>()

    static func compress(_ body: ByteBuffer, coding: Coding, allocator: ByteBufferAllocator) -> ByteBuffer? {
        switch coding {
        case .gzip:
            let stream: ZlibCompressor
            if let existing = gzipStreams.currentValue {
                stream = existing
            } else {
                guard let made = try? ZlibCompressor(algorithm: .gzip, configuration: .init(compressionLevel: gzipLevel)) else { return nil }
                gzipStreams.currentValue = made
                stream = made
            }
            var input = body
            var output = allocator.buffer(capacity: stream.maxSize(from: input))
            defer { try? stream.reset() }
            guard (try? stream.deflate(from: &input, to: &output, flush: .finish)) != nil else { return nil }
            return output
        case .br:
            return body.withUnsafeReadableBytes { input -> ByteBuffer? in
                var size = BrotliEncoderMaxCompressedSize(input.count)
                var output = allocator.buffer(capacity: size)
                let done = output.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { out in
                    let ok = BrotliEncoderCompress(brotliQuality, brotliWindow, BROTLI_MODE_TEXT, input.count,
                                                   input.bindMemory(to: UInt8.self).baseAddress, &size,
                                                   out.bindMemory(to: UInt8.self).baseAddress)
                    return ok == BROTLI_TRUE ? size : 0
                }
                return done > 0 ? output : nil
            }
        }
    }
}

/// Compressed bodies by coding and ETag (the same tag is the same bytes on every instance), up
/// to `limitBytes` in all; dropped wholesale past it, like the catalog's other kept answers.
final class CompressedAnswers: Sendable {
    private struct State { var answers: [String: ByteBuffer] = [:]; var bytes = 0 }
    private let state = NIOLockedValueBox(State())
    let limitBytes: Int

    init(limitBytes: Int) { self.limitBytes = limitBytes }

    func answer(_ key: String) -> ByteBuffer? { state.withLockedValue { $0.answers[key] } }

    func keep(_ body: ByteBuffer, for key: String) {
        state.withLockedValue { state in
            guard state.answers[key] == nil else { return }
            if state.bytes + body.readableBytes > limitBytes { state = State() }
            state.answers[key] = body
            state.bytes += body.readableBytes
        }
    }
}
