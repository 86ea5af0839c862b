@testable import App
import Foundation
import PostgresNIO
import SQLKit
import Testing
import Vapor

/// The audit log's typed actions (`AuditAction`, the `kind` column of migration 0039): every kind
/// the app writes is read back as itself, the database refuses any other, and the rows written
/// before the column got the kind their words name.
@Suite("Console: the audit log's typed actions")
struct AuditActionTests {
    /// What the app writes: every kind but `legacy`, which only the migration gives.
    static let written = AuditAction.allCases.filter { $0 != .legacy }

    static func entries(_ app: Application, table: String? = nil, record: Int? = nil, staff: Int? = nil) async throws -> [AuditQueries.Row] {
        try await AuditQueries.entries(.init(visibleTables: nil, staffID: staff, table: table, record: record), limit: 100, offset: 0, on: app.sql)
    }

    @Test("every kind the app writes is stored and read back as itself, with its words, on the audit page too", .app)
    func roundTrip() async throws {
        let app = try app()
        let email = "writer@storytime.test"
        let client = try await app.console(role: .admin, email: email)
        let staffID = try await app.count("SELECT id AS n FROM staff_users WHERE email = \(bind: email)")
        let staff = StaffUser(id: staffID, email: email, role: .admin)
        // Through the writer every console path uses, one row per kind.
        for (index, kind) in Self.written.enumerated() {
            try await AuditWriter(staff: staff).record(kind, detail: "7", table: "catalog", ids: [index + 1], before: [:], after: [:], on: app.sql)
        }
        let rows = try await Self.entries(app, staff: staffID).reversed()
        #expect(rows.map(\.kind) == Self.written)
        #expect(rows.map(\.action) == Self.written.map { $0.words("7") })
        #expect(rows.compactMap(\.recordId) == Array(1...Self.written.count))
        let page = try await client.get("/admin/audit?staff=\(staffID)").html
        for kind in Self.written { #expect(page.contains(kind.words("7")), "\(kind)") }

        // The schedule's statement: each transition once (the unique index goes by the kind).
        let book = try await app.makeBook("Came And Went")
        try await app.sql.raw("UPDATE books SET publish_at = now() - interval '2 days', unpublish_at = now() - interval '1 day' WHERE id = \(bind: book)").run()
        #expect(try await ScheduleAudit.record(on: app.sql, at: app.now) == 2)
        #expect(try await ScheduleAudit.record(on: app.sql, at: app.now) == 0)
        let scheduled = try await Self.entries(app, table: "books", record: book)
        #expect(scheduled.map(\.kind) == [.scheduledLeft, .scheduledLive])
        #expect(scheduled.map(\.action) == ["scheduled: left the catalog", "scheduled: went live"])

        // The video pipeline's statement: an event, and an admin's replay of it.
        let filmed = try await app.makeBook("Filmed Later", video: nil)
        let body = VideoPipelineTests.event("created", book: filmed)
        let event = try VideoEvent(json: Data(body.utf8))
        #expect(try await VideoEvents.apply(event, webhookID: "msg_audit", payload: Data(body.utf8), on: app.sql) == .applied)
        #expect(try await VideoEvents.apply(event, webhookID: "msg_audit", payload: Data(), replaying: true, replayedBy: staff, on: app.sql) == .applied)
        let piped = try await Self.entries(app, table: "video_assets")
        #expect(piped.map(\.kind) == [.pipelineReplay, .pipeline])
        #expect(piped.map(\.action) == ["pipeline replay: video.asset.created", "pipeline: video.asset.created"])
    }

    @Test("the database refuses a kind the app does not know, a row without one, and legacy on a new row; its list is the enum's", .app)
    func constraint() async throws {
        let app = try app()
        func insert(_ kind: String?) async throws {
            try await app.sql.raw("""
                INSERT INTO audit_log (staff_email, kind, action, table_name, record_id) VALUES ('x', \(bind: kind), 'approve', 'books', 1)
                """).run()
        }
        for (kind, constraint) in [("approve", "audit_log_kind"), ("Update", "audit_log_kind"), ("", "audit_log_kind"), ("legacy", "audit_log_kind_legacy")] {
            do {
                try await insert(kind)
                Issue.record("kind \(kind) was stored")
            } catch {
                #expect(ConstraintViolation(error)?.kind == .check && ConstraintViolation(error)?.constraint == constraint, "\(kind): \(String(reflecting: error))")
            }
        }
        do {
            try await insert(nil)
            Issue.record("a row without a kind was stored")
        } catch {
            #expect(ConstraintViolation(error)?.kind == .notNull)
        }
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log") == 0)
        // Every kind of the enum is allowed, and only those: the CHECK lists exactly its raw values.
        let definition = try await app.sql.raw("SELECT pg_get_constraintdef(oid) AS d FROM pg_constraint WHERE conname = 'audit_log_kind'")
            .first()!.decode(column: "d", as: String.self)
        let listed = definition.split(separator: "'", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        #expect(listed.sorted() == AuditAction.allCases.map(\.rawValue).sorted())
    }

    @Test("migration 0039 gives the rows written before it the kind their words name; words no kind has become legacy, shown and never reverted")
    func backfill() async throws {
        let name = try await TestDatabase.createEmpty()
        let files = try Migrator(directory: TestDatabase.projectDirectory + "migrations").files()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        func copy(_ wanted: (Int) -> Bool) throws {
            for file in files where wanted(Int(file.version)!) {
                try file.sql.write(toFile: folder + "/\(file.version)_\(file.name).sql", atomically: true, encoding: .utf8)
            }
        }
        // The words every kind is written with, an older batch's, and one typed in by hand.
        let samples: [(AuditAction, String)] = Self.written.map { ($0, $0.words("12")) }
            + [(.batch, "batch: remove from category"), (.legacy, "fixed by hand"), (.legacy, "revert #x")]
        let kinds = try await DirectConnection.open(url: TestDatabase.url(for: name), logger: TestDatabase.logger, connectTimeout: TestDatabase.connectTimeout) { connection in
            try copy { $0 < 39 }
            try await Migrator(directory: folder).migrate(on: connection, logger: TestDatabase.logger)
            for (index, sample) in samples.enumerated() {
                _ = try await connection.query("""
                    INSERT INTO audit_log (staff_email, action, table_name, record_id) VALUES ('x', \(sample.1), 'books', \(index))
                    """, logger: TestDatabase.logger)
            }
            try copy { $0 >= 39 }
            try await Migrator(directory: folder).migrate(on: connection, logger: TestDatabase.logger)
            var kinds: [String] = []
            for try await kind in try await connection.query("SELECT kind FROM audit_log ORDER BY record_id", logger: TestDatabase.logger).decode(String.self) {
                kinds.append(kind)
            }
            // The old legacy rows stay; a new one is refused.
            await #expect(throws: (any Error).self) {
                _ = try await connection.query("INSERT INTO audit_log (staff_email, kind, action, table_name) VALUES ('x', 'legacy', 'x', 'books')", logger: TestDatabase.logger)
            }
            return kinds
        }
        #expect(kinds == samples.map(\.0.rawValue))
        try await TestDatabase.drop(name)
    }
}
