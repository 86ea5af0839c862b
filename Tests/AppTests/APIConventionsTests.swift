@testable import App
import CompressNIO
import Foundation
import Testing
import Vapor
import VaporTesting

/// The HTTP conventions third-party clients expect of the parent API: CORS, compression,
/// conditional requests, methods, media types and the authentication headers.
@Suite("API conventions")
struct APIConventionsTests {
    static let origin = "https://app.example.com"

    @Test("CORS: an allowed origin's preflight is 204 with the route's methods; its answers, errors too, name it; others get nothing; never the console",
          .app(adjust: { $0.corsOrigins = try! CORSOrigins(setting: "https://app.example.com, https://web.example.org") }))
    func cors() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let preflight = try await app.send(.OPTIONS, "/api/v1/children/\(parent.children[0])/library", headers: [
            "Origin": Self.origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, idempotency-key"])
        #expect(preflight.status == .noContent)
        #expect(preflight.headers.first(name: "Access-Control-Allow-Origin") == Self.origin)
        #expect(preflight.headers.first(name: "Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS, POST")
        let allowedHeaders = preflight.headers.first(name: "Access-Control-Allow-Headers")?.lowercased() ?? ""
        #expect(["authorization", "content-type", "idempotency-key", "if-none-match"].allSatisfy { allowedHeaders.contains($0) })
        #expect(preflight.headers[.vary].contains("Origin"))

        let listed = try await app.get("/api/v1/catalog/books", token: parent.token, headers: ["Origin": Self.origin])
        #expect(listed.status == .ok && listed.headers.first(name: "Access-Control-Allow-Origin") == Self.origin)
        #expect(listed.headers.first(name: "Access-Control-Expose-Headers")?.contains("ETag") == true)
        let refused = try await app.get("/api/v1/catalog/books", headers: ["Origin": "https://web.example.org"])
        #expect(refused.status == .unauthorized && refused.headers.first(name: "Access-Control-Allow-Origin") == "https://web.example.org")

        let stranger = try await app.send(.OPTIONS, "/api/v1/catalog/books", headers: ["Origin": "https://evil.example", "Access-Control-Request-Method": "GET"])
        #expect(stranger.headers.first(name: "Access-Control-Allow-Origin") == nil)
        let strangerGET = try await app.get("/api/v1/catalog/books", token: parent.token, headers: ["Origin": "https://evil.example"])
        #expect(strangerGET.status == .ok && strangerGET.headers.first(name: "Access-Control-Allow-Origin") == nil)
        let console = try await app.get("/admin/login", headers: ["Origin": Self.origin])
        #expect(console.headers.first(name: "Access-Control-Allow-Origin") == nil)
        #expect(throws: (any Error).self) { try CORSOrigins(setting: "https://app.example.com/path") }
    }

    @Test("CORS is off by default: no preflight headers for any origin", .app)
    func corsOffByDefault() async throws {
        let app = try app()
        let preflight = try await app.send(.OPTIONS, "/api/v1/catalog/books", headers: ["Origin": Self.origin, "Access-Control-Request-Method": "GET"])
        #expect(preflight.status == .noContent && preflight.headers.first(name: "Access-Control-Allow-Origin") == nil)
    }

    @Test("gzip and br when accepted and worth it: the same bytes once decoded, a coded ETag, Vary; small bodies and identity stay plain", .app)
    func compression() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        for index in 0..<40 { _ = try await app.makeBook("A long enough title number \(index)", description: String(repeating: "words ", count: 40)) }
        let path = "/api/v1/catalog/books?per_page=40"
        let plain = try await app.get(path, token: parent.token)
        #expect(plain.status == .ok && plain.headers.first(name: .contentEncoding) == nil)
        #expect(plain.headers[.vary].contains("Accept-Encoding"))
        let etag = try #require(plain.headers.first(name: .eTag))

        let gzipped = try await app.get(path, token: parent.token, headers: ["Accept-Encoding": "gzip, deflate"])
        #expect(gzipped.headers.first(name: .contentEncoding) == "gzip")
        #expect(gzipped.body.readableBytes < plain.body.readableBytes / 3)
        var compressed = gzipped.body
        let decoded = try compressed.decompress(with: .gzip())
        #expect(decoded == plain.body)
        #expect(gzipped.headers.first(name: .eTag) == String(etag.dropLast()) + "-gzip\"")
        // The second time it comes from the kept compressed answers: the same bytes.
        let again = try await app.get(path, token: parent.token, headers: ["Accept-Encoding": "gzip"])
        #expect(again.body == gzipped.body && again.headers.first(name: .contentEncoding) == "gzip")

        let brotli = try await app.get(path, token: parent.token, headers: ["Accept-Encoding": "gzip;q=0.8, br"])
        #expect(brotli.headers.first(name: .contentEncoding) == "br")
        #expect(brotli.body.readableBytes < gzipped.body.readableBytes + 200)
        let decodedBrotli = try Self.brotliDecoded(brotli.body)
        #expect(decodedBrotli == Data(plain.body.readableBytesView))
        let refusedBoth = try await app.get(path, token: parent.token, headers: ["Accept-Encoding": "br;q=0, gzip;q=0"])
        #expect(refusedBoth.headers.first(name: .contentEncoding) == nil)

        // A 304 for a coded representation the client holds; a tiny answer is never coded.
        let revalidated = try await app.get(path, token: parent.token, headers: ["Accept-Encoding": "gzip", "If-None-Match": gzipped.headers.first(name: .eTag)!])
        #expect(revalidated.status == .notModified && revalidated.body.readableBytes == 0)
        let small = try await app.get("/api/v1/me", token: parent.token, headers: ["Accept-Encoding": "gzip"])
        #expect(small.status == .ok && small.headers.first(name: .contentEncoding) == nil)
        let document = try await app.get("/openapi.json", headers: ["Accept-Encoding": "br"])
        #expect(document.headers.first(name: .contentEncoding) == "br" && document.headers.first(name: .eTag) != nil)
    }

    /// Decodes brotli with the `brotli` tool when present, else Python's `brotli` module is not
    /// assumed: the app's own encoder round-trips through libbrotlidec via `python3 -c`.
    static func brotliDecoded(_ body: ByteBuffer) throws -> Data {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("br-\(UUID().uuidString)")
        try Data(body.readableBytesView).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import ctypes, sys
            lib = ctypes.CDLL("libbrotlidec.so.1")
            data = open(sys.argv[1], "rb").read()
            size = ctypes.c_size_t(len(data) * 50 + 65536)
            out = ctypes.create_string_buffer(size.value)
            ok = lib.BrotliDecoderDecompress(ctypes.c_size_t(len(data)), data, ctypes.byref(size), out)
            assert ok == 1, "not brotli"
            sys.stdout.buffer.write(out.raw[:size.value])
            """, input.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("brotli decoding failed") }
        return output
    }

    @Test("ETags: catalog, detail, library, continue, history and today answer 304 to their tag, and a change moves the tag", .app)
    func conditionalRequests() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let book = try await app.makeBook("Owl Moon")
        let other = try await app.makeBook("Bear Hunt")
        #expect(try await app.send(.POST, "/api/v1/children/\(child)/library", token: parent.token, json: #"{"book_id": \#(book)}"#).status == .created)
        #expect(try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/plays", token: parent.token,
                                   json: #"{"position_seconds": 30, "completed": false}"#).status == .created)
        let paths = ["/api/v1/catalog/books", "/api/v1/catalog/books/\(book)", "/api/v1/children/\(child)/library",
                     "/api/v1/children/\(child)/continue", "/api/v1/children/\(child)/history", "/api/v1/children/\(child)/today"]
        var tags: [String: String] = [:]
        for path in paths {
            let first = try await app.get(path, token: parent.token)
            let etag = try #require(first.headers.first(name: .eTag), "\(path)")
            #expect(first.status == .ok && etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
            #expect(first.headers.first(name: .cacheControl) == "private, no-cache" && first.headers[.vary].contains("Authorization"), "\(path)")
            let again = try await app.get(path, token: parent.token, headers: ["If-None-Match": "\"other\", \(etag)"])
            #expect(again.status == .notModified && again.body.readableBytes == 0 && again.headers.first(name: .eTag) == etag, "\(path)")
            let stale = try await app.get(path, token: parent.token, headers: ["If-None-Match": "\"stale\""])
            #expect(stale.status == .ok, "\(path)")
            tags[path] = etag
        }
        // A change moves the tags of what it changes: another play, another library entry.
        #expect(try await app.send(.POST, "/api/v1/children/\(child)/library", token: parent.token, json: #"{"book_id": \#(other)}"#).status == .created)
        #expect(try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/plays", token: parent.token,
                                   json: #"{"position_seconds": 90, "completed": false}"#).status == .created)
        for path in paths.dropFirst(2) {
            let after = try await app.get(path, token: parent.token, headers: ["If-None-Match": tags[path]!])
            #expect(after.status == .ok && after.headers.first(name: .eTag) != tags[path], "\(path)")
        }
        // Tokens are never kept.
        let token = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"nobody@example.com","password":"wrong password"}"#)
        #expect(token.status == .unauthorized)
    }

    @Test("a wrong method is 405 with Allow; OPTIONS is 204 with Allow; unknown paths stay 404; HEAD answers like GET", .app)
    func methods() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let wrong = try await app.send(.DELETE, "/api/v1/catalog/books", token: parent.token)
        #expect(wrong.status == .methodNotAllowed && wrong.headers.first(name: .allow) == "GET, HEAD, OPTIONS")
        #expect(try wrong.json["code"] as? String == "method_not_allowed")
        #expect(wrong.headers.contentType?.description.hasPrefix("application/problem+json") == true)
        let put = try await app.send(.PUT, "/api/v1/children/\(parent.children[0])/library", token: parent.token, json: "{}")
        #expect(put.status == .methodNotAllowed && put.headers.first(name: .allow) == "GET, HEAD, OPTIONS, POST")
        let options = try await app.send(.OPTIONS, "/api/v1/me")
        #expect(options.status == .noContent && options.headers.first(name: .allow) == "DELETE, GET, HEAD, OPTIONS, PATCH")
        #expect(try await app.send(.OPTIONS, "/api/v1/nothing-here").status == .notFound)
        #expect(try await app.send(.DELETE, "/api/v1/nothing-here").status == .notFound)
        let head = try await app.send(.HEAD, "/api/v1/catalog/books", token: parent.token)
        #expect(head.status == .ok)
    }

    @Test("a body that is not JSON is 415 unsupported_media_type and changes nothing; JSON with a charset is fine", .app)
    func mediaTypes() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let path = "/api/v1/children"
        let form = try await app.send(.POST, path, headers: ["Authorization": "Bearer \(parent.token)", "Content-Type": "application/x-www-form-urlencoded"], form: "name=Eve")
        #expect(form.status == .unsupportedMediaType)
        #expect(try form.json["code"] as? String == "unsupported_media_type")
        let none = try await app.testing().sendRequest(.POST, path, headers: ["Authorization": "Bearer \(parent.token)"], body: ByteBuffer(string: #"{"name":"Eve"}"#))
        #expect(none.status == .unsupportedMediaType)
        #expect(try await app.count("SELECT count(*) AS n FROM children WHERE name = 'Eve'") == 0)
        let json = try await app.send(.POST, path, headers: ["Authorization": "Bearer \(parent.token)", "Content-Type": "application/json; charset=utf-8"], form: #"{"name":"Eve"}"#)
        #expect(json.status == .created)
    }

    @Test("authentication headers: token answers are no-store; a wrong password's 401 and an invalid token's name the Bearer challenge", .app)
    func authenticationHeaders() async throws {
        let app = try app()
        let password = "correct horse battery"
        let parent = try await app.makeParent(email: "headers@example.com", password: password)
        let token = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"headers@example.com","password":"\#(password)"}"#)
        #expect(token.status == .ok && token.headers.first(name: .cacheControl) == "no-store")
        let refresh = try token.json["refresh_token"] as? String ?? ""
        let refreshed = try await app.send(.POST, "/api/v1/auth/refresh", json: #"{"refresh_token":"\#(refresh)"}"#)
        #expect(refreshed.status == .ok && refreshed.headers.first(name: .cacheControl) == "no-store")
        let wrong = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"headers@example.com","password":"not it at all"}"#)
        #expect(wrong.status == .unauthorized && wrong.headers.first(name: .wwwAuthenticate)?.hasPrefix("Bearer") == true)
        let invalid = try await app.get("/api/v1/me", token: "not-a-token")
        #expect(invalid.status == .unauthorized && invalid.headers.first(name: .wwwAuthenticate)?.contains(#"error="invalid_token""#) == true)
        let missing = try await app.get("/api/v1/me")
        #expect(missing.status == .unauthorized && missing.headers.first(name: .wwwAuthenticate) == #"Bearer realm="storytime""#)
        #expect(try await app.get("/api/v1/me", token: parent.token).status == .ok)
    }
}

@Suite("API conventions: rate limits and cursors")
struct RateLimitAndCursorTests {
    @Test("the budget: RateLimit-Policy and RateLimit on answers, 429 rate_limited with Retry-After past it, per account",
          .app(adjust: { $0.rateLimitRequests = 5; $0.rateLimitWindow = 3600 }))
    func rateLimit() async throws {
        let app = try app()
        // The windows are aligned on the clock: start well inside one, not minutes before the hour
        // (a run crossing it started a fresh budget halfway).
        let into = app.appServices.clock.now().timeIntervalSince1970.truncatingRemainder(dividingBy: 3600)
        if into > 3000 { app.appServices.clock.advance(by: 3600 - into + 60) }
        let parent = try await app.makeParent()   // its sign-in spent one of its address's 5
        let other = try await app.makeParent()
        var remaining: [String] = []
        for _ in 0..<5 {
            let answer = try await app.get("/api/v1/me", token: parent.token)
            #expect(answer.status == .ok && answer.headers.first(name: "RateLimit-Policy") == "\"account\";q=5;w=3600")
            remaining.append(answer.headers.first(name: "RateLimit")?.split(separator: ";").dropFirst().first.map(String.init) ?? "")
        }
        // The first request of a token counts against its address (not verified yet), then the account.
        #expect(remaining.suffix(4) == ["r=4", "r=3", "r=2", "r=1"], "\(remaining)")
        _ = try await app.get("/api/v1/me", token: parent.token)
        let refused = try await app.get("/api/v1/me", token: parent.token)
        #expect(refused.status == .tooManyRequests)
        #expect(try refused.json["code"] as? String == "rate_limited")
        #expect(Int(refused.headers.first(name: .retryAfter) ?? "") ?? 0 > 0)
        #expect(refused.headers.first(name: "RateLimit")?.contains("r=0") == true)
        // Another account has its own budget; the console has none.
        #expect(try await app.get("/api/v1/me", token: other.token).status == .ok)
        #expect(try await app.get("/admin/login").headers.first(name: "RateLimit") == nil)
    }

    @Test("history by cursor: pages do not shift while plays arrive; Link next carries the cursor; a forged cursor is 400", .app)
    func historyCursor() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let book = try await app.makeBook("Owl Moon")
        #expect(try await app.send(.POST, "/api/v1/children/\(child)/library", token: parent.token, json: #"{"book_id": \#(book)}"#).status == .created)
        // 7 plays at distinct moments, then walk them 3 at a time while new plays arrive.
        for index in 0..<7 {
            let at = ISO8601DateFormatter().string(from: Date().addingTimeInterval(Double(-3600 + index * 60)))
            #expect(try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/plays", token: parent.token,
                                       json: #"{"position_seconds": \#(index), "completed": false, "played_at": "\#(at)"}"#).status == .created)
        }
        var seen: [Int] = []
        var next: String? = "/api/v1/children/\(child)/history?per_page=3&after="
        var pages = 0
        while let path = next, pages < 5 {
            let page = try await app.get(path, token: parent.token)
            #expect(page.status == .ok)
            seen += try page.dataArray.compactMap { $0["position_seconds"] as? Int }
            // A new play arrives between pages: newer than everything walked, it never shifts them.
            #expect(try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/plays", token: parent.token,
                                       json: #"{"position_seconds": \#(100 + pages), "completed": false}"#).status == .created)
            let link = page.headers.first(name: "Link") ?? ""
            next = link.split(separator: ",").first { $0.contains("rel=\"next\"") }.flatMap { part in
                part.split(separator: "<").last?.split(separator: ">").first.map(String.init)
            }
            pages += 1
        }
        #expect(seen == [6, 5, 4, 3, 2, 1, 0], "\(seen)")
        #expect(pages == 3)
        let forged = try await app.get("/api/v1/children/\(child)/history?after=bm90LWEtY3Vyc29y", token: parent.token)
        #expect(forged.status == .badRequest)
        #expect(try forged.json["field"] as? String == "after")
        // Page numbers keep working.
        #expect(try await app.get("/api/v1/children/\(child)/history?page=2&per_page=3", token: parent.token).dataArray.count == 3)
    }
}
