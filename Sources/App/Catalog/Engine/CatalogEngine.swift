import CatalogIndexing
import Core
import FluentKit
import Foundation
import NIOConcurrencyHelpers
import PostgresKit
import PostgresNIO
import Synchronization
import Vapor

/// The in-memory catalog of this instance (`CatalogIndex`), built at start-up in one streamed
/// pass and kept current from the database's change log: when a request finds the catalog
/// version moved, the books the log names since this instance's version are reloaded before it
/// is answered. Until the first build finishes, the catalog is served from SQL.
final class CatalogEngine: @unchecked Sendable {
    /// `loading`: from a snapshot (seconds at most; catalog requests wait for it rather than use SQL).
    enum State: String, Sendable { case off, loading, building, ready, failed }

    private let lock = ReadWriteLock()
    private var index = CatalogIndex()
    /// The catalog version `index` reflects (under `lock`).
    private var version = -1
    /// The categories `index` was built or last changed with (names, slugs, translations, order;
    /// under `lock`): a change that renames, adds or removes none reuses them instead of reading
    /// them again. Nil after a snapshot load: read at the next change.
    private var categoryInfos: [CatalogLoader.CategoryInfo]?
    private let status = NIOLockedValueBox(State.off)
    private let updater = Updater()
    /// Answers already computed at the index's current version (exact: an answer depends only on
    /// the index, never on the clock; rights availability is rendered per request). Popular
    /// searches — many parents typing the same first letters — cost one computation per version.
    let memo = NIOLockedValueBox(AnswerMemo())
    /// Answers taken from `memo` and answers computed since start (`memoized`: pages, and the
    /// counts a miss's cause takes): the share computed is what changes and one-off searches cost.
    let answersKept = Atomic<Int>(0), answersComputed = Atomic<Int>(0)
    /// Carries finished (`startCarry`) and the microseconds they took: while one runs, a kept
    /// answer it cannot reach is served (`CarryCheck`), one it can is computed and kept aside; the checks' stamps (`CarryCheck.cache`).
    let carries = Atomic<Int>(0), carryMicroseconds = Atomic<Int>(0), carryStamps = Atomic<Int>(0)
    /// Kept browses patched by a carry (`MemoCarry.patched`); requests that waited for a load (`waitWhileLoading`).
    let browsesPatched = Atomic<Int>(0), loadWaits = Atomic<Int>(0)
    let searchMemo = NIOLockedValueBox(SearchMemo())
    /// Common search words' sets at the index's current version (`WordSetCache`).
    let wordSets = WordSetCache()
    let scopeSets = NIOLockedValueBox(ScopeBooks())
    /// The scheduled books out of the catalog, valid from..<until for one index state.
    struct ScheduleState { var changes = -1; var version = -1; var from = Int64.min; var until = Int64.min; var offline: Bitset? }
    let scheduleState = NIOLockedValueBox(ScheduleState())
    let logger: Logger

    /// Called once per change-log application (a metric).
    let onDelta: @Sendable () -> Void
    /// The task carrying the memos through the changes applied (`carryChains`), while one runs.
    let carrying = NIOLockedValueBox(Carrying())
    /// Tests: called as a change's carry begins (a request answered at the new version meanwhile).
    let whileCarrying = NIOLockedValueBox<(@Sendable () -> Void)?>(nil)
    /// The database a build reads from on a connection of its own (`DATABASE_URL`), so a build is
    /// never queued behind requests for a pooled connection; nil: a pooled one (tests of the SQL).
    let buildURL: String?

    init(logger: Logger, buildURL: String? = nil, onDelta: @escaping @Sendable () -> Void = {}) {
        self.logger = logger
        self.buildURL = buildURL
        self.onDelta = onDelta
    }

    /// How this engine got ready (`Start`, `startJSON`).
    let howStarted = NIOLockedValueBox<Start?>(nil)

    var state: State { status.withLockedValue { $0 } }
    var isReady: Bool { state == .ready }
    /// Loading, building or retrying a failed build: on its way to ready.
    var isStarting: Bool { [.loading, .building, .failed].contains(state) }
    var currentVersion: Int { lock.reading { version } }
    var bookCount: Int { lock.reading { index.count } }

    /// Builds the index from scratch (start-up, or a change log this instance can no longer follow).
    func build(on database: any Database) async throws {
        begin(.building)
        let started = ContinuousClock.now
        do {
            let (fresh, builtVersion, categories) = try await withBuildConnection(database) { connection in
                try await self.load(on: connection)
            }
            lock.writing {
                index = fresh
                version = builtVersion
                categoryInfos = categories
            }
            Self.returnFreedMemory()
            status.withLockedValue { $0 = .ready }
            howStarted.withLockedValue { $0 = Start(from: "build", seconds: started.secondsElapsed) }
            logger.info("catalog engine built", metadata: ["books": .stringConvertible(fresh.count), "version": .stringConvertible(builtVersion),
                                                           "seconds": .string(String(format: "%.2f", started.secondsElapsed))])
        } catch {
            status.withLockedValue { if $0 == .building { $0 = .failed } }
            throw error
        }
    }

    private func load(on connection: PostgresConnection) async throws -> (CatalogIndex, Int, [CatalogLoader.CategoryInfo]) {
        // One snapshot: the version and the books it describes.
        _ = try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
        do {
            var builtVersion = 0
            for try await v in try await connection.query("SELECT version FROM catalog_state", logger: logger).decode(Int.self) {
                builtVersion = v
            }
            let categories = try await CatalogLoader.categories(on: connection, logger: logger)
            var empty = CatalogIndex()
            empty.setCategories(categories.map(\.indexed))
            let indexer = BulkIndexer(empty)
            try await CatalogLoader.allBooks(categories: categories, on: connection, logger: logger) { await indexer.add($0) }
            let fresh = await indexer.finish()
            _ = try await connection.query("COMMIT", logger: logger)
            return (fresh, builtVersion, categories)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    /// Replaces the index (and the kept answers) with those loaded from a snapshot at `version`;
    /// the engine stays not ready until the caller has caught it up and `markReady()`.
    func install(_ loaded: CatalogIndex, version loadedVersion: Int, answers: [String: AnswerMemo.Entry] = [:]) {
        lock.writing {
            index = loaded
            version = loadedVersion
            categoryInfos = nil
            memo.withLockedValue { $0 = AnswerMemo(version: loadedVersion, loaded: answers) }
        }
        Self.returnFreedMemory()
    }

    func markReady() { status.withLockedValue { $0 = .ready } }

    /// Sets the state unless the engine is already ready (a load or a build beginning or failing).
    func begin(_ state: State) { status.withLockedValue { if $0 != .ready { $0 = state } } }

    /// The index and its version as one consistent state (the arrays are shared copy-on-write,
    /// so this costs nothing until the engine changes one of them); nil until the engine is ready.
    func currentState() -> (index: CatalogIndex, version: Int, answers: [String: AnswerMemo.Entry])? {
        guard isReady else { return nil }
        return lock.reading {
            let answers = memo.withLockedValue { $0.version == version ? $0.answers : [:] }
            return (index, version, answers)
        }
    }

    /// Makes sure the index reflects at least `target` (a version a request read).
    func catchUp(to target: Int, on database: any Database) async throws {
        if lock.reading({ version >= target }) { return }
        try await updater.run(until: { self.lock.reading { self.version >= target } }) {
            try await self.applyChanges(on: database)
        }
    }

    /// Applies every change logged after this instance's version, up to the current one: the
    /// log, then the changed books (two statements; the categories a third only when one was
    /// renamed, added or removed — every such change logs a row without a book — or none are known).
    private func applyChanges(on database: any Database) async throws {
        let (from, known) = lock.reading { (version, categoryInfos) }
        let rebuild = try await withConnection(database) { connection -> Bool in
            let rows = try await connection.query("""
                SELECT s.version, s.purged_through, c.book_id, COALESCE(c.everything, false)
                  FROM catalog_state s LEFT JOIN catalog_changes c ON c.version > \(from) AND c.version <= s.version
                """, logger: self.logger)
            var to = from, purged = 0, everything = false, namesChanged = false
            var ids = Set<Int>()
            for try await (v, purgedThrough, book, all) in rows.decode((Int, Int, Int?, Bool).self) {
                to = v; purged = purgedThrough
                if all { everything = true }
                if let book { ids.insert(book) } else if !all && v > from { namesChanged = true }
            }
            if everything || purged > from { return true }
            guard to > from else { return false }
            let read = namesChanged || known == nil
            let categories = try await read ? CatalogLoader.categories(on: connection, logger: self.logger) : known ?? []
            let list = Array(ids)
            let loaded = list.isEmpty ? [] : try await CatalogLoader.books(ids: list, categories: categories, on: connection, logger: self.logger)
            let present = Set(loaded.map(\.id))
            let removing = list.filter { !present.contains($0) }
            // What the change alters of each book (its words, filters, what a page shows), from
            // its record before and after, decides which kept answers stay (worked out before the
            // write lock; the kept answers are visited after it, the change queued behind those
            // still being carried: `CatalogEngine+Carry.swift`).
            let (at, carry) = self.lock.reading { (self.version, namesChanged ? nil : self.index.carry(changing: loaded, removing: removing)) }
            let applied = self.lock.writing { () -> Bool in
                let before = self.version
                // The known categories were this index's: a build in between may know newer
                // ones (the caller's loop reads the log again).
                guard read || before == from else { return false }
                if namesChanged { self.index.setCategories(categories.map(\.indexed)) }
                self.index.apply(loaded, removing: removing)
                // Read after the log, so at least as new as `to` (a build that got further keeps its own).
                if read && to >= before { self.categoryInfos = categories }
                self.version = max(self.version, to)
                // A build in between: the carry was worked out for another index, nothing is kept.
                let carried = before == at ? carry : nil
                // Started under the lock: a catch-up that returns once this version is reached,
                // then waits for `carried()`, finds the carry running (found by an outside review).
                if self.beginCarry(from: before, to: self.version, carried, in: self.index) { self.startCarrying() }
                return true
            }
            if applied { self.onDelta() }
            return false
        }
        if rebuild { try await build(on: database) }
    }

    // MARK: - Answers (the list's steps: CatalogEngine+Page.swift; why a search missed: +Misses)

    /// `body` with the index, the scheduled books out of the catalog at `micros` (and the key
    /// naming that state) and the index's version, under the read lock.
    func reading<T>(at micros: Int64, _ body: (CatalogIndex, Bitset?, String, Int) -> T) -> T {
        lock.reading {
            let (offline, stateKey) = offlineBooks(at: micros)
            return body(index, offline, stateKey, version)
        }
    }

    /// The scheduled books out of the catalog at `now` and a key naming that state; computed once
    /// per schedule change or boundary passed (called under the read lock).
    private func offlineBooks(at now: Int64) -> (Bitset?, String) {
        if index.schedule.isEmpty { return (nil, "") }
        let changes = index.scheduleChanges
        if let known = scheduleState.withLockedValue({ state in
            state.changes == changes && state.version == version && now >= state.from && now < state.until ? state : nil
        }) {
            return (known.offline, known.offline == nil ? "" : "\u{1}o=\(known.from)")
        }
        // Named by the last schedule instant passed, not by `now`: after a change the same state
        // has the same name, so the answers the change carried are found again (a change to a
        // book's schedule is a change of its filters: the carry drops what it could reach).
        let (offline, since, until) = index.offline(at: now)
        scheduleState.withLockedValue { $0 = ScheduleState(changes: changes, version: version, from: since, until: until, offline: offline) }
        return (offline, offline == nil ? "" : "\u{1}o=\(since)")
    }

    /// `{"data": book}` for an active book `scope` leaves visible, nil otherwise.
    func book(_ id: Int, scope: CatalogScope? = nil, now: Date) -> ByteBuffer? {
        let micros = Int64((now.timeIntervalSince1970 * 1_000_000).rounded(.down))
        return lock.reading {
            if let scope, !index.isVisible(id, in: scope) { return nil }
            guard index.isLive(id, at: micros) else { return nil }
            guard let json = index.render(id, at: micros, in: scope?.country, locales: scope?.locales ?? []) else { return nil }
            return ByteBuffer(bytes: Array(#"{"data":"#.utf8) + json + [UInt8(ascii: "}")])
        }
    }
}
