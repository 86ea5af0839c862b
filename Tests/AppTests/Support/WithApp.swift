@testable import App
import Foundation
import SQLKit
import Vapor
import VaporTesting

/// Runs `body` with a configured app on its own fresh database, and always tears both down.
/// With `engine`, the catalog engine is built before `body` runs (tests otherwise get the SQL path).
/// `database` names an existing database to use instead of a fresh one (it is dropped afterwards too).
/// `adjust` changes the test settings first (an SMTP server, say).
func withApp(engine: Bool = false, database existing: String? = nil, adjust: (inout Settings) -> Void = { _ in },
             _ body: (Application) async throws -> Void) async throws {
    try await TestSlots.run { try await withAppHeld(engine: engine, database: existing, adjust: adjust, body) }
}

private func withAppHeld(engine: Bool, database existing: String?, adjust: (inout Settings) -> Void,
                         _ body: (Application) async throws -> Void) async throws {
    let database: String
    if let existing { database = existing } else { database = try await TestDatabase.create() }
    let app = try await Application.make(.testing)
    app.logger.logLevel = .warning
    app.directory = DirectoryConfiguration(workingDirectory: TestDatabase.projectDirectory)
    do {
        var settings = testSettings(database: database)
        adjust(&settings)
        try await configure(app, settings: settings)
        if engine { try await app.appServices.catalogEngine.build(on: app.db) }
        try await body(app)
    } catch {
        try? await app.asyncShutdown()
        try? await TestDatabase.drop(database)
        throw error
    }
    try await app.asyncShutdown()
    try await TestDatabase.drop(database)
}

/// Two app instances on one database, as behind a load balancer.
func withTwoApps(engine: Bool = false, _ body: (Application, Application) async throws -> Void) async throws {
    try await TestSlots.run { try await withTwoAppsHeld(engine: engine, body) }
}

private func withTwoAppsHeld(engine: Bool, _ body: (Application, Application) async throws -> Void) async throws {
    let database = try await TestDatabase.create()
    var apps: [Application] = []
    do {
        for _ in 0..<2 {
            let app = try await Application.make(.testing)
            app.logger.logLevel = .warning
            app.directory = DirectoryConfiguration(workingDirectory: TestDatabase.projectDirectory)
            apps.append(app)
            try await configure(app, settings: testSettings(database: database))
            if engine { try await app.appServices.catalogEngine.build(on: app.db) }
        }
        try await body(apps[0], apps[1])
    } catch {
        for app in apps { try? await app.asyncShutdown() }
        try? await TestDatabase.drop(database)
        throw error
    }
    for app in apps { try await app.asyncShutdown() }
    try await TestDatabase.drop(database)
}

func testSettings(database: String) -> Settings {
    var settings = Settings(databaseURL: TestDatabase.url(for: database),
             jwtSecret: "test-jwt-secret-that-is-long-enough-0123456789",
             sessionSecret: "test-session-secret-that-is-long-enough-0123456789",
             databasePoolPerLoop: 4, bcryptCost: 4, tokenLifetime: 3600,
             // a first connection on a loaded CI machine (every suite at once on two cores) can take many
             // seconds, and a request may wait that long for a pooled one (the pool's timeout is the same)
             databaseConnectTimeout: 60, healthTimeout: 60)
    // Suites send hundreds of requests with one token; the budget has its own test.
    settings.rateLimitRequests = 0
    // Suites sign in as admins without a second factor; its own tests require it.
    settings.staffTwoFactor = .none
    settings.staffTwoFactorKey = "test-staff-2fa-key-that-is-long-enough-0123456789"
    return settings
}

extension Application {
    /// SQL on the app's pool, for fixtures and assertions (not counted as the app's queries).
    var sql: any SQLDatabase { db as! any SQLDatabase }

    /// The statements the app sends while `work` runs.
    func countQueries(_ work: () async throws -> Void) async throws -> Int {
        let before = appServices.queryCounter.count
        try await work()
        return appServices.queryCounter.count - before
    }

    func get(_ path: String, token: String? = nil, headers: HTTPHeaders = [:]) async throws -> TestingHTTPResponse {
        var headers = headers
        if let token { headers.bearerAuthorization = .init(token: token) }
        return try await testing().sendRequest(.GET, path, headers: headers)
    }

    func send(_ method: HTTPMethod, _ path: String, token: String? = nil, json: String? = nil,
              headers: HTTPHeaders = [:]) async throws -> TestingHTTPResponse {
        var headers = headers
        if let token { headers.bearerAuthorization = .init(token: token) }
        if json != nil { headers.contentType = .json }
        return try await testing().sendRequest(method, path, headers: headers,
                                               body: json.map { ByteBuffer(string: $0) })
    }

    /// Posts `form` (already URL-encoded) as a browser form would, without a console session.
    func send(_ method: HTTPMethod, _ path: String, headers: HTTPHeaders, form: String) async throws -> TestingHTTPResponse {
        try await testing().sendRequest(method, path, headers: headers, body: ByteBuffer(string: form))
    }
}

extension TestingHTTPResponse {
    /// The body as a JSON object (fails the test when it is not one).
    var json: [String: Any] {
        get throws {
            let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView))
            guard let dictionary = object as? [String: Any] else { throw TestFailure("body is not a JSON object: \(body.string)") }
            return dictionary
        }
    }

    var dataArray: [[String: Any]] {
        get throws { (try json["data"] as? [[String: Any]]) ?? [] }
    }

    var dataObject: [String: Any] {
        get throws { (try json["data"] as? [String: Any]) ?? [:] }
    }

    /// The numbers of `meta` (page, per_page, total_count, total_pages).
    var meta: [String: Int] {
        get throws { ((try json["meta"] as? [String: Any]) ?? [:]).compactMapValues { $0 as? Int } }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
