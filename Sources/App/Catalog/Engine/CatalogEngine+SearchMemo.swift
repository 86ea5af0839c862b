import CatalogIndexing
import Core
import Foundation
import NIOConcurrencyHelpers

/// What a search adds to its answer, kept per index version like the answers themselves: the
/// expansion of each search word (typo walk, stems, the sound-alike check), and for answers no scope narrows,
/// the rendered `did_you_mean` and `highlights` and the suggestions. A new version keeps what the
/// change could not reach (`CatalogEngine+Carry.swift`); a change of synonyms empties it, and answers computed
/// with other synonyms than the kept ones are not kept.
struct SearchMemo {
    /// Entries per generation (all three kinds together): past it, the current generation
    /// becomes the previous one and the previous one is dropped — one-off searches pass through
    /// without emptying what is in use (a looked-up entry of the previous generation is kept
    /// again in the current one).
    static let limit = 8192
    var version = -1
    var synonyms = Synonyms()
    var expansions = Generations<[SearchExpansion]>()
    var meta = Generations<[UInt8]>()
    var suggestions = Generations<[SuggestionDTO]>()
    /// Why a search found nothing (`missCause`), per answer key.
    var causes = Generations<SearchMisses.Cause>()
    /// The version this memo is being carried to (`AnswerMemo.carrying`).
    var carrying: Int?

    /// Values by key in two generations.
    struct Generations<Value> {
        var current: [String: Value] = [:]
        var previous: [String: Value] = [:]

        mutating func age() { previous = current; current.removeAll(keepingCapacity: true) }

        mutating func removeAll() { current.removeAll(keepingCapacity: true); previous.removeAll() }

        /// Removes `keys` from both generations.
        mutating func remove(_ keys: some Sequence<String>) {
            for key in keys {
                current.removeValue(forKey: key)
                previous.removeValue(forKey: key)
            }
        }
    }

    mutating func adopt(version: Int, synonyms: Synonyms) -> Bool {
        if version > self.version {
            guard carrying == nil else { return false }   // computed, not kept, until carried
            self = SearchMemo(version: version, synonyms: synonyms)
        }
        return version == self.version && synonyms == self.synonyms
    }

    /// The value kept under `key`, moved into the current generation when found in the previous
    /// one — within the limit, as a new entry is (`trim` first).
    mutating func lookup<T>(_ path: WritableKeyPath<SearchMemo, Generations<T>>, _ key: String) -> T? {
        if let value = self[keyPath: path].current[key] { return value }
        guard let value = self[keyPath: path].previous[key] else { return nil }
        trim()
        self[keyPath: path].current[key] = value
        return value
    }

    mutating func trim() {
        if expansions.current.count + meta.current.count + suggestions.current.count + causes.current.count > Self.limit {
            expansions.age(); meta.age(); suggestions.age(); causes.age()
        }
    }
}

extension CatalogEngine {
    /// `compute`d once per version, synonyms and `key` in `path` of the search memo.
    func searchMemoized<T>(_ path: WritableKeyPath<SearchMemo, SearchMemo.Generations<T>>, _ key: String, version: Int, synonyms: Synonyms,
                           _ compute: () -> T) -> T {
        if let known = searchMemo.withLockedValue({ memo in memo.adopt(version: version, synonyms: synonyms) ? memo.lookup(path, key) : nil }) {
            return known
        }
        let value = compute()
        searchMemo.withLockedValue { memo in
            guard memo.adopt(version: version, synonyms: synonyms) else { return }
            memo.trim()
            memo[keyPath: path].current[key] = value
        }
        return value
    }
}
