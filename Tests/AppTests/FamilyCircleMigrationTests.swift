@testable import App
import Foundation
import PostgresNIO
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Migration 0038 on a copy of the schema before it, with data (issue 45): every account becomes
/// the parent of a family of one, numbered as the account, with the same children, libraries,
/// controls, plays and log; the children's day and rights still follow that parent's zone and
/// country; accounts made after it found families of their own.
@Suite("Family circle: migration 0038")
struct FamilyCircleMigrationTests {
    /// Applies the migrations `wanted` picks, from a folder of copies, on `connection`.
    static func migrate(_ connection: PostgresConnection, _ wanted: (Int) -> Bool) async throws {
        let files = try Migrator(directory: TestDatabase.projectDirectory + "migrations").files()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for file in files where wanted(Int(file.version)!) {
            try file.sql.write(toFile: folder + "/\(file.version)_\(file.name).sql", atomically: true, encoding: .utf8)
        }
        try await Migrator(directory: folder).migrate(on: connection, logger: TestDatabase.logger)
    }

    static func run(_ connection: PostgresConnection, _ statements: [String]) async throws {
        for statement in statements { _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: TestDatabase.logger) }
    }

    @Test("each account becomes the parent of a family with the same children; zone and country effects unchanged")
    func existingFamilies() async throws {
        let name = try await TestDatabase.createEmpty()
        let hash = try Circle.password.hashedForTests()
        try await DirectConnection.open(url: TestDatabase.url(for: name), logger: TestDatabase.logger, connectTimeout: TestDatabase.connectTimeout) { connection in
            try await Self.migrate(connection) { $0 < 38 }
            // Today's schema: children name their parent (`parent_id`); ids with a gap (a deleted account).
            try await Self.run(connection, [
                "INSERT INTO parents (id, email, password_hash, time_zone, country, email_verified_at) VALUES "
                    + "(1, 'ann@example.com', '\(hash)', 'Europe/Paris', 'FR', now()), (2, 'gone@example.com', '\(hash)', 'UTC', NULL, now()), "
                    + "(3, 'bob@example.com', '\(hash)', 'America/New_York', 'US', now()), (4, 'dee@example.com', '\(hash)', 'Asia/Tokyo', NULL, now())",
                "SELECT setval(pg_get_serial_sequence('parents', 'id'), 4)",
                "DELETE FROM parents WHERE id = 2",
                "INSERT INTO children (id, parent_id, name, birth_year) VALUES (10, 1, 'Ada', 2020), (11, 1, 'Ben', NULL), (12, 3, 'Cy', 2019)",
                "SELECT setval(pg_get_serial_sequence('children', 'id'), 12)",
                "INSERT INTO books (id, title, status, age_min, age_max) VALUES (100, 'France Only', 'active', 0, 12), (101, 'Everywhere', 'active', 0, 12)",
                "INSERT INTO video_assets (book_id, status, duration_seconds, has_captions) VALUES (100, 'ready', 300, true), (101, 'ready', 300, true)",
                "INSERT INTO rights_windows (book_id, starts_at, territories) VALUES (100, now() - interval '1 day', '{FR}'), (101, now() - interval '1 day', '{}')",
                "INSERT INTO library_entries (child_id, book_id) VALUES (10, 100), (10, 101), (12, 100), (12, 101)",
                "INSERT INTO child_controls (child_id, daily_minutes) VALUES (10, 45)",
                "INSERT INTO child_controls (child_id, bedtime_start, bedtime_end, max_age) VALUES (11, '19:30', '07:00', 6)",
                "INSERT INTO plays (child_id, book_id, position_seconds, completed, played_at) VALUES (10, 101, 120, true, '2026-01-05T10:00:00Z')",
                "INSERT INTO parent_audit_log (parent_id, child_id, action) VALUES (1, 10, 'controls.update'), (3, 12, 'child.add')",
            ])
            try await Self.migrate(connection) { $0 >= 38 }
        }
        try await withApp(database: name) { app in
            // Families numbered as their accounts, each with its one parent and its children.
            let families = try await app.sql.raw("SELECT id FROM families ORDER BY id").all().map { try $0.decode(column: "id", as: Int.self) }
            #expect(families == [1, 3, 4])
            let ann = try await FamilyAccountsTests.signIn(app, "ann@example.com", password: Circle.password)
            let bob = try await FamilyAccountsTests.signIn(app, "bob@example.com", password: Circle.password)
            let dee = try await FamilyAccountsTests.signIn(app, "dee@example.com", password: Circle.password)
            let annFamily = try await Circle.family(app, ann.access)
            #expect(annFamily["id"] as? Int == 1 && annFamily["role"] as? String == "parent")
            #expect(try await Circle.members(app, ann.access) == [1: "parent"])
            #expect(try await Circle.childIDs(app, ann.access) == [10, 11])
            #expect(try await Circle.childIDs(app, bob.access) == [12])
            #expect(try await Circle.childIDs(app, dee.access) == [])
            #expect(try await Circle.family(app, bob.access)["id"] as? Int == 3)
            #expect(try await app.count("SELECT count(*) AS n FROM children WHERE family_id IS DISTINCT FROM added_by") == 0)
            #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE family_id IS DISTINCT FROM parent_id") == 0)

            // Libraries, plays and controls as they were; the day in the parent's zone.
            #expect(try await app.get("/api/v1/children/10/library", token: ann.access).dataArray.count == 2)
            #expect(try await app.get("/api/v1/children/10/history", token: ann.access).dataArray.count == 1)
            let ada = try await app.get("/api/v1/children/10/controls", token: ann.access).dataObject
            #expect(ada["time_zone"] as? String == "Europe/Paris" && ada["daily_minutes"] as? Int == 45)
            let ben = try await app.get("/api/v1/children/11/controls", token: ann.access).dataObject
            #expect(ben["bedtime"] as? [String: String] == ["start": "19:30", "end": "07:00"] && ben["max_age"] as? Int == 6)
            #expect(try await app.get("/api/v1/children/12/controls", token: bob.access).dataObject["time_zone"] as? String == "America/New_York")
            // Rights follow the parent's country: France Only plays for Ada (FR), not for Cy (US).
            #expect(try await PlaybackGrantTests.grant(app, child: 10, book: 100, token: ann.access).status == .created)
            #expect(try await PlaybackGrantTests.grant(app, child: 12, book: 100, token: bob.access).status != .created)
            #expect(try await PlaybackGrantTests.grant(app, child: 12, book: 101, token: bob.access).status == .created)
            // Nobody sees another family's child.
            #expect(try await app.get("/api/v1/children/12/library", token: ann.access).status == .notFound)
            #expect(try await app.get("/api/v1/children/10", token: dee.access).status == .notFound)

            // After it: a new account founds a family of its own (numbered past the old ones), adds a child.
            let eve = try await app.makeParent(email: "eve@example.com", password: Circle.password, children: ["Eli"])
            let eveFamily = try #require(try await Circle.familyID(app, of: eve.id))
            #expect(eveFamily > 4)
            #expect(try await app.send(.POST, "/api/v1/children", token: dee.access, json: #"{"name":"Dot"}"#).status == .created)
            #expect(try await app.count("SELECT count(*) AS n FROM children WHERE name = 'Dot' AND family_id = 4") == 1)
            // A migrated family takes new members.
            _ = try await Circle.invite(app, ann.access, "fay@example.com", role: "caregiver")
            let fay = try await app.makeParent(email: "fay@example.com", password: Circle.password, children: [])
            #expect(try await Circle.accept(app, fay.token, invitation: try await Circle.token(app, to: "fay@example.com")).status == .ok)
            #expect(try await Circle.childIDs(app, fay.token) == [10, 11])
            // The organizer stays Ann (the parent of longest standing): the children's zone is still hers.
            #expect(try await app.get("/api/v1/children/10/controls", token: fay.token).dataObject["time_zone"] as? String == "Europe/Paris")
            try await Circle.expectInvariants(app)
        }
    }
}
