@testable import App
import Foundation
import SQLKit
import Testing
import Vapor

/// `DATABASE_READ_URL`: the parent catalog's rows come from the replica only once it has replayed
/// the catalog version the request read from the primary. A second database stands in for the
/// replica, its rows told apart by their titles, its replay position set by hand.
@Suite("Read replica")
struct ReadReplicaTests {
    @Test("a replica that has replayed the version answers; a lagging or unreachable one is skipped for the primary", .timeLimit(.minutes(10)))
    func lagRule() async throws {
        let primary = try await TestDatabase.create(), replica = try await TestDatabase.create()
        let app = try await Application.make(.testing)
        app.logger.logLevel = .critical
        app.directory = DirectoryConfiguration(workingDirectory: TestDatabase.projectDirectory)
        var settings = testSettings(database: primary)
        settings.databaseReadURL = TestDatabase.url(for: replica)
        do {
            try await configure(app, settings: settings)
            let replicaSQL = (app.databases.database(.psqlRead, logger: app.logger, on: app.eventLoopGroup.any()) as! any SQLDatabase)
            for sql in [app.sql, replicaSQL] {
                try await sql.raw("INSERT INTO books (id, title, status) VALUES (1, 'Owl', 'active')").run()
                try await sql.raw("INSERT INTO rights_windows (book_id, starts_at) VALUES (1, now() - interval '1 day')").run()
                try await sql.raw("INSERT INTO video_assets (book_id, status, duration_seconds) VALUES (1, 'ready', 60)").run()
            }
            try await replicaSQL.raw("UPDATE books SET title = 'Owl (replica)' WHERE id = 1").run()
            func replay() async throws {
                let version = try await app.sql.raw("SELECT version FROM catalog_state").first()!.decode(column: "version", as: Int.self)
                try await replicaSQL.raw("UPDATE catalog_state SET version = \(bind: version)").run()
            }
            let token = try await app.makeParent().token
            func title(_ path: String) async throws -> String? {
                let response = try await app.get(path, token: token)
                return try (response.dataObject["title"] as? String) ?? (response.dataArray.first?["title"] as? String)
            }
            try await replay()
            #expect(try await title("/api/v1/catalog/books/1") == "Owl (replica)")
            #expect(try await title("/api/v1/catalog/books?q=owl") == "Owl (replica)")
            // A commit on the primary the replica has not replayed: the next answer has it.
            try await app.sql.raw("UPDATE books SET title = 'Owl, revised' WHERE id = 1").run()
            #expect(try await title("/api/v1/catalog/books/1") == "Owl, revised")
            #expect(try await title("/api/v1/catalog/books?q=owl") == "Owl, revised")
            // Replayed (here: by hand), the replica answers again.
            try await replicaSQL.raw("UPDATE books SET title = 'Owl, revised (replica)' WHERE id = 1").run()
            try await replay()
            #expect(try await title("/api/v1/catalog/books?q=revised") == "Owl, revised (replica)")
            var scrape = [UInt8]()
            app.appServices.metrics.registry.emit(into: &scrape)
            let metrics = String(decoding: scrape, as: UTF8.self)
            #expect(metrics.contains(#"storytime_catalog_sql_reads_total{database="replica"} 3"#)
                    && metrics.contains(#"storytime_catalog_sql_reads_total{database="primary"} 2"#), "\(metrics)")
        } catch {
            Issue.record(error, "\(String(reflecting: error))")
        }
        try await app.asyncShutdown()
        // Unreachable: the primary answers.
        let second = try await Application.make(.testing)
        second.logger.logLevel = .critical
        second.directory = DirectoryConfiguration(workingDirectory: TestDatabase.projectDirectory)
        settings.databaseReadURL = "postgres://nobody:nothing@127.0.0.1:9/nowhere"
        do {
            try await configure(second, settings: settings)
            let response = try await second.get("/api/v1/catalog/books/1", token: try await second.makeParent().token)
            let title = try response.dataObject["title"] as? String
            #expect(response.status == .ok && title == "Owl, revised")
        } catch {
            Issue.record(error, "\(String(reflecting: error))")
        }
        try await second.asyncShutdown()
        try await TestDatabase.drop(primary)
        try await TestDatabase.drop(replica)
    }
}
