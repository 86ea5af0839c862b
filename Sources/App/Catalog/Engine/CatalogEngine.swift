import CatalogIndexing
import Core
#if canImport(Glibc)
import Glibc
#endif
import FluentKit
import Foundation
import NIOConcurrencyHelpers
import PostgresKit
import PostgresNIO
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
    private let status = NIOLockedValueBox(State.off)
    private let updater = Updater()
    /// Answers already computed at the index's current version (exact: an answer depends only on
    /// the index, never on the clock; rights availability is rendered per request). Popular
    /// searches — many parents typing the same first letters — cost one computation per version.
    let memo = NIOLockedValueBox(AnswerMemo())
    let searchMemo = NIOLockedValueBox(SearchMemo())
    /// The scheduled books out of the catalog, valid from..<until for one index state.
    struct ScheduleState { var changes = -1; var version = -1; var from = Int64.min; var until = Int64.min; var offline: Bitset? }
    let scheduleState = NIOLockedValueBox(ScheduleState())
    struct AnswerMemo {
        typealias Entry = (answer: CatalogIndex.Answer, words: [String], forms: [[String]])
        static let limit = 4096
        var version = -1
        var answers: [String: Entry] = [:]
    }
    let logger: Logger

    /// Called once per change-log application (a metric).
    let onDelta: @Sendable () -> Void
    /// The database a build reads from on a connection of its own (`DATABASE_URL`), so a build is
    /// never queued behind requests for a pooled connection; nil: a pooled one (tests of the SQL).
    let buildURL: String?

    init(logger: Logger, buildURL: String? = nil, onDelta: @escaping @Sendable () -> Void = {}) {
        self.logger = logger
        self.buildURL = buildURL
        self.onDelta = onDelta
    }

    /// How this engine got ready: `"snapshot"` or `"build"`, and how long it took (seconds).
    struct Start: Sendable { var from: String; var seconds: Double; var loadSeconds: Double? }
    let howStarted = NIOLockedValueBox<Start?>(nil)

    /// `"start":{...}` for the probes' bodies (empty until ready).
    var startJSON: String {
        guard let start = howStarted.withLockedValue({ $0 }) else { return "" }
        let load = start.loadSeconds.map { String(format: #","load_seconds":%.3f"#, $0) } ?? ""
        return #","start":{"from":"\#(start.from)""# + load + String(format: #","seconds":%.3f}"#, start.seconds)
    }

    var state: State { status.withLockedValue { $0 } }
    var isReady: Bool { state == .ready }
    /// Loading, building or retrying a failed build: on its way to ready.
    var isStarting: Bool { [.loading, .building, .failed].contains(state) }
    var currentVersion: Int { lock.reading { version } }
    var bookCount: Int { lock.reading { index.count } }

    /// Builds the index from scratch (start-up, or a change log this instance can no longer follow).
    func build(on database: any Database) async throws {
        begin(.building)
        let started = Date()
        do {
            let (fresh, builtVersion) = try await withBuildConnection(database) { connection in
                try await self.load(on: connection)
            }
            lock.writing {
                index = fresh
                version = builtVersion
            }
            Self.returnFreedMemory()
            status.withLockedValue { $0 = .ready }
            howStarted.withLockedValue { $0 = Start(from: "build", seconds: Date().timeIntervalSince(started)) }
            logger.info("catalog engine built", metadata: ["books": .stringConvertible(fresh.count), "version": .stringConvertible(builtVersion),
                                                           "seconds": .string(String(format: "%.2f", Date().timeIntervalSince(started)))])
        } catch {
            status.withLockedValue { if $0 == .building { $0 = .failed } }
            throw error
        }
    }

    private func load(on connection: PostgresConnection) async throws -> (CatalogIndex, Int) {
        // One snapshot: the version and the books it describes.
        _ = try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
        do {
            var builtVersion = 0
            for try await v in try await connection.query("SELECT version FROM catalog_state", logger: logger).decode(Int.self) {
                builtVersion = v
            }
            let categories = try await CatalogLoader.categories(on: connection, logger: logger)
            var empty = CatalogIndex()
            empty.setCategories(categories.map { .init(id: $0.id, slug: $0.slug) })
            let indexer = BulkIndexer(empty)
            try await CatalogLoader.allBooks(categories: categories, on: connection, logger: logger) { await indexer.add($0) }
            let fresh = await indexer.finish()
            _ = try await connection.query("COMMIT", logger: logger)
            return (fresh, builtVersion)
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
            memo.withLockedValue { $0 = AnswerMemo(version: loadedVersion, answers: answers) }
        }
        Self.returnFreedMemory()
    }

    func markReady() { status.withLockedValue { $0 = .ready } }

    /// Sets the state unless the engine is already ready (a load or a build beginning or failing).
    func begin(_ state: State) { status.withLockedValue { if $0 != .ready { $0 = state } } }

    /// While a snapshot loads, waits (polling, cheaply) until the engine is ready or `seconds`
    /// pass; true when it is ready. A load is seconds at most, and a request that waits for it is
    /// answered from the engine instead of by a slow SQL answer competing with the load for CPU.
    func waitWhileLoading(seconds: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while state == .loading && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return isReady
    }

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

    /// Applies every change logged after this instance's version, up to the current one.
    private func applyChanges(on database: any Database) async throws {
        let from = lock.reading { version }
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
            let categories = try await CatalogLoader.categories(on: connection, logger: self.logger)
            let list = Array(ids)
            let loaded = list.isEmpty ? [] : try await CatalogLoader.books(ids: list, categories: categories, on: connection, logger: self.logger)
            let present = Set(loaded.map(\.id))
            self.lock.writing {
                let before = self.version
                // The changed books' lexemes before and after: what decides which answers survive.
                let carry = namesChanged ? nil : MemoCarry(lexemes: list.flatMap { self.index.lexemes(of: $0) } + loaded.flatMap { $0.lexemes.map(\.0) })
                if namesChanged { self.index.setCategories(categories.map { .init(id: $0.id, slug: $0.slug) }) }
                self.index.apply(loaded, removing: list.filter { !present.contains($0) })
                self.version = max(self.version, to)
                self.carryMemo(from: before, to: self.version, carry)
            }
            self.onDelta()
            return false
        }
        if rebuild { try await build(on: database) }
    }

    // MARK: - Answers

    /// The list response body (`{"data": [...], "meta": {...}}`) and its total. `scope` narrows
    /// it (a child's family controls; the caller's country, when some books are licensed only
    /// elsewhere); narrowed answers are computed each time from the sets, not kept. Rights are
    /// evaluated in the scope's country.
    func page(_ parameters: CatalogParameters, scope: CatalogScope? = nil, now: Date, synonyms: Synonyms = Synonyms()) -> (body: ByteBuffer, total: Int) {
        let micros = Int64((now.timeIntervalSince1970 * 1_000_000).rounded(.down))
        return lock.reading {
            // Scheduled books out of the catalog now: kept answers name the schedule state they saw.
            let (offline, stateKey) = offlineBooks(at: micros)
            let narrowing = scope.flatMap { index.narrows($0) ? $0 : nil }
            func solve(_ parameters: CatalogParameters, _ expansions: [SearchExpansion]) -> CatalogIndex.Answer {
                narrowing.map { index.answer(parameters, expansions: expansions, scope: $0, offline: offline) }
                    ?? memoized(parameters.cacheKey + stateKey, words: parameters.words, synonyms: synonyms, version: version) {
                        index.answer(parameters, expansions: expansions, offline: offline)
                    }
            }
            let expansions = searchMemoized(\.expansions, parameters.words.joined(separator: " "), version: version, synonyms: synonyms) {
                index.expansions(parameters.words, synonyms: synonyms)
            }
            let answer = solve(parameters, expansions)
            // did_you_mean and highlights: kept with the answer when no scope narrows it.
            func searchMeta() -> [UInt8] {
                var meta = JSONWriter()
                guard !expansions.isEmpty else { return [] }
                if let other = SearchMeta.correction(parameters, expansions: expansions, total: answer.total, vocabulary: index.typos),
                   solve(other, index.expansions(other.words, synonyms: synonyms)).total > answer.total {
                    meta.raw("\"did_you_mean\":"); meta.string(other.text ?? ""); meta.raw(",")
                }
                meta.raw("\u{1}")   // where the facets go
                meta.raw(",\"highlights\":")
                HighlightDTO.json(answer.ids.map { id in
                    let fields = index.displayFields(id)
                    return HighlightDTO(id: id, title: fields.title, author: fields.author, language: fields.language, expansions: expansions)
                }, into: &meta)
                return meta.bytes
            }
            let meta = narrowing == nil
                ? searchMemoized(\.meta, parameters.cacheKey + stateKey, version: version, synonyms: synonyms, searchMeta) : searchMeta()
            let split = meta.firstIndex(of: 1) ?? meta.startIndex
            var out: [UInt8] = []
            out.reserveCapacity(1024 + answer.ids.count * 600)
            out.append(contentsOf: Array(#"{"data":["#.utf8))
            index.render(answer.ids, at: micros, in: scope?.country, into: &out)
            out.append(contentsOf: Array(#"],"meta":{"#.utf8))
            out.append(contentsOf: meta[..<split])
            out.append(contentsOf: Array(#""facets":"#.utf8))
            out.append(contentsOf: FacetsDTO(answer, categories: index.categories).json)
            if split < meta.endIndex { out.append(contentsOf: meta[(split + 1)...]) }
            let page = parameters.page
            out.append(contentsOf: Array(#","page":\#(page.page),"per_page":\#(page.perPage),"total_count":\#(answer.total),"total_pages":\#(page.totalPages(for: answer.total))}}"#.utf8))
            return (ByteBuffer(bytes: out), answer.total)
        }
    }

    /// `body` with the index, the scheduled books out of the catalog at `micros` (and the key
    /// naming that state) and the index's version, under the read lock.
    func reading<T>(at micros: Int64, _ body: (CatalogIndex, Bitset?, String, Int) -> T) -> T {
        lock.reading {
            let (offline, stateKey) = offlineBooks(at: micros)
            return body(index, offline, stateKey, version)
        }
    }

    /// Why a search found nothing in `scope` (`SearchMisses`): the same search without the
    /// child's controls, then in every country, then with scheduled books not yet live.
    func missCause(_ parameters: CatalogParameters, scope: CatalogScope?, now: Date, synonyms: Synonyms) -> SearchMisses.Cause {
        let micros = Int64((now.timeIntervalSince1970 * 1_000_000).rounded(.down))
        return lock.reading {
            let (offline, _) = offlineBooks(at: micros)
            let expansions = index.expansions(parameters.words, synonyms: synonyms)
            var counting = parameters
            counting.page = PageRequest(page: 1, perPage: 1)
            func total(_ scope: CatalogScope?, _ offline: Bitset?) -> Int {
                let narrowing = scope.flatMap { index.narrows($0) ? $0 : nil }
                return index.answer(counting, expansions: expansions, scope: narrowing, offline: offline).total
            }
            if let scope, !scope.isEmpty, total(CatalogScope(country: scope.country), offline) > 0 { return .hiddenByControls }
            if total(nil, offline) > 0 { return .licensedElsewhere }
            if offline != nil, total(nil, nil) > 0 { return .notLiveYet }
            return .notInCatalog
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
        let (offline, until) = index.offline(at: now)
        scheduleState.withLockedValue { $0 = ScheduleState(changes: changes, version: version, from: now, until: until, offline: offline) }
        return (offline, offline == nil ? "" : "\u{1}o=\(now)")
    }

    /// `{"data": book}` for an active book `scope` leaves visible, nil otherwise.
    func book(_ id: Int, scope: CatalogScope? = nil, now: Date) -> ByteBuffer? {
        let micros = Int64((now.timeIntervalSince1970 * 1_000_000).rounded(.down))
        return lock.reading {
            if let scope, !index.isVisible(id, in: scope) { return nil }
            guard index.isLive(id, at: micros) else { return nil }
            guard let json = index.render(id, at: micros, in: scope?.country) else { return nil }
            return ByteBuffer(bytes: Array(#"{"data":"#.utf8) + json + [UInt8(ascii: "}")])
        }
    }

    /// Gives the build's transient allocations (rows, strings, the replaced index) back to the
    /// system, so resident memory is what the index holds.
    private static func returnFreedMemory() {
        #if canImport(Glibc)
        // glibc's malloc_trim (not in the Glibc module's headers)
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        #endif
    }

    /// A connection of the build's own when `buildURL` names one, else one from the pool.
    private func withBuildConnection<T: Sendable>(_ database: any Database, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        guard let buildURL else { return try await withConnection(database, body) }
        return try await DirectConnection.open(url: buildURL, logger: logger, body)
    }

    private func withConnection<T: Sendable>(_ database: any Database, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        guard let postgres = database as? any PostgresDatabase else { throw Abort(.internalServerError, reason: "the catalog engine needs PostgreSQL") }
        return try await postgres.withConnection { connection in
            connection.eventLoop.makeFutureWithTask { try await body(connection) }
        }.get()
    }

    /// One change application at a time; callers whose version it reached return without another.
    ///
    /// Whoever sees a finished application clears it (not only the caller that started it): a
    /// waiter that needs a newer version must never find the old, finished one still registered
    /// — awaiting a finished task does not suspend, so it would spin on the actor forever, and
    /// every later catch-up would queue behind it.
    private actor Updater {
        private var running: Task<Void, any Error>?

        func run(until done: @Sendable () -> Bool, _ work: @escaping @Sendable () async throws -> Void) async throws {
            while !done() {
                let task = running ?? Task { try await work() }
                running = task
                let result = await task.result
                if running == task { running = nil }
                if case .failure(let error) = result, !done() { throw error }
            }
        }
    }
}

