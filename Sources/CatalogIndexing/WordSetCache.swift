import Synchronization

/// The catalog-wide sets of common search words, kept between answers at one index state.
///
/// A word matching many books (a short prefix as a parent types: "dra", "the") costs most of an
/// answer: its lexemes' book lists are read twice, once for the books holding it and once for its
/// finer sets. Different searches share such words ("dra", "dra 4", "dra moon"), so a word whose
/// lists hold at least `threshold(capacity:)` entries keeps its sets here: where it matches in any
/// field, and its six finer sets (`CatalogIndex.WordSets`) over every block it occupies, from
/// which an answer copies the blocks it needs. Rare words are not kept (their lists are short).
///
/// Kept per index `version` (a change empties it) within `budget` bytes, in two generations like
/// the engine's other memos: past half the budget the current generation becomes the previous one.
public final class WordSetCache: Sendable {
    /// One word's sets over the whole catalog.
    final class Entry: Sendable {
        /// Where the word matches, in any field.
        let any: Bitset
        /// Per block of the id range, its position among the blocks `any` occupies (-1: none).
        let slots: [Int32]
        /// The six finer sets (`WordSets.Kind` order), `width` 64-bit words each.
        let sets: [UInt64]
        let width: Int
        var bytes: Int { any.words.count * 8 + slots.count * 4 + sets.count * 8 }

        init(any: Bitset, slots: [Int32], sets: [UInt64], width: Int) {
            self.any = any; self.slots = slots; self.sets = sets; self.width = width
        }
    }

    /// A word as its lexemes and levels (`id << 2 | level`) and its whole-word lexeme.
    struct Key: Hashable {
        let lexemes: [Int]
        let whole: Int?
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

    public init(budget: Int = 64 << 20) { self.budget = budget }

    /// The fewest book-list entries a word must have to be kept: past it, reading the lists costs
    /// more than copying the kept sets.
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

    func keep(_ entry: Entry, _ key: Key, version: Int) {
        state.withLock { state in
            if version > state.version { state = State(version: version) }
            guard version == state.version, entry.bytes <= budget / 2 else { return }
            Self.insert(entry, key, into: &state, budget: budget)
        }
    }

    private static func insert(_ entry: Entry, _ key: Key, into state: inout State, budget: Int) {
        if state.bytes + entry.bytes > budget / 2 {
            state.previous = state.current
            state.current = [:]
            state.bytes = 0
        }
        state.current[key] = entry
        state.bytes += entry.bytes
    }
}

extension WordSetCache.Entry {
    /// Copies the six sets' words of `blocks` (block indices of the id range, each one `any`
    /// occupies) into `six` (`blocks.count` words per set).
    func copy(into six: UnsafeMutableBufferPointer<UInt64>, blocks: UnsafeBufferPointer<Int>) {
        let target = blocks.count
        sets.withUnsafeBufferPointer { sets in
            slots.withUnsafeBufferPointer { slots in
                for (k, w) in blocks.enumerated() {
                    guard w < slots.count else { continue }
                    let s = Int(slots[w])
                    guard s >= 0 else { continue }
                    for kind in 0..<6 { six[kind * target + k] = sets[kind * width + s] }
                }
            }
        }
    }
}
