@testable import App
import CatalogIndexing
import Core
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Starting an instance: the engine's snapshot (equal to a fresh build, refused when it is not
/// this build's, this schema's or whole), readiness, and the bounded SQL path meanwhile.
@Suite("Engine start")
struct EngineStartTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("engine-\(UUID().uuidString).snapshot").path
    }

    /// `count` random catalog queries, a fifth with a maximum age and half with a country.
    static func queries(_ app: Application, count: Int, seed: UInt64) async throws -> [(query: String, parameters: CatalogParameters, scope: CatalogScope)] {
        let (words, slugs, categoryIDs, publishers) = try await CatalogEngineTests.vocabulary(app)
        var random = CatalogEngineTests.Random(state: seed)
        return try (0..<count).map { _ in
            let query = CatalogEngineTests.randomQuery(&random, words: words, slugs: slugs, categoryIDs: categoryIDs, publishers: publishers)
            let scope = CatalogScope(maxAge: random.chance(20) ? random.int(2...10) : nil, country: random.chance(50) ? random.pick(["FR", "US", "GB", "DE"]) : nil)
            return (query, try CatalogParameters(QueryParameters(query: query)), scope)
        }
    }

    /// Every answer of `a` and `b` for `queries` and every book's detail, compared byte for byte;
    /// returns how many lists had books.
    static func compare(_ a: CatalogEngine, _ b: CatalogEngine, app: Application, queries: [(query: String, parameters: CatalogParameters, scope: CatalogScope)]) async throws -> Int {
        let now = Date()
        var nonEmpty = 0
        for (query, parameters, scope) in queries {
            let x = a.page(parameters, scope: scope, now: now), y = b.page(parameters, scope: scope, now: now)
            #expect(x.body == y.body && x.total == y.total, "\(query) \(scope)")
            if x.body != y.body { break }
            if x.total > 0 { nonEmpty += 1 }
        }
        let maxID = try await app.sql.raw("SELECT max(id) AS m FROM books").first()!.decode(column: "m", as: Int.self)
        for id in 1...maxID {
            #expect(a.book(id, now: now) == b.book(id, now: now), "book \(id)")
            #expect(a.book(id, scope: CatalogScope(country: "FR"), now: now) == b.book(id, scope: CatalogScope(country: "FR"), now: now), "book \(id) in FR")
        }
        return nonEmpty
    }

    @Test("a snapshot loads the very index and kept answers that were written, and caught up from the change log it answers exactly as a fresh build — 600 random queries, every book", .app)
    func snapshotEqualsFreshBuild() async throws {
        let app = try app()
        let seeder = DemoSeeder(books: 900, reference: Date().addingTimeInterval(-400 * 86400), seedsDirectory: TestDatabase.projectDirectory + "seeds",
                                hashPassword: { try $0.hashedForTests() })
        _ = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in }
        // Territories and schedules too, so every part of the index is in the file.
        try await app.sql.raw("""
            UPDATE rights_windows SET territories = '{FR,BE}' WHERE book_id % 11 = 0;
            """).run()
        try await app.sql.raw("UPDATE rights_windows SET exclude_territories = '{US}' WHERE book_id % 13 = 0").run()
        try await app.sql.raw("UPDATE books SET live_from = now() + interval '3 days' WHERE id % 17 = 0").run()
        let written = CatalogEngine(logger: app.logger)
        try await written.build(on: app.db)
        // Answers the engine keeps travel with the snapshot: the queries compared below are asked
        // first, so the loaded engine answers them from kept answers carried over the changes.
        let queries = try await Self.queries(app, count: 600, seed: 20261124)
        for (_, parameters, scope) in queries { _ = written.page(parameters, scope: scope, now: Date()) }
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let header = try #require(try await written.writeSnapshot(to: path, on: app.db, now: app.now))
        #expect(header.books == written.bookCount && header.version == written.currentVersion && header.books > 700)
        // Loaded, it is the same index byte for byte.
        let (read, contents) = try EngineSnapshot.read(from: path, expecting: try await CatalogEngine.identity(on: app.db))
        #expect(read == header)
        let original = try #require(written.currentState())
        #expect(try contents.index.snapshotBytes() == original.index.snapshotBytes())
        #expect(original.answers.count > 100 && contents.answers.keys.sorted() == original.answers.keys.sorted())
        #expect(contents.answers.allSatisfy { key, entry in original.answers[key].map { $0.answer == entry.answer && $0.words == entry.words && $0.filters == entry.filters } ?? false })
        // A second write at the same version leaves the file alone (another instance may have written it).
        #expect(try await written.writeSnapshot(to: path, on: app.db, now: app.now) == nil)

        // The catalog moves on: titles, an archive, new books, rights, a territory, a schedule.
        try await app.sql.raw("UPDATE books SET title = title || ' Again' WHERE id % 29 = 0").run()
        try await app.sql.raw("UPDATE books SET status = 'archived' WHERE id % 31 = 0").run()
        for n in 0..<70 { _ = try await app.makeBook("Zebra Night \(n)", author: "Quentin Blake") }   // a batch past the single-book path
        try await app.sql.raw("UPDATE rights_windows SET territories = '{GB}' WHERE book_id % 37 = 0").run()
        try await app.sql.raw("UPDATE books SET live_until = now() + interval '1 day' WHERE id % 41 = 0").run()
        try await app.sql.raw("DELETE FROM book_categories WHERE book_id % 43 = 0").run()

        let started = CatalogEngine(logger: app.logger)
        let used = try await started.start(fromSnapshot: path, on: app.db)
        #expect(used.version == header.version && started.isReady)
        #expect(started.startJSON.hasPrefix(#","start":{"from":"snapshot","load_seconds":"#))
        #expect(started.currentVersion == (try await CatalogEngine.catalogVersion(on: app.db)))
        let fresh = CatalogEngine(logger: app.logger)
        try await fresh.build(on: app.db)
        #expect(started.bookCount == fresh.bookCount)
        await started.carried()
        #expect(started.memo.withLockedValue { $0.answers.count } > 10)   // kept answers the changes cannot touch survived the catch-up (26 here)
        let nonEmpty = try await Self.compare(started, fresh, app: app, queries: queries)
        #expect(nonEmpty > 200)
    }

    @Test("a snapshot from another build, schema or database, ahead of the database, damaged, cut short or missing is refused, and nothing is loaded", .app)
    func refusals() async throws {
        let app = try app()
        _ = try await app.makeBook("Owl Moon")
        let engine = CatalogEngine(logger: app.logger)
        try await engine.build(on: app.db)
        let index = EngineSnapshot.Contents(index: try #require(engine.currentState()).index)
        let identity = try await CatalogEngine.identity(on: app.db)
        #expect(!identity.schema.isEmpty && identity.catalog.count == 36)
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        func attempt() async -> EngineSnapshot.Refusal? {
            let fresh = CatalogEngine(logger: app.logger)
            do {
                try await fresh.start(fromSnapshot: path, on: app.db)
                return nil
            } catch {
                #expect(!fresh.isReady && fresh.bookCount == 0, "nothing loaded after \(error)")
                return error as? EngineSnapshot.Refusal
            }
        }
        let header = EngineSnapshot.Header(build: EngineSnapshot.build, schema: identity.schema, catalog: identity.catalog,
                                           version: engine.currentVersion, books: 1, writtenAt: Date())
        #expect(await attempt() == .missing)

        var other = header
        other.build = "format 0; App 1 bytes, 0"
        try EngineSnapshot.write(index, header: other, to: path)
        #expect(await attempt() == .otherBuild(other.build))

        other = header
        other.schema = "a schema before a migration"
        try EngineSnapshot.write(index, header: other, to: path)
        #expect(await attempt() == .otherSchema(other.schema))

        other = header
        other.catalog = UUID().uuidString.lowercased()   // another database of the same schema
        try EngineSnapshot.write(index, header: other, to: path)
        #expect(await attempt() == .otherCatalog(other.catalog))

        other = header
        other.version = identity.version + 5   // the database was restored from an older backup
        try EngineSnapshot.write(index, header: other, to: path)
        #expect(await attempt() == .ahead(other.version))

        let size = try EngineSnapshot.write(index, header: header, to: path)
        #expect(await attempt() == nil)   // whole, this build's and this schema's: used

        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.count == size)
        bytes[bytes.count / 2] ^= 0x5A
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(await attempt() == .damaged("checksum mismatch"))

        try Data(bytes.prefix((bytes.count / 2) & ~7)).write(to: URL(fileURLWithPath: path))   // cut short
        #expect(await attempt() == .damaged("checksum mismatch"))
        try Data(bytes.prefix(bytes.count - 3)).write(to: URL(fileURLWithPath: path))
        #expect(await attempt() == .damaged("its size is not whole words"))

        try Data("not a snapshot at all, just text".utf8).write(to: URL(fileURLWithPath: path))
        #expect(await attempt() == .notASnapshot)
    }

    @Test("/readyz: 503 engine_starting until the engine is ready, 200 once it is and at the current version, 200 with the engine off", .app)
    func readiness() async throws {
        let app = try app()
        _ = try await app.makeBook("Owl Moon")
        var response = try await app.get("/readyz")
        #expect(response.status == .serviceUnavailable)
        #expect(response.body.string.contains(#""reason":"engine_starting""#) && response.headers.first(name: "Retry-After") == "1")
        #expect(response.headers.first(name: "Cache-Control") == "no-store")
        #expect(try await app.get("/livez").status == .ok)   // alive all along
        try await app.appServices.catalogEngine.build(on: app.db)
        _ = try await app.makeBook("Bear Day")   // the engine is behind: readiness catches it up first
        response = try await app.get("/readyz")
        #expect(response.status == .ok && response.body.string.contains(#""status":"ready""#))
        #expect(response.body.string.contains(#""start":{"from":"build","seconds":"#))
        #expect(app.appServices.catalogEngine.bookCount == 2)
        app.settings.catalogEngine = false
        response = try await app.get("/readyz")
        #expect(response.status == .ok && response.body.string.contains(#""engine":"off""#))
    }

    @Test("/readyz answers 503 database when the database is gone")
    func readinessWithoutDatabase() async throws {
        let database = try await TestDatabase.create()
        let app = try await Application.make(.testing)
        app.directory = DirectoryConfiguration(workingDirectory: TestDatabase.projectDirectory)
        try await configure(app, settings: testSettings(database: database))
        try await app.appServices.catalogEngine.build(on: app.db)
        #expect(try await app.get("/readyz").status == .ok)
        try await TestDatabase.drop(database)
        let response = try await app.get("/readyz")
        #expect(response.status == .serviceUnavailable && response.body.string.contains(#""reason":"database""#))
        try await app.asyncShutdown()
    }

    @Test("the gate: places, then a line in arrival order, then refusal at once; a freed place goes to the first in line")
    func gate() async throws {
        let gate = FallbackGate(limit: 2, queue: 1)
        let order = OrderLog()
        let (release, releaser) = AsyncStream.makeStream(of: Void.self)
        // Two take the places and hold them until released.
        let holders = (0..<2).map { n in
            Task { try await gate.run { order.add("run \(n)"); for await _ in release { break } } }
        }
        while order.entries.count < 2 { await Task.yield() }
        let waiter = Task { try await gate.run { order.add("waiter") } }
        while gate.queued < 1 { await Task.yield() }
        // The line is full: refused at once, with the problem clients retry on.
        let refused = await #expect(throws: Problem.self) { try await gate.run { order.add("never") } }
        #expect(refused?.code == "engine_starting" && refused?.status == .serviceUnavailable && refused?.headers.first(name: "Retry-After") == "1")
        #expect(gate.refused == 1)
        releaser.yield()
        _ = try await waiter.value
        releaser.finish()
        for holder in holders { try await holder.value }
        #expect(order.entries.filter { $0.hasPrefix("run") }.count == 2 && order.entries.last == "waiter" && !order.entries.contains("never"))
        #expect(gate.running == 0)
    }

    @Test("while the engine is not ready, catalog requests past the SQL path's bound are a fast 503 engine_starting problem; none once it is ready",
          .app(adjust: { $0.catalogFallbackConcurrency = 1; $0.catalogFallbackQueue = 0 }))
    func boundedFallback() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        _ = try await app.makeBook("Owl Moon")
        let gate = app.appServices.catalogFallback
        let (release, releaser) = AsyncStream.makeStream(of: Void.self)
        let holder = Task { try await gate.run { for await _ in release { break } } }
        while gate.running < 1 { await Task.yield() }
        // Never started (`off`, as in a command or with CATALOG_ENGINE=off), the SQL path is not
        // bounded; once the engine is starting, it is.
        #expect(try await app.get("/api/v1/catalog/books?q=owl", token: parent.token).status == .ok)
        app.appServices.catalogEngine.begin(.building)
        let response = try await app.get("/api/v1/catalog/books?q=owl", token: parent.token)
        #expect(response.status == .serviceUnavailable)
        #expect(response.headers.first(name: "Retry-After") == "1")
        #expect(response.headers.first(name: "Content-Type")?.hasPrefix("application/problem+json") == true)
        #expect(response.body.string.contains(#""code":"engine_starting""#))
        releaser.finish()
        try await holder.value
        #expect(try await app.get("/api/v1/catalog/books?q=owl", token: parent.token).meta["total_count"] == 1)   // SQL, within the bound
        try await app.appServices.catalogEngine.build(on: app.db)
        // Ready: the gate is not consulted, even with its place taken.
        let (block, blocker) = AsyncStream.makeStream(of: Void.self)
        let occupied = Task { try await gate.run { for await _ in block { break } } }
        while gate.running < 1 { await Task.yield() }
        #expect(try await app.get("/api/v1/catalog/books?q=owl", token: parent.token).status == .ok)
        blocker.finish()
        try await occupied.value
    }

    @Test("while a snapshot loads, catalog requests wait for it and are answered by the engine; refused at once when the load fails and SQL has no place",
          .app(adjust: { $0.catalogFallbackConcurrency = 0; $0.catalogFallbackQueue = 0 }))
    func waitsForLoad() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        _ = try await app.makeBook("Owl Moon")
        let built = CatalogEngine(logger: app.logger)
        try await built.build(on: app.db)
        let state = try #require(built.currentState())
        let engine = app.appServices.catalogEngine, token = parent.token
        // A load that fails: the request that waited for it falls to the SQL path's bound — here
        // no place at all, so 503 engine_starting.
        // (Each state changed once the request waits: `loadWaits` says so, no sleep.)
        func waiting(for waits: Int) async { while engine.loadWaits.load(ordering: .relaxed) < waits { await Task.yield() } }
        let waitsBefore = engine.loadWaits.load(ordering: .relaxed)
        engine.begin(.loading)
        let refused = Task { try await app.get("/api/v1/catalog/books?q=owl", token: token) }
        await waiting(for: waitsBefore + 1)
        engine.begin(.building)
        #expect(try await refused.value.status == .serviceUnavailable)
        #expect(app.appServices.catalogFallback.refused == 1)
        // A load that finishes: the request that waited is answered from the engine.
        engine.begin(.loading)
        let answered = Task { try await app.get("/api/v1/catalog/books?q=owl", token: token) }
        await waiting(for: waitsBefore + 2)
        engine.install(state.index, version: state.version, answers: state.answers)
        engine.markReady()
        let response = try await answered.value
        #expect(response.status == .ok)
        #expect(try response.meta["total_count"] == 1)
        #expect(app.appServices.catalogFallback.refused == 1)
        // A wait is bounded by its time.
        let stuck = CatalogEngine(logger: app.logger)
        stuck.begin(.loading)
        #expect(await stuck.waitWhileLoading(seconds: 0.1) == false)
    }
}

/// What ran, in order (tests of concurrency).
final class OrderLog: Sendable {
    private let box = NIOLockedValueBox<[String]>([])
    func add(_ entry: String) { box.withLockedValue { $0.append(entry) } }
    var entries: [String] { box.withLockedValue { $0 } }
}
