@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Covers: uploads decoded and checked by libvips (good, hostile, huge), renditions at fixed
/// widths without metadata, content-hash URLs served immutable, the API's `cover` object the same
/// from the engine and SQL, the console's thumbnails, the per-minute budget.
@Suite("Covers")
struct CoverTests {
    /// An image made by libvips: `width`×`height` of one colour, saved as `format` (jpg, png, webp).
    static func image(_ width: Int, _ height: Int, format: String = "jpg", rgb: (Int, Int, Int) = (200, 100, 50)) async throws -> Data {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cover-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let black = folder.appendingPathComponent("black.v").path, colour = folder.appendingPathComponent("colour.v").path
        let out = folder.appendingPathComponent("image.\(format)").path
        for arguments in [["vips", "black", black, String(width), String(height), "--bands", "3"],
                          ["vips", "linear", black, colour, "1 1 1", "\(rgb.0) \(rgb.1) \(rgb.2)", "--uchar"],
                          ["vips", "copy", colour, out]] {
            let run = try await ChildProcess.run(arguments)
            guard run.status == 0 else { throw TestFailure("\(arguments): \(run.error)") }
        }
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    /// `jpeg` with an EXIF APP1 segment right after its SOI saying "rotate 90°" (orientation 6)
    /// and carrying a description a rendition must not keep.
    static func rotated(_ jpeg: Data) -> Data {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v >> 16) + u16(v & 0xFFFF) }
        let description = Array("SECRET-MARKER".utf8) + [0]
        let ifd = u16(2) + u16(0x010E) + u16(2) + u32(description.count) + u32(38) + u16(0x0112) + u16(3) + u32(1) + u16(6) + u16(0) + u32(0)
        let payload = Array("Exif".utf8) + [0, 0] + Array("MM".utf8) + [0, 0x2A] + u32(8) + ifd + description
        return Data(jpeg.prefix(2)) + Data([0xFF, 0xE1] + u16(payload.count + 2) + payload) + Data(jpeg.dropFirst(2))
    }

    /// PNG's chunk checksum (CRC-32, as zlib computes it).
    static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xEDB8_8320 : 0) }
        }
        return ~crc
    }

    static func upload(_ console: ConsoleClient, book: Int, _ data: Data, name: String = "cover.jpg", csrf: Bool = true) async throws -> ConsoleClient.Page {
        try await console.upload("/admin/books/\(book)/cover", file: name, data, type: "image/jpeg", csrf: csrf)
    }

    @Test("a good upload: renditions at 160/320/640/1280 in WebP and JPEG, no wider than the original, metadata gone; immutable URLs; the API's cover from engine and SQL alike; thumbnails in the console", .app)
    func goodUpload() async throws {
        let app = try app()
        let book = try await app.makeBook("Painted Fox")
        let console = try await app.console(role: .editor)
        let page = try await Self.upload(console, book: book, try await Self.image(1600, 1000))
        #expect(page.status == .seeOther, "\(page.status) \(page.html.prefix(500))")
        let row = try #require(try await app.sql.raw("SELECT width, height, dominant_color, files, api_json FROM book_covers WHERE book_id = \(bind: book)").first())
        #expect(try row.decode(column: "width", as: Int.self) == 1600 && row.decode(column: "height", as: Int.self) == 1000)
        #expect(try row.decode(column: "dominant_color", as: String.self) == "#c86432")
        let sizes = try await app.sql.raw("""
            SELECT f.width, f.height, f.content_type FROM book_covers bc CROSS JOIN unnest(bc.files) AS n(name)
              JOIN cover_files f ON f.hash = split_part(n.name, '.', 1) WHERE bc.book_id = \(bind: book) ORDER BY f.width, f.content_type
            """).all().map { "\(try $0.decode(column: "width", as: Int.self))x\(try $0.decode(column: "height", as: Int.self)) \(try $0.decode(column: "content_type", as: String.self))" }
        #expect(sizes == ["160x100 image/jpeg", "160x100 image/webp", "320x200 image/jpeg", "320x200 image/webp",
                          "640x400 image/jpeg", "640x400 image/webp", "1280x800 image/jpeg", "1280x800 image/webp"], "\(sizes)")
        // The API: the same cover object from the engine and from SQL.
        let parent = try await app.makeParent()
        var answers: [String] = []
        for engine in [false, true] {
            app.settings.catalogEngine = engine
            if engine { try await app.appServices.catalogEngine.build(on: app.db) }
            let detail = try await app.get("/api/v1/catalog/books/\(book)", token: parent.token)
            let cover = try #require(try detail.dataObject["cover"] as? [String: Any])
            #expect(cover["width"] as? Int == 1600 && cover["height"] as? Int == 1000 && cover["dominant_color"] as? String == "#c86432")
            let renditions = try #require(cover["renditions"] as? [[String: Any]])
            #expect(renditions.count == 8 && renditions.allSatisfy { ($0["url"] as? String)?.hasPrefix("/covers/") == true })
            let list = try await app.get("/api/v1/catalog/books?q=painted", token: parent.token).body.string
            answers.append(String(list.split(separator: "\"cover\":", maxSplits: 1).last?.prefix(900) ?? ""))
        }
        #expect(answers[0] == answers[1] && answers[0].contains("dominant_color"))
        // Served under its hash, immutable, with an ETag; 304 when the client has it; unknown names 404.
        let first = try #require(try row.decode(column: "files", as: [String].self).first)
        let served = try await app.get("/covers/\(first)")
        #expect(served.status == .ok && served.headers.contentType?.description == "image/webp")
        #expect(served.headers.first(name: .cacheControl) == "public, max-age=31536000, immutable")
        let etag = try #require(served.headers.first(name: .eTag))
        #expect(try await app.get("/covers/\(first)", headers: ["If-None-Match": etag]).status == .notModified)
        #expect(try await app.get("/covers/\(String(repeating: "0", count: 32)).webp").status == .notFound)
        #expect(try await app.get("/covers/\(first.replacingOccurrences(of: ".webp", with: ".jpg"))").status == .notFound)
        #expect(try await app.get("/covers/..%2F..%2Fetc%2Fpasswd").status == .notFound)
        // The console: a lazy thumbnail with its box in the list, the cover on the book's page, the cover page.
        let list = try await console.get("/admin/books").html
        #expect(list.contains(#"<img class="thumb" src="/covers/\#(first)" width="28" height="28" loading="lazy" alt="">"#))
        #expect(try await console.get("/admin/books/\(book)").html.contains(#"<img class="cover" src="/covers/"#))
        let coverPage = try await console.get("/admin/books/\(book)/cover").html
        #expect(coverPage.contains("1600 × 1000 pixels") && coverPage.contains("#c86432"))
        // Audited; removal takes it out of the API.
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE table_name = 'books' AND record_id = \(bind: book) AND action = 'cover upload'") == 1)
        #expect(try await console.post("/admin/books/\(book)/cover/remove", []).status == .seeOther)
        app.settings.catalogEngine = false
        #expect(try await app.get("/api/v1/catalog/books/\(book)", token: parent.token).dataObject["cover"] is NSNull)
    }

    @Test("EXIF orientation is applied and then stripped with all metadata; PNG and WebP are taken", .app)
    func orientation() async throws {
        let app = try app()
        let book = try await app.makeBook("Turned Tortoise")
        let console = try await app.console(role: .editor)
        let photo = Self.rotated(try await Self.image(400, 200))
        #expect(photo.range(of: Data("SECRET-MARKER".utf8)) != nil)
        let uploaded = try await Self.upload(console, book: book, photo)
        #expect(uploaded.status == .seeOther, "\(uploaded.status): \(uploaded.html.components(separatedBy: "file-error").last?.prefix(300) ?? "")")
        let row = try #require(try await app.sql.raw("SELECT width, height FROM book_covers WHERE book_id = \(bind: book)").first())
        #expect(try row.decode(column: "width", as: Int.self) == 200 && row.decode(column: "height", as: Int.self) == 400)
        let files = try await app.sql.raw("""
            SELECT f.width, f.height, f.bytes FROM book_covers bc CROSS JOIN unnest(bc.files) AS n(name)
              JOIN cover_files f ON f.hash = split_part(n.name, '.', 1) WHERE bc.book_id = \(bind: book)
            """).all()
        #expect(files.count == 2)   // 160 wide in two formats: no other fixed width up to the original's 200
        for file in files {
            #expect(try file.decode(column: "width", as: Int.self) == 160 && file.decode(column: "height", as: Int.self) == 320)
            #expect(try file.decode(column: "bytes", as: Data.self).range(of: Data("SECRET-MARKER".utf8)) == nil)
        }
        for format in ["png", "webp"] {
            let other = try await app.makeBook("Format \(format)")
            #expect(try await Self.upload(console, book: other, try await Self.image(300, 300, format: format), name: "c.\(format)").status == .seeOther)
        }
    }

    @Test("hostile and broken files are the form again with the reason, and nothing is stored: text, a GIF, a polyglot, a decompression bomb, a truncated JPEG, more than 10 MB", .app)
    func hostileUploads() async throws {
        let app = try app()
        let book = try await app.makeBook("Careful Crow")
        let console = try await app.console(role: .editor)
        let jpeg = try await Self.image(800, 600)
        let png = try await Self.image(64, 64, format: "png")
        // A PNG whose header (checksum right) says 30,000 × 30,000 over 64 × 64 pixels' data.
        var header = Array(png[12..<29])   // "IHDR" and its 13 bytes
        header.replaceSubrange(4..<12, with: [0, 0, 0x75, 0x30, 0, 0, 0x75, 0x30])
        let crc = Self.crc32(header)
        let checksum: [UInt8] = [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
        var bomb = Data(png.prefix(12))
        bomb.append(contentsOf: header)
        bomb.append(contentsOf: checksum)
        bomb.append(png.dropFirst(33))
        let cases: [(String, Data, String)] = [
            ("text", Data("not an image at all".utf8), "not a JPEG, PNG or WebP"),
            ("gif", Data("GIF89a".utf8) + Data(repeating: 0, count: 100), "not a JPEG, PNG or WebP"),
            ("png head, jpeg body", Data(png.prefix(8)) + jpeg, "libvips"),
            ("riff webp head, jpeg body", Data("RIFF\u{0}\u{0}\u{0}\u{0}WEBP".utf8) + jpeg, "libvips"),
            ("bomb", bomb, "30000 × 30000 pixels"),
            ("truncated", Data(jpeg.prefix(jpeg.count / 2)), "damaged or cut short"),
            ("huge", jpeg + Data(repeating: 0, count: 10 * 1024 * 1024), "larger than 10 MB"),
            ("empty", Data(), "Choose an image file"),
        ]
        for (name, data, message) in cases {
            let page = try await Self.upload(console, book: book, data)
            #expect(page.status == .unprocessableEntity, "\(name): \(page.status)")
            #expect(page.html.contains(#"class="error" id="file-error""#) && page.html.contains(message),
                    "\(name): \(page.html.components(separatedBy: "file-error").last?.prefix(300) ?? "")")
        }
        #expect(try await app.count("SELECT count(*) AS n FROM book_covers") == 0)
        #expect(try await app.count("SELECT count(*) AS n FROM cover_files") == 0)
        // Without the form's token, or as a viewer: refused before anything is read.
        #expect(try await Self.upload(console, book: book, jpeg, csrf: false).status == .forbidden)
        let viewer = try await app.console(role: .viewer)
        #expect(try await Self.upload(viewer, book: book, jpeg).status == .forbidden)
        // An unknown book: 404 after the work, nothing kept.
        #expect(try await Self.upload(console, book: 9_999_999, jpeg).status == .notFound)
        #expect(try await app.count("SELECT count(*) AS n FROM book_covers") == 0)
    }

    @Test("uploads per staff user per minute are limited, counted across instances in PostgreSQL", .app)
    func uploadBudget() async throws {
        let app = try app()
        let book = try await app.makeBook("Busy Beaver")
        let console = try await app.console(role: .editor)
        let staff = try await app.sql.raw("SELECT id FROM staff_users ORDER BY id DESC LIMIT 1").first()!.decode(column: "id", as: Int.self)
        try await SecurityRound4CoverTests.spend(app, staff: staff, uploads: BookCovers.uploadsPerMinute)
        let refused = try await Self.upload(console, book: book, try await Self.image(200, 200))
        #expect(refused.status == .tooManyRequests && refused.html.contains("wait a minute"))
        try await app.sql.raw("UPDATE login_throttle SET window_start = now() - interval '2 minutes' WHERE scope = \(bind: BookCovers.budgetScope)").run()
        #expect(try await Self.upload(console, book: book, try await Self.image(200, 200)).status == .seeOther)
    }
}
