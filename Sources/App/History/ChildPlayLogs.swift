import Core
import FluentKit
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// A child's play log with what its answers show beside the plays: the books' references and
/// categories, the library, the categories' listing order — all read in one snapshot, at the
/// fingerprint (`ChildState.fingerprint`) that snapshot had.
final class LoadedPlayLog: Sendable {
    let child: Int
    let activity: Int
    let catalogVersion: Int
    let log: PlayLog
    let books: [Int: BookRefDTO]
    let categoriesOfBook: [Int: [Int]]
    let categories: [Int: InsightsController.StatsDTO.Category]
    let categoryRank: [Int: Int]
    let library: Set<Int>
    let rewrites: Int
    let categoryList: [(id: Int, dto: InsightsController.StatsDTO.Category)]
    /// The highest play id in the log (0 for none).
    let maxID: Int
    private let daysByZone = NIOLockedValueBox([String: [Int]]())

    init(child: Int, activity: Int, catalogVersion: Int, rewrites: Int, log: PlayLog, books: [Int: BookRefDTO], categoriesOfBook: [Int: [Int]],
         categories: [(id: Int, dto: InsightsController.StatsDTO.Category)], library: Set<Int>) {
        self.child = child; self.activity = activity; self.catalogVersion = catalogVersion; self.rewrites = rewrites; self.log = log
        self.categoryList = categories
        self.maxID = log.plays.map(\.id).max() ?? 0
        self.books = books; self.categoriesOfBook = categoriesOfBook; self.library = library
        self.categories = Dictionary(uniqueKeysWithValues: categories.map { ($0.id, $0.dto) })
        self.categoryRank = Dictionary(uniqueKeysWithValues: categories.enumerated().map { ($1.id, $0) })
    }

    var fingerprint: String { "\(activity)|\(catalogVersion)" }

    /// At least as new as `state`: every change the state's read saw is in this log.
    func covers(_ state: ChildState) -> Bool { activity >= state.activity && catalogVersion >= state.catalogVersion }

    /// Each play's local day in `zone`, computed once per zone.
    func days(in zone: TimeZone) -> [Int] {
        if let days = daysByZone.withLockedValue({ $0[zone.identifier] }) { return days }
        let days = log.days(in: zone)
        daysByZone.withLockedValue { $0[zone.identifier] = days }
        return days
    }

    /// Reads a child's log in one REPEATABLE READ snapshot; nil when it has more than `limit` plays
    /// or folded ones.
    ///
    /// With a `previous` log of the child, only what changed is read when the database says that
    /// is enough: no play was updated or deleted since (`plays_rewrites`, kept by the plays'
    /// trigger, `migrations/0017`) and the new plays (ids above the previous log's) make up the
    /// count — then the books already known and, at the same catalog version, the categories are
    /// kept. Otherwise everything is read again.
    static func read(child: Int, limit: Int, previous: LoadedPlayLog? = nil, on database: any Database,
                     counter: QueryCounter) async throws -> LoadedPlayLog? {
        try await database.transaction { db in
            let sql = db.sql(counting: counter)
            try await sql.raw("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").run()
            guard let state = try await sql.raw("""
                SELECT c.activity, c.plays_count, c.plays_rewrites, s.version,
                       EXISTS (SELECT 1 FROM play_fold_tails t WHERE t.child_id = c.id) AS folded
                  FROM children c CROSS JOIN catalog_state s WHERE c.id = \(bind: child)
                """).first() else { return nil }
            let count = try state.decode(column: "plays_count", as: Int.self)
            // A child with folded plays (PlayRetention) is answered in SQL, which reads the folds.
            guard count <= limit, try !state.decode(column: "folded", as: Bool.self) else { return nil }
            let rewrites = try state.decode(column: "plays_rewrites", as: Int.self)
            let version = try state.decode(column: "version", as: Int.self)
            var plays: [PlayLog.Play]
            var known = previous.map { $0.catalogVersion == version ? $0.books : [:] } ?? [:]
            var categoriesOfBook = previous.map { $0.catalogVersion == version ? $0.categoriesOfBook : [:] } ?? [:]
            if let previous, previous.rewrites == rewrites,
               case let added = try await readPlays(child: child, after: previous.maxID, on: sql), previous.log.count + added.count == count {
                plays = previous.log.plays + added
            } else {
                plays = try await readPlays(child: child, after: 0, on: sql)
                known = [:]
                categoriesOfBook = [:]
            }
            let missing = Set(plays.map(\.book)).subtracting(known.keys)
            if !missing.isEmpty {
                for row in try await sql.raw("""
                    SELECT \(BookRefDTO.columns), ARRAY(SELECT bc.category_id FROM book_categories bc WHERE bc.book_id = b.id) AS categories
                      FROM books b LEFT JOIN video_assets v ON v.book_id = b.id
                     WHERE b.id = ANY(\(bind: Array(missing)))
                    """).all() {
                    let book = try BookRefDTO(row: row)
                    known[book.id] = book
                    categoriesOfBook[book.id] = try row.decode(column: "categories", as: [Int].self)
                }
            }
            let library = try await sql.raw("SELECT book_id FROM library_entries WHERE child_id = \(bind: child)").all()
                .map { try $0.decode(column: "book_id", as: Int.self) }
            let categories: [(id: Int, dto: InsightsController.StatsDTO.Category)]
            if let previous, previous.catalogVersion == version {
                categories = previous.categoryList
            } else {
                categories = try await sql.raw("SELECT id, name, slug FROM categories ORDER BY display_order, name, id").all().map { row in
                    let id = try row.decode(column: "id", as: Int.self)
                    return (id: id, dto: InsightsController.StatsDTO.Category(
                        id: id, name: try row.decode(column: "name", as: String.self), slug: try row.decode(column: "slug", as: String.self)))
                }
            }
            return LoadedPlayLog(child: child, activity: try state.decode(column: "activity", as: Int.self), catalogVersion: version,
                                 rewrites: rewrites, log: PlayLog(plays), books: known, categoriesOfBook: categoriesOfBook,
                                 categories: categories, library: Set(library))
        }
    }

    /// The child's plays with ids above `id`, as one row of five arrays (decoding 10,000 rows
    /// column by column costs ~10 times more).
    private static func readPlays(child: Int, after id: Int, on sql: any SQLDatabase) async throws -> [PlayLog.Play] {
        let columns = try await sql.raw("""
            SELECT COALESCE(array_agg(id), '{}') AS ids, COALESCE(array_agg(book_id), '{}') AS books,
                   COALESCE(array_agg(position_seconds), '{}') AS positions, COALESCE(array_agg(completed), '{}') AS completed,
                   COALESCE(array_agg(played_at), '{}') AS played_at
              FROM plays WHERE child_id = \(bind: child) AND id > \(bind: id)
            """).first()!
        let ids = try columns.decode(column: "ids", as: [Int].self), bookIDs = try columns.decode(column: "books", as: [Int].self)
        let positions = try columns.decode(column: "positions", as: [Int].self)
        let completed = try columns.decode(column: "completed", as: [Bool].self)
        let playedAt = try columns.decode(column: "played_at", as: [Date].self)
        return ids.indices.map { i in
            PlayLog.Play(id: ids[i], book: bookIDs[i], position: positions[i], completed: completed[i], playedAt: playedAt[i])
        }
    }
}

/// Children's play logs kept in memory, so that every history page and statistic of a child
/// is computed from one read of its plays per change instead of a statement each.
///
/// A log is used only when it covers the request's `ChildState` (read after the request
/// arrived), so an answer is never older than the request. Requests needing a newer log share
/// one read (single-flight). Bounded: a child with more than `perChildLimit` plays is answered in
/// SQL, and past `totalLimit` plays in all the least recently used logs are dropped.
final class ChildPlayLogs: Sendable {
    static let perChildLimit = 100_000
    static let totalLimit = 2_000_000

    private struct Entry {
        var log: LoadedPlayLog?
        var loading: Task<LoadedPlayLog?, any Error>?
        var lastUse: UInt64
    }
    private struct State {
        var entries: [Int: Entry] = [:]
        var clock: UInt64 = 0
        var plays = 0
    }
    private let state = NIOLockedValueBox(State())

    /// Drops what is kept about `child` (a removed child).
    func forget(child: Int) {
        state.withLockedValue { state in
            if let log = state.entries.removeValue(forKey: child)?.log { state.plays -= log.log.count }
        }
    }

    /// The log of `child` covering it, or nil when the child is too large for memory.
    func log(for child: ChildState, app: Application) async throws -> LoadedPlayLog? {
        guard child.plays <= Self.perChildLimit else { return nil }
        let (found, pending) = state.withLockedValue { state -> (LoadedPlayLog?, Task<LoadedPlayLog?, any Error>?) in
            state.clock += 1
            state.entries[child.id]?.lastUse = state.clock
            if let log = state.entries[child.id]?.log, log.covers(child) { return (log, nil) }
            return (nil, state.entries[child.id]?.loading)
        }
        if let found { return found }
        // A read already under way may have started before this request's changes: use it only
        // when what it read covers them, otherwise read again.
        if let pending, let log = try await pending.value, log.covers(child) { return log }
        let task = state.withLockedValue { state -> Task<LoadedPlayLog?, any Error> in
            if let loading = state.entries[child.id]?.loading, loading != pending { return loading }
            let counter = app.appServices.queryCounter, db = app.db
            let previous = state.entries[child.id]?.log
            let task = Task { try await LoadedPlayLog.read(child: child.id, limit: Self.perChildLimit, previous: previous, on: db, counter: counter) }
            state.entries[child.id, default: Entry(lastUse: state.clock)].loading = task
            return task
        }
        let log = try await task.value
        state.withLockedValue { state in
            guard var entry = state.entries[child.id], entry.loading == task else { return }
            entry.loading = nil
            if let log, log.activity >= entry.log?.activity ?? -1 {
                state.plays += log.log.count - (entry.log?.log.count ?? 0)
                entry.log = log
            }
            state.entries[child.id] = entry.log == nil ? nil : entry
            Self.evict(&state)
        }
        // Read after this request's state, a log always covers it; nil: too large, or no child.
        guard let log, log.covers(child) else { return nil }
        return log
    }

    private static func evict(_ state: inout State) {
        guard state.plays > totalLimit else { return }
        for (id, entry) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) where state.plays > totalLimit {
            guard entry.loading == nil else { continue }
            state.plays -= entry.log?.log.count ?? 0
            state.entries[id] = nil
        }
    }
}

