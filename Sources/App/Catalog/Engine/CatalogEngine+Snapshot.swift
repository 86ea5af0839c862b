#if canImport(Glibc)
import Glibc
#endif
import CatalogIndexing
import FluentKit
import Foundation
import SQLKit

/// Starting from a snapshot instead of SQL, and writing one (`EngineSnapshot`).
extension CatalogEngine {
    /// Loads the snapshot at `path` when this build wrote it against the current schema, catches
    /// up from the change log past its version (or rebuilds, when the log no longer reaches back
    /// that far) and marks the engine ready. Throws `EngineSnapshot.Refusal` when it cannot be used.
    @discardableResult
    func start(fromSnapshot path: String, on database: any Database) async throws -> EngineSnapshot.Header {
        let started = ContinuousClock.now
        begin(.loading)
        let header: EngineSnapshot.Header, loadedIn: Double
        do {
            let identity = try await Self.identity(on: database)
            let loaded: EngineSnapshot.Contents
            (header, loaded) = try await Task.detached { try EngineSnapshot.read(from: path, expecting: identity) }.value
            loadedIn = started.secondsElapsed
            install(loaded.index, version: header.version, answers: loaded.answers)
            try await catchUp(to: try await Self.catalogVersion(on: database), on: database)
        } catch {
            begin(.building)   // refused or failed: a build from SQL comes next
            throw error
        }
        markReady()
        howStarted.withLockedValue { $0 = Start(from: "snapshot", seconds: started.secondsElapsed, loadSeconds: loadedIn) }
        logger.info("catalog engine started from its snapshot", metadata: [
            "books": .stringConvertible(header.books), "snapshot_version": .stringConvertible(header.version),
            "version": .stringConvertible(currentVersion), "load_seconds": .string(String(format: "%.2f", loadedIn)),
            "seconds": .string(String(format: "%.2f", started.secondsElapsed)),
        ])
        return header
    }

    /// Writes the engine as it is now to `path`, stamped written at `now` (the app's clock); nil
    /// when it is not ready, or when the file there already holds this version or a newer one of
    /// this build, schema and database (another instance wrote it).
    @discardableResult
    func writeSnapshot(to path: String, on database: any Database, now: Date) async throws -> EngineSnapshot.Header? {
        await carried()   // the kept answers, once carried through the last change (none while they are)
        guard let (index, version, answers) = currentState() else { return nil }
        let identity = try await Self.identity(on: database)
        if let existing = try? EngineSnapshot.header(at: path), existing.build == EngineSnapshot.build,
           existing.schema == identity.schema, existing.catalog == identity.catalog, existing.version >= version { return nil }
        let header = EngineSnapshot.Header(build: EngineSnapshot.build, schema: identity.schema, catalog: identity.catalog, version: version, books: index.count, writtenAt: Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down)))
        let started = ContinuousClock.now
        let size = try await Task.detached { try EngineSnapshot.write(.init(index: index, answers: answers), header: header, to: path) }.value
        logger.info("catalog engine snapshot written", metadata: [
            "path": .string(path), "version": .stringConvertible(version), "books": .stringConvertible(index.count),
            "megabytes": .stringConvertible(size >> 20), "seconds": .string(String(format: "%.2f", started.secondsElapsed)),
        ])
        return header
    }

    /// The schema (a digest of the migrations applied), the catalog's id and its version now.
    static func identity(on database: any Database) async throws -> EngineSnapshot.Identity {
        let row = try await sql(database).raw("""
            SELECT (SELECT coalesce(md5(string_agg(version || ':' || checksum, ',' ORDER BY version)), '') FROM schema_migrations) AS schema,
                   catalog_id::text AS catalog, version
              FROM catalog_state
            """).first(decoding: EngineSnapshot.Identity.self)
        guard let row else { throw EngineSnapshot.Refusal.damaged("catalog_state has no row") }
        return row
    }

    /// A row of `SELECT version FROM catalog_state`.
    struct VersionRow: Decodable, Sendable { let version: Int }

    static func catalogVersion(on database: any Database) async throws -> Int {
        try await sql(database).raw("SELECT version FROM catalog_state").first(decoding: VersionRow.self)?.version ?? 0
    }

    private static func sql(_ database: any Database) throws -> any SQLDatabase {
        guard let sql = database as? any SQLDatabase else { throw EngineSnapshot.WriteFailure(description: "the catalog engine needs PostgreSQL") }
        return sql
    }
}

extension CatalogEngine {
    /// How this engine got ready: `"snapshot"` or `"build"`, and how long it took (seconds).
    struct Start: Sendable { var from: String; var seconds: Double; var loadSeconds: Double? }

    /// `"start":{...}` for the probes' bodies (empty until ready).
    var startJSON: String {
        guard let start = howStarted.withLockedValue({ $0 }) else { return "" }
        let load = start.loadSeconds.map { String(format: #","load_seconds":%.3f"#, $0) } ?? ""
        return #","start":{"from":"\#(start.from)""# + load + String(format: #","seconds":%.3f}"#, start.seconds)
    }

    /// While a snapshot loads, waits (polling, cheaply) until the engine is ready or `seconds`
    /// pass; true when it is ready. A load is seconds at most, and a request that waits for it is
    /// answered from the engine instead of by a slow SQL answer competing with the load for CPU.
    func waitWhileLoading(seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        if state == .loading { loadWaits.wrappingAdd(1, ordering: .relaxed) }
        while state == .loading && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return isReady
    }

    /// Gives the build's transient allocations (rows, strings, the replaced index) back to the
    /// system, so resident memory is what the index holds.
    static func returnFreedMemory() {
        #if canImport(Glibc)
        // glibc's malloc_trim (not in the Glibc module's headers)
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        #endif
    }
}
