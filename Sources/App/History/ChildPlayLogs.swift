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
                """).first(decoding: LogState.self, keyDecodingStrategy: .convertFromSnakeCase) else { return nil }
            let count = state.playsCount
            // A child with folded plays (PlayRetention) is answered in SQL, which reads the folds.
            guard count <= limit, !state.folded else { return nil }
            let rewrites = state.playsRewrites
            let version = state.version
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
                    """).all(decoding: BookRow.self, keyDecodingStrategy: .convertFromSnakeCase) {
                    known[row.book.id] = row.book
                    categoriesOfBook[row.book.id] = row.categories
                }
            }
            let library = try await sql.raw("SELECT book_id FROM library_entries WHERE child_id = \(bind: child)")
                .all(decoding: LibraryRow.self, keyDecodingStrategy: .convertFromSnakeCase).map(\.bookId)
            let categories: [(id: Int, dto: InsightsController.StatsDTO.Category)]
            if let previous, previous.catalogVersion == version {
                categories = previous.categoryList
            } else {
                categories = try await sql.raw("SELECT id, name, slug FROM categories ORDER BY display_order, name, id")
                    .all(decoding: CategoryRow.self).map { row in
                        (id: row.id, dto: InsightsController.StatsDTO.Category(id: row.id, name: row.name, slug: row.slug))
                    }
            }
            return LoadedPlayLog(child: child, activity: state.activity, catalogVersion: version,
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
            """).first(decoding: PlayColumns.self, keyDecodingStrategy: .convertFromSnakeCase)!
        let ids = columns.ids, bookIDs = columns.books, positions = columns.positions
        let completed = columns.completed, playedAt = columns.playedAt
        return ids.indices.map { i in
            PlayLog.Play(id: ids[i], book: bookIDs[i], position: positions[i], completed: completed[i], playedAt: playedAt[i])
        }
    }
}

extension LoadedPlayLog {
    /// The child's counters and the catalog version, read first.
    struct LogState: Decodable { let activity: Int; let playsCount: Int; let playsRewrites: Int; let version: Int; let folded: Bool }
    /// A book's reference (`BookRefDTO.columns`) and its categories.
    struct BookRow: Decodable {
        let book: BookRefDTO
        let categories: [Int]
        enum CodingKeys: String, CodingKey { case categories }
        init(from decoder: any Decoder) throws {
            book = BookRefDTO(try BookRefDTO.Row(from: decoder))
            categories = try decoder.container(keyedBy: CodingKeys.self).decode([Int].self, forKey: .categories)
        }
    }
    struct LibraryRow: Decodable { let bookId: Int }
    struct CategoryRow: Decodable { let id: Int; let name: String; let slug: String }
    /// The plays as one row of five arrays.
    struct PlayColumns: Decodable { let ids: [Int]; let books: [Int]; let positions: [Int]; let completed: [Bool]; let playedAt: [Date] }
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

