@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Copies of one video webhook delivered at once: applied once, `duplicate` otherwise, never an
/// error — and the copies wait for the first without holding the pool's connections.
@Suite("Video webhook races")
struct VideoDeliveryRaceTests {
    static func ready(book: Int) -> String {
        VideoPipelineTests.event("ready", book: book, at: Date().addingTimeInterval(-60), data: #", "duration_seconds": 200"#)
    }

    static func sendCopies(_ app: Application, _ body: String, id: String, count: Int) async throws -> [String] {
        let timestamp = Int(Date().timeIntervalSince1970)
        return try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<count {
                group.addTask { VideoPipelineTests.outcome(try await VideoPipelineTests.send(app, body, id: id, timestamp: timestamp)) }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
    }

    @Test("three rounds of eight copies at once: each applied once, the rest duplicate; one event and one audit row each", .app)
    func rounds() async throws {
        let app = try app()
        for round in 0..<3 {
            let book = try await app.makeBook("Race \(round)", video: nil)
            let outcomes = try await Self.sendCopies(app, Self.ready(book: book), id: "msg_race_\(round)", count: 8)
            #expect(outcomes.sorted() == ["applied"] + Array(repeating: "duplicate", count: 7), "round \(round): \(outcomes)")
            #expect(try await app.count("SELECT count(*) AS n FROM video_events WHERE book_id = \(bind: book)") == 1)
            #expect(try await VideoPipelineTests.asset(app, book: book).status == "ready")
        }
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE table_name = 'video_assets' AND staff_email = \(bind: VideoEvents.auditName)") == 3)
    }

    @Test("while the first copy waits on a lock, the seven others wait without a connection (a pool of two per loop)",
          .app(adjust: { $0.databasePoolPerLoop = 2 }))
    func copiesHoldNoConnection() async throws {
        let app = try app()
        let book = try await app.makeBook("Blocked Badger", video: nil)
        let logger = TestDatabase.logger
        let outcomes = try await DirectConnection.open(url: app.settings.databaseURL, logger: logger, connectTimeout: TestDatabase.connectTimeout) { other in
            // Another writer of the catalog holds its version row: the first copy's change log waits for it.
            _ = try await other.query("BEGIN", logger: logger)
            _ = try await other.query("SELECT version FROM catalog_state FOR UPDATE", logger: logger)
            let copies = Task { try await Self.sendCopies(app, Self.ready(book: book), id: "msg_blocked", count: 8) }
            // Until PostgreSQL says the first waits and the seven copies wait here (no clock: each turn is a statement).
            var locked = 0
            for _ in 0..<20_000 where locked == 0 || app.appServices.videoDeliveries.waiting < 7 {
                locked = try await app.count("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
                await Task.yield()
            }
            #expect(locked == 1 && app.appServices.videoDeliveries.waiting == 7)
            _ = try await other.query("COMMIT", logger: logger)
            return try await copies.value
        }
        #expect(outcomes.sorted() == ["applied"] + Array(repeating: "duplicate", count: 7), "\(outcomes)")
        #expect(app.appServices.videoDeliveries.waiting == 0)
        #expect(try await app.count("SELECT count(*) AS n FROM video_events WHERE book_id = \(bind: book)") == 1)
    }
}
