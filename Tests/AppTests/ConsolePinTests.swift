@testable import App
import Foundation
import SQLKit
import Testing
import Vapor

/// Pins what the console does — pages, statements sent, CSV bytes, audit rows — so its insides can
/// be rebuilt with the behaviour unchanged. The transcript of one fixed session is compared with
/// `Golden/console.txt`; `STORYTIME_UPDATE_GOLDEN=1` rewrites the file after an intended change
/// (review its diff like code).
@Suite("Console behaviour pinned", .app)
struct ConsolePinTests {
    static let goldenPath = TestDatabase.projectDirectory + "Tests/AppTests/Golden/console.txt"

    @Test("one session through every resource gives the recorded pages, statement counts, CSV and audit rows")
    func transcript() async throws {
        let app = try app()
        let transcript = Transcript()
        let harper = try await app.makePublisher("Harper")
        try await app.makePublisher("Puffin")
        let bedtime = try await app.makeCategory("Bedtime", slug: "bedtime", order: 1)
        let animals = try await app.makeCategory("Animals", slug: "animals", order: 2)
        let moon = try await app.makeBook("Goodnight Moon", author: "Margaret", publisher: harper, categories: [bedtime])
        try await app.makeBook("=SUM(A1)", author: "Ann, Smith", status: "draft", video: nil, rights: .none)
        try await app.makeBook("The Owl", author: "Olive", publisher: harper, categories: [animals], video: "failed", rights: .expired)
        try await app.makeBook("Bear Hunt", author: "Michael", ages: 2...5, video: "processing", rights: .upcoming)
        let client = try await app.console(role: .admin, email: "pin-admin@storytime.test")

        func get(_ path: String) async throws {
            var page: ConsoleClient.Page?
            let statements = try await app.countQueries { page = try await client.get(path) }
            transcript.page("GET \(path)", page!, statements: statements)
        }
        func post(_ path: String, _ fields: [(String, String)]) async throws {
            var page: ConsoleClient.Page?
            let statements = try await app.countQueries { page = try await client.post(path, fields) }
            transcript.page("POST \(path) \(fields.map { "\($0.0)=\($0.1)" }.joined(separator: "&"))", page!, statements: statements)
        }

        for path in ["/admin/books", "/admin/books?status=active&sort=-title", "/admin/books?q=moon&per_page=25",
                     "/admin/books?category=\(bedtime)&video=ready", "/admin/books?rights=unavailable&sort=updated_at",
                     "/admin/books?publisher=\(harper)&age=4&page=2", "/admin/categories", "/admin/publishers",
                     "/admin/video_assets", "/admin/video_assets?status=failed", "/admin/staff_users",
                     "/admin/books/\(moon)/rights_windows", "/admin/books/\(moon)", "/admin/books/\(moon)/edit",
                     "/admin/books/new", "/admin/categories/\(bedtime)", "/admin/video_assets/1", "/admin/staff_users/1",
                     "/admin/books/\(moon)/rights_windows/new", "/admin/books/\(moon)/delete", "/admin/books/999"] {
            try await get(path)
        }
        for path in ["/admin/books/export.csv", "/admin/books/export.csv?status=active", "/admin/categories/export.csv",
                     "/admin/video_assets/export.csv", "/admin/books/\(moon)/rights_windows/export.csv"] {
            try await get(path)
        }
        // Writes: create (invalid, then valid), update, nested create, batches, delete.
        let book = [("title", "Pinned Book"), ("author", "Pat"), ("description", "About pins"), ("age_min", "2"), ("age_max", "6"),
                    ("language", "en"), ("cover_image_url", ""), ("publisher_id", String(harper)), ("status", "active"),
                    ("category_ids[]", String(bedtime))]
        try await post("/admin/books", book.map { $0.0 == "age_max" ? ($0.0, "1") : $0 })
        try await post("/admin/books", book)
        try await post("/admin/books/5", book.map { $0.0 == "title" ? ($0.0, "Pinned Book, revised") : $0 } + [("category_ids[]", String(animals))])
        try await post("/admin/books/5/rights_windows", [("starts_at", "2026-01-01T00:00"), ("ends_at", "2025-01-01T00:00")])
        try await post("/admin/books/5/rights_windows", [("starts_at", "2026-01-01T00:00"), ("ends_at", "")])
        try await post("/admin/categories", [("name", "Space & Stars"), ("slug", ""), ("display_order", "3"), ("icon_name", "")])
        try await post("/admin/categories", [("name", "Bedtime"), ("slug", "bedtime"), ("display_order", "3"), ("icon_name", "")])
        try await post("/admin/books/batch", [("action", "add_category"), ("target_add_category", String(animals)),
                                              ("ids[]", String(moon)), ("ids[]", "2"), ("ids[]", "3")])
        try await post("/admin/books/batch", [("action", "set_status"), ("target_set_status", "archived"), ("ids[]", "2"), ("ids[]", "4")])
        try await post("/admin/books/batch", [("action", "remove_category"), ("target_remove_category", String(animals)), ("ids[]", "3")])
        try await post("/admin/books/batch", [("action", "set_status"), ("ids[]", "2")])
        try await post("/admin/video_assets", [("book_id", "2"), ("status", "ready"), ("duration_seconds", ""), ("has_captions", "on")])
        try await post("/admin/video_assets", [("book_id", "2"), ("status", "ready"), ("duration_seconds", "125"), ("has_captions", "on")])
        try await post("/admin/staff_users/1", [("email", "pin-admin@storytime.test"), ("role", "admin")])
        try await post("/admin/publishers/2/delete", [])
        try await post("/admin/publishers/1/delete", [])
        try await post("/admin/books/4/delete", [])
        try await get("/admin/books?sort=title")
        try await get("/admin/books/5")

        let audit = try await app.sql.raw("""
            SELECT staff_email, action, table_name, record_id, before::text AS before, after::text AS after FROM audit_log ORDER BY id
            """).all()
        for row in audit {
            transcript.line("AUDIT " + (try ["staff_email", "action", "table_name"].map { try row.decode(column: $0, as: String.self) }
                + [String(try row.decode(column: "record_id", as: Int.self)),
                   try row.decode(column: "before", as: String?.self) ?? "-", try row.decode(column: "after", as: String?.self) ?? "-"])
                .joined(separator: " | "))
        }
        try transcript.compare(with: Self.goldenPath)
    }
}

/// The recorded session: one block per request, volatile parts (CSRF tokens, clock times) masked.
final class Transcript {
    private(set) var lines: [String] = []

    func line(_ text: String) { lines.append(Self.masked(text)) }

    func page(_ request: String, _ page: ConsoleClient.Page, statements: Int) {
        line("== \(request) → \(page.status.code) · \(statements) statements" + (page.location.map { " · Location: \($0)" } ?? ""))
        for text in page.html.split(separator: "\n", omittingEmptySubsequences: true) {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if !trimmed.isEmpty { line("  " + trimmed) }
        }
    }

    static let volatile: [(pattern: String, mask: String)] = [
        (#"name="csrf_token" value="[^"]*""#, #"name="csrf_token" value="…""#),
        (#"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:\d{2})?)?"#, "<time>"),
        (#"\d{4}-\d{2}-\d{2}"#, "<date>"),
    ]

    static func masked(_ text: String) -> String {
        volatile.reduce(text) { $0.replacingOccurrences(of: $1.pattern, with: $1.mask, options: .regularExpression) }
    }

    func compare(with path: String) throws {
        let recorded = lines.joined(separator: "\n") + "\n"
        if ProcessInfo.processInfo.environment["STORYTIME_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try recorded.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        let golden = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let now = recorded.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let first = (0..<min(golden.count, now.count)).first { golden[$0] != now[$0] }
            ?? (golden.count == now.count ? nil : min(golden.count, now.count))
        if let first {
            let request = now[..<min(first + 1, now.count)].last { $0.hasPrefix("== ") } ?? "(start)"
            Issue.record("""
                the console's transcript differs from Golden/console.txt at line \(first + 1), in \(request)
                  recorded: \(first < golden.count ? golden[first] : "(end)")
                  now:      \(first < now.count ? now[first] : "(end)")
                """)
        }
    }
}
