@testable import App
import Foundation
import Logging
import PostgresKit
import PostgresNIO

/// Per-test databases copied from a template that is migrated once per test run (the SPI
/// pattern): tests are isolated, run in parallel and still hit a real PostgreSQL.
enum TestDatabase {
    /// A maintenance connection URL to the test cluster (`make test` sets it).
    static var adminURL: String {
        guard let url = ProcessInfo.processInfo.environment["STORYTIME_TEST_DATABASE_URL"], !url.isEmpty else {
            fatalError("STORYTIME_TEST_DATABASE_URL is not set; run the tests with `make test`")
        }
        return url
    }

    static let prefix = "st_\(ProcessInfo.processInfo.processIdentifier)_"
    static let templateName = prefix + "template"
    /// A first connection on a loaded CI machine (every suite at once on two cores) can take many seconds.
    static let connectTimeout: TimeAmount = .seconds(60)

    static let logger: Logger = {
        var logger = Logger(label: "test-database")
        logger.logLevel = .warning
        return logger
    }()
    private static let counter = Counter()

    /// The template, created and migrated on first use.
    private static let template = Task<Void, any Error> {
        try await admin("DROP DATABASE IF EXISTS \"\(templateName)\" WITH (FORCE)")
        try await admin("CREATE DATABASE \"\(templateName)\"")
        _ = try await DirectConnection.open(url: url(for: templateName), logger: logger, connectTimeout: TestDatabase.connectTimeout) { connection in
            try await Migrator(directory: projectDirectory + "migrations").migrate(on: connection, logger: logger)
        }
    }

    /// A fresh, migrated database; returns its name.
    static func create() async throws -> String {
        try await template.value
        let name = prefix + String(await counter.next())
        try await admin("CREATE DATABASE \"\(name)\" TEMPLATE \"\(templateName)\"")
        return name
    }

    /// An empty database without migrations, for migrator tests.
    static func createEmpty() async throws -> String {
        let name = prefix + "empty_" + String(await counter.next())
        try await admin("CREATE DATABASE \"\(name)\"")
        return name
    }

    static func drop(_ name: String) async throws {
        try await admin("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
    }

    static func url(for name: String) -> String {
        var components = URLComponents(string: adminURL)!
        components.path = "/" + name
        return components.string!
    }

    static func admin(_ statement: String) async throws {
        try await DirectConnection.open(url: adminURL, logger: logger, connectTimeout: TestDatabase.connectTimeout) { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
    }

    /// The integer in the first column of the first row of `statement`, run in `database`
    /// (the maintenance database when nil).
    static func admin(rows statement: String, in database: String? = nil) async throws -> Int {
        try await DirectConnection.open(url: database.map(url(for:)) ?? adminURL, logger: logger, connectTimeout: TestDatabase.connectTimeout) { connection in
            for try await n in try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).decode(Int.self) { return n }
            return 0
        }
    }

    /// The checkout: tests read `migrations/`, `seeds/` and `templates/` from it.
    static let projectDirectory: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url.path + "/"
            }
        }
        return FileManager.default.currentDirectoryPath + "/"
    }()

    actor Counter {
        private var value = 0
        func next() -> Int { value += 1; return value }
    }
}
