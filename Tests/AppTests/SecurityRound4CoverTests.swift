@testable import App
import Foundation
import NIOCore
import SQLKit
import Testing
import Vapor

/// Security round 4 (issue 43), covers: concurrent uploads of a large picture that packs small
/// crashed the whole server (Foundation's `Process.run`); a viewer's upload body was collected
/// before the role was checked; the upload budget was counted only after the work was done.
@Suite("Security round 4: covers")
struct SecurityRound4CoverTests {
    static let workers = 2
    static let queue = 2

    /// A 6000 × 6000 PNG of one colour: 36 megapixels (under the 40 MP limit) in about 120 kB.
    static func bigPNG() async throws -> Data {
        let png = try await CoverTests.image(6000, 6000, format: "png")
        #expect(png.count < 1_000_000)
        return png
    }

    /// A console upload over real HTTP (the server the attack met), as a browser's multipart form.
    struct Uploader: Sendable {
        let client: any Client
        let port: Int
        let cookie: String
        let csrf: String

        /// Answers as sent: a saved upload's 303 is back to the same page, which the HTTP client
        /// would take for a redirect cycle.
        static func noRedirects(_ app: Application) {
            app.http.client.configuration.redirectConfiguration = .disallow
        }

        init(_ app: Application, port: Int, _ console: ConsoleClient) throws {
            client = app.client
            self.port = port
            cookie = try #require(console.cookie)
            csrf = try #require(console.csrf)
        }

        func upload(book: Int, _ data: Data) async throws -> ClientResponse {
            let boundary = "----round4\(UUID().uuidString)"
            var body = ByteBuffer()
            body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\n\(csrf)\r\n")
            body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.png\"\r\nContent-Type: image/png\r\n\r\n")
            body.writeBytes(data)
            body.writeString("\r\n--\(boundary)--\r\n")
            let headers: HTTPHeaders = ["Cookie": "\(AdminSession.cookieName)=\(cookie)",
                                        "Content-Type": "multipart/form-data; boundary=\(boundary)"]
            return try await client.post(URI(string: "http://127.0.0.1:\(port)/admin/books/\(book)/cover"), headers: headers) { $0.body = body }
        }

        func get(_ path: String, token: String? = nil) async throws -> ClientResponse {
            var headers = HTTPHeaders()
            if let token { headers.bearerAuthorization = .init(token: token) }
            return try await client.get(URI(string: "http://127.0.0.1:\(port)\(path)"), headers: headers)
        }
    }

    @Test("the cover crash: rounds of concurrent uploads of a 36-MP PNG released together; past the queue an immediate 503 with Retry-After, the rest saved; after each round the server answers a family's catalog and /livez",
          .app(adjust: { $0.coverWorkers = SecurityRound4CoverTests.workers; $0.coverQueue = SecurityRound4CoverTests.queue }))
    func concurrentUploadsInRounds() async throws {
        let app = try app()
        Uploader.noRedirects(app)
        let png = try await Self.bigPNG()
        let parent = try await app.makeParent()
        let perRound = 8
        var books: [Int] = []
        for index in 0..<perRound { books.append(try await app.makeBook("Round Book \(index)")) }
        var saved = 0
        try await RawHTTP.serving(app) { (http: RawHTTP) async throws in
            for round in 1...3 {
                // A fresh editor each round: the per-minute budget is not what this round tests.
                let console = try await app.console(role: .editor)
                try await console.get("/admin/books/\(books[0])/cover")
                let uploader = try Uploader(app, port: http.port, console)
                let answers = try await withThrowingTaskGroup(of: (HTTPStatus, String?, String).self) { group in
                    for book in books {
                        group.addTask {
                            let answer = try await uploader.upload(book: book, png)
                            return (answer.status, answer.headers.first(name: .retryAfter), answer.body.map { String(buffer: $0) } ?? "")
                        }
                    }
                    return try await group.reduce(into: [(HTTPStatus, String?, String)]()) { $0.append($1) }
                }
                let statuses = answers.map(\.0)
                let busy = answers.filter { $0.0 == .serviceUnavailable }
                #expect(statuses.allSatisfy { $0 == .seeOther || $0 == .serviceUnavailable }, "round \(round): \(statuses)")
                #expect(statuses.contains(.seeOther), "round \(round): \(statuses)")
                #expect(!busy.isEmpty, "round \(round): \(statuses) — eight uploads at once, none refused")
                #expect(statuses.filter { $0 == .seeOther }.count <= Self.workers + Self.queue, "round \(round): \(statuses)")
                for (_, retryAfter, html) in busy {
                    #expect(Int(retryAfter ?? "") ?? 0 > 0, "round \(round): a 503 without Retry-After")
                    #expect(html.contains(#"id="file-error""#) && html.contains("try again"), "round \(round)")
                }
                saved += statuses.filter { $0 == .seeOther }.count
                // The server still answers a family and its liveness probe.
                let catalog = try await uploader.get("/api/v1/catalog/books", token: parent.token)
                #expect(catalog.status == .ok, "round \(round): catalog \(catalog.status)")
                #expect(try await uploader.get("/livez").status == .ok, "round \(round)")
            }
        }
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action = 'cover upload'") == saved)
        #expect(try await app.count("SELECT count(*) AS n FROM book_covers") >= 1)
    }

    @Test("with every worker busy, `queue` uploads wait their turn and the others are refused at once: 503, Retry-After, the form with the reason",
          .app(adjust: { $0.coverWorkers = 1; $0.coverQueue = 2 }))
    func queueBound() async throws {
        let app = try app()
        Uploader.noRedirects(app)
        let gate = app.appServices.coverGate
        let png = try await CoverTests.image(400, 300, format: "png")
        let book = try await app.makeBook("Waiting Walrus")
        let console = try await app.console(role: .editor)
        try await console.get("/admin/books/\(book)/cover")
        // The one worker is taken until the test lets it go.
        let (entered, enteredSignal) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await gate.run {
                enteredSignal.yield()
                for await _ in release { break }
            }
        }
        for await _ in entered { break }
        try await RawHTTP.serving(app) { (http: RawHTTP) async throws in
            let uploader = try Uploader(app, port: http.port, console)
            try await withThrowingTaskGroup(of: (HTTPStatus, String?, String).self) { group in
                for _ in 0..<5 {
                    group.addTask {
                        let answer = try await uploader.upload(book: book, png)
                        return (answer.status, answer.headers.first(name: .retryAfter), answer.body.map { String(buffer: $0) } ?? "")
                    }
                }
                // Three answers come while the worker is held: they cannot be the two in line.
                for _ in 0..<3 {
                    let (status, retryAfter, html) = try #require(try await group.next())
                    #expect(status == .serviceUnavailable)
                    #expect(Int(retryAfter ?? "") ?? 0 > 0)
                    #expect(html.contains(#"id="file-error""#) && html.contains("try again"))
                }
                #expect(gate.queued == 2 && gate.refused == 3)
                releaseSignal.yield()
                try await holder.value
                for _ in 0..<2 { #expect(try #require(try await group.next()).0 == .seeOther) }
            }
        }
        #expect(gate.running == 0 && gate.queued == 0)
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action = 'cover upload'") == 2)
    }

    @Test("the budget is reserved before any processing: with the minute's uploads spent, a damaged file is refused for the budget (429, Retry-After), not decoded", .app)
    func budgetBeforeProcessing() async throws {
        let app = try app()
        let book = try await app.makeBook("Spent Sparrow")
        let console = try await app.console(role: .editor)
        let staff = try await app.sql.raw("SELECT id FROM staff_users ORDER BY id DESC LIMIT 1").first()!.decode(column: "id", as: Int.self)
        try await console.get("/admin/books/\(book)/cover")
        let jpeg = try await CoverTests.image(800, 600)
        let damaged = Data(jpeg.prefix(jpeg.count / 2))
        // Nine uploads' worth spent this minute; four at once: one goes on (and is found damaged), three are refused.
        try await SecurityRound4CoverTests.spend(app, staff: staff, uploads: BookCovers.uploadsPerMinute - 1)
        let client = app
        let cookie = console.cookie, csrf = console.csrf
        let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let signed = ConsoleClient(client)
                    signed.cookie = cookie
                    signed.csrf = csrf
                    return try await CoverTests.upload(signed, book: book, damaged).status
                }
            }
            return try await group.reduce(into: [HTTPStatus]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == .unprocessableEntity }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0 == .tooManyRequests }.count == 3, "\(statuses)")
        let refused = try await CoverTests.upload(console, book: book, damaged)
        #expect(refused.status == .tooManyRequests && refused.html.contains("wait a minute"))
        #expect(Int(refused.headers.first(name: .retryAfter) ?? "") ?? 0 > 0)
        #expect(try await app.count("SELECT count(*) AS n FROM book_covers") == 0)
    }

    /// `uploads` of `staff`'s budget spent in the minute now running.
    static func spend(_ app: Application, staff: Int, uploads: Int) async throws {
        try await app.sql.raw("""
            INSERT INTO login_throttle (scope, key, window_start, attempts) VALUES (\(bind: BookCovers.budgetScope), \(bind: String(staff)), now(), \(bind: uploads))
            """).run()
    }

    @Test("a viewer's upload is refused (403) before its body is read: a body declared but never sent gets its answer at once; an editor's declared body over the limit is 413 before it is read", .app)
    func roleBeforeBody() async throws {
        let app = try app()
        let book = try await app.makeBook("Closed Clam")
        let viewer = try await app.console(role: .viewer)
        let editor = try await app.console(role: .editor)
        try await RawHTTP.serving(app) { (http: RawHTTP) async throws in
            func post(_ client: ConsoleClient, length: Int) async throws -> RawHTTP.Answer {
                try await http.send(["POST /admin/books/\(book)/cover HTTP/1.1", "Host: 127.0.0.1:\(http.port)",
                                     "Cookie: \(AdminSession.cookieName)=\(client.cookie ?? "")",
                                     "Content-Type: multipart/form-data; boundary=x", "Content-Length: \(length)"],
                                    body: "--x\r\n")
            }
            // A server that collected the body first would still be waiting for 10 MB (status 0 after `send`'s
            // ten-minute hang guard: the refusal must come before the body, however slow the machine).
            let refused = try await post(viewer, length: 10 * 1_048_576)
            #expect(refused.status == 403, "\(refused.text.prefix(200))")
            #expect(try await post(editor, length: 12 * 1_048_576).status == 413)
        }
        #expect(try await app.count("SELECT count(*) AS n FROM book_covers") == 0)
    }
}
