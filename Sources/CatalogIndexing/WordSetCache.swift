import Core
import Synchronization

/// The catalog-wide sets of common search words, kept between answers at one index state.
///
/// A word matching many books (a short prefix as a parent types: "dra", "the") costs most of an
/// answer: the books holding it are ORed from all its lexemes' book lists. Different searches
/// share such words ("dra", "dra 4", "dra moon"), so a word whose lists hold at least
/// `threshold(capacity:)` entries keeps that set here (its finer sets are built per run of
/// blocks a relevance page reads, `CatalogIndex.fineSets`). Rare words are not kept (their
/// lists are short).
///
/// Kept per index `version` (a change keeps the sets whose lexemes it did not touch, `carry`) within `budget` bytes, in two generations like
/// the engine's other memos: past half the budget the current generation becomes the previous one.
public final class WordSetCache: Sendable {
    /// One word's set over the whole catalog: where it matches, in any field (or in the key's fields).
    final class Entry: Sendable {
        let any: Bitset
        var bytes: Int { any.words.count * 8 }
        init(any: Bitset) { self.any = any }
    }

    /// A word as its lexemes (ids, ascending): all its kept set depends on — two words reaching
    /// the same lexemes at other levels share it — and the fields the set counts (all three for
    /// `CatalogIndex.matching`; the title, or the title and author, for a relevance page's best
    /// fields, `CatalogIndex.narrowed`).
    struct Key: Hashable {
        let lexemes: [Int]
        var fields: UInt8 = 7
    }

    /// The cache at the index state being read (under the engine's read lock).
    public struct Reader: Sendable {
        let cache: WordSetCache
        let version: Int
        public init(_ cache: WordSetCache, version: Int) { self.cache = cache; self.version = version }
    }

    private struct State {
        var version = -1
        var current: [Key: Entry] = [:], previous: [Key: Entry] = [:]
        var bytes = 0
    }

    private let state = Mutex(State())
    /// At most this many bytes are kept (both generations together).
    public let budget: Int

    /// The sets a relevance page's tiers are made from (`CatalogIndex.narrowedPage`: a word's
    /// title, title-or-author, level and whole-word sets), kept apart within a budget of their
    /// own: up to six per word, they would push out the sets every search of that word reads.
    public let tiers: WordSetCache?

    public convenience init(budget: Int = 64 << 20) { self.init(budget: budget, tiers: true) }

    private init(budget: Int, tiers: Bool) {
        self.budget = budget
        self.tiers = tiers ? WordSetCache(budget: budget, tiers: false) : nil
    }

    /// The fewest book-list entries a word must have to be kept: past it, ORing the lists costs
    /// more than ANDing the kept set.
    static func threshold(capacity: Int) -> Int { max(1024, capacity / 64) }

    /// How many words are kept now (for tests and the profile).
    public var count: Int { state.withLock { $0.current.count + $0.previous.count } }

    func entry(_ key: Key, version: Int) -> Entry? {
        state.withLock { state in
            guard state.version == version else { return nil }
            if let entry = state.current[key] { return entry }
            guard let entry = state.previous.removeValue(forKey: key) else { return nil }
            Self.insert(entry, key, into: &state, budget: budget)
            return entry
        }
    }

    /// Moves the kept sets from index version `from` to `to` (a change of some books), less those
    /// built from a lexeme in `touched`: a kept set depends on its lexemes' book
    /// lists alone. Called under the index's write lock; a change that touched no lexeme moves
    /// them all at no cost.
    public func carry(from: Int, to: Int, touched lexemes: some Sequence<String>, in index: CatalogIndex) {
        tiers?.carry(from: from, to: to, touched: lexemes, in: index)
        let touched = lexemes.compactMap { index.lexemeID($0).map(Int.init) }.sorted()
        state.withLock { state in
            guard state.version == from, to >= from else { return }
            state.version = to   // (the same version: a change applied at a version already reached, the sets still filtered)
            guard !touched.isEmpty else { return }
            func stays(_ key: Key) -> Bool {
                // Each touched lexeme looked for in the key's (sorted, often long) list.
                key.lexemes.withUnsafeBufferPointer { lexemes in
                    !touched.contains { t in
                        var a = 0, b = lexemes.count
                        while a < b { let m = (a + b) / 2; if lexemes[m] < t { a = m + 1 } else { b = m } }
                        return a < lexemes.count && lexemes[a] == t
                    }
                }
            }
            // The keys first, then removed in place (iterating while removing would copy the dictionary).
            for key in state.current.keys.filter({ !stays($0) }) {
                state.bytes -= Self.bytes(state.current.removeValue(forKey: key)!, key)
            }
            for key in state.previous.keys.filter({ !stays($0) }) { state.previous.removeValue(forKey: key) }
        }
    }

    func keep(_ entry: Entry, _ key: Key, version: Int) {
        state.withLock { state in
            if version > state.version { Disposal.replace(&state, with: State(version: version)) }
            guard version == state.version, Self.bytes(entry, key) <= budget / 2 else { return }
            Self.insert(entry, key, into: &state, budget: budget)
        }
    }

    /// What keeping `entry` under `key` costs: its set and the key's lexemes (a short prefix's
    /// key lists thousands of lexemes, more bytes than its set in a small catalog).
    private static func bytes(_ entry: Entry, _ key: Key) -> Int { entry.bytes + key.lexemes.count * 8 }

    private static func insert(_ entry: Entry, _ key: Key, into state: inout State, budget: Int) {
        let bytes = Self.bytes(entry, key)
        if state.bytes + bytes > budget / 2 {
            Disposal.replace(&state.previous, with: state.current)   // (32 MB of sets, freed off the lock)
            state.current = [:]
            state.bytes = 0
        }
        state.current[key] = entry
        state.bytes += bytes
    }
}
