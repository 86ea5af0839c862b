@testable import App
import Foundation
import SQLKit
import Testing

/// The backup and restore runbook of docs/operations.md, exercised: pg_dump of a live database, pg_restore into
/// an empty one, and the app serving the copy with the same catalog and libraries.
@Suite("Backup and restore")
struct BackupTests {
    static let tables = ["books", "publishers", "categories", "book_categories", "rights_windows", "video_assets", "parents", "children",
                         "library_entries", "plays", "child_controls", "staff_users", "audit_log", "schema_migrations", "catalog_state"]

    /// Per table, its row count and a hash of every row in a stable order.
    static func fingerprint(_ sql: any SQLDatabase) async throws -> [String: String] {
        var result: [String: String] = [:]
        for table in tables {
            let row = try await sql.raw("""
                SELECT count(*)::text || ':' || COALESCE(md5(string_agg(t::text, '|' ORDER BY t::text)), '') AS f FROM \(unsafeRaw: table) t
                """).first()!
            result[table] = try row.decode(column: "f", as: String.self)
        }
        return result
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/" + tool)
        process.arguments = arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let error = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, error)
    }

    @Test("pg_dump of a running catalog, pg_restore into an empty database: every table identical, and the app serves it")
    func dumpAndRestore() async throws {
        let dump = FileManager.default.temporaryDirectory.appendingPathComponent("storytime-\(UUID().uuidString).dump").path
        defer { try? FileManager.default.removeItem(atPath: dump) }
        var before: [String: String] = [:]
        var total = 0
        try await withApp(engine: true) { app in
            let seeder = DemoSeeder(books: 300, reference: Date(), seedsDirectory: TestDatabase.projectDirectory + "seeds",
                                    hashPassword: { try $0.hashedForTests() })
            _ = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in }
            let parent = try await app.makeParent(password: "restore me please")
            try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) SELECT \(bind: parent.children[0]), id FROM books WHERE status = 'active' ORDER BY id LIMIT 5").run()
            #expect(try await app.send(.PUT, "/api/v1/children/\(parent.children[0])/controls", token: parent.token, json: #"{"max_age": 6}"#).status == .ok)
            before = try await Self.fingerprint(app.sql)
            try await app.appServices.catalogEngine.build(on: app.db)
            total = app.appServices.catalogEngine.bookCount
            let name = try await app.sql.raw("SELECT current_database() AS d").first()!.decode(column: "d", as: String.self)
            let dumped = try Self.run("pg_dump", ["--format=custom", "--no-owner", "--file", dump, TestDatabase.url(for: name)])
            #expect(dumped.status == 0, "\(dumped.error)")
        }
        #expect(before["books"]?.hasPrefix("300:") == true && before["library_entries"]?.hasPrefix("0:") == false)
        let restored = try await TestDatabase.createEmpty()
        let result = try Self.run("pg_restore", ["--no-owner", "--exit-on-error", "--dbname", TestDatabase.url(for: restored), dump])
        #expect(result.status == 0, "\(result.error)")
        try await withApp(engine: true, database: restored) { app in
            #expect(try await Self.fingerprint(app.sql) == before)
            #expect(app.appServices.catalogEngine.bookCount == total && total > 0)
            // The restored copy serves: the same parent signs in and sees their library and controls.
            let email = try await app.sql.raw("SELECT email FROM parents ORDER BY id DESC LIMIT 1").first()!.decode(column: "email", as: String.self)
            let token = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email": "\#(email)", "password": "restore me please"}"#)
            #expect(token.status == .ok)
            let bearer = try token.json["access_token"] as? String ?? ""
            let child = try await app.sql.raw("SELECT child_id FROM child_controls").first()!.decode(column: "child_id", as: Int.self)
            #expect(try await app.get("/api/v1/children/\(child)/library", token: bearer).meta["total_count"] == 5)
            #expect(try await app.get("/api/v1/children/\(child)/controls", token: bearer).dataObject["max_age"] as? Int == 6)
        }
    }
}
