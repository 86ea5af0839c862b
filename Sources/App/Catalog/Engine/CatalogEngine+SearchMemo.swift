import CatalogIndexing
import Core
import Foundation
import NIOConcurrencyHelpers
import Synchronization

/// A number no memo had before: an answer or search memo gets one when it is made or emptied, so
/// a carry that read a memo cannot take a later one that came back to the same version and chain
/// (a change that did not follow emptied it, then the same versions followed) for it
/// (`finishCarry`): what it worked out from the old entries would be applied to new ones.
enum MemoEpoch {
    private static let last = Atomic<Int>(0)
    static func next() -> Int { last.wrappingAdd(1, ordering: .relaxed).newValue }
}

/// What a search adds to its answer, kept per index version like the answers themselves: the
/// expansion of each search word (typo walk, stems, the sound-alike check), and for answers no scope narrows,
/// the rendered `did_you_mean` and `highlights` and the suggestions. A new version keeps what the
/// change could not reach (`CatalogEngine+Carry.swift`); a change of synonyms empties it, and answers computed
/// with other synonyms than the kept ones are not kept.
struct SearchMemo {
    /// Entries per generation of each kind: past it, that kind's current generation becomes its
    /// previous one and the previous one is dropped — one-off searches pass through without
    /// emptying what is in use (a looked-up entry of the previous generation is kept again in the
    /// current one).
    static let limit = 32768
    /// Expansions are per word and shared by every search holding it, while a page's meta and a
    /// miss's cause are per request: the words get generations of their own, so a stream of
    /// one-off searches (a meta each, half of them a cause) does not push out the words the next
    /// searches type again (~1 kB a word: ≤ 64 MB at the limit, both generations).
    static let expansionsLimit = 32768
    var version = -1
    /// Which memo this is (`MemoEpoch`): every memo made anew has a number of its own.
    var epoch = MemoEpoch.next()
    var synonyms = Synonyms()
    var expansions = Generations<[SearchExpansion]>(limit: expansionsLimit)
    /// A page's meta is bytes of up to 100 books' highlights: its generations also age past 32 MB.
    var meta = Generations<[UInt8]>(byteLimit: 32 << 20)
    var suggestions = Generations<[SuggestionDTO]>()
    /// Why a search found nothing (`missCause`), per answer key.
    var causes = Generations<SearchMisses.Cause>()
    /// The changes this memo is being carried through (`AnswerMemo.chain`).
    var chain: [(to: Int, carry: MemoCarry)] = []
    var carrying: Int? { chain.last?.to }
    /// What is computed while the memo is carried, kept at the version it is carried to: it
    /// joins the memo there (`joinNext`; `AnswerMemo.next`). (An array: a struct cannot hold itself.)
    var next: [SearchMemo] = []

    /// Values by key in two generations of at most `limit` entries each.
    struct Generations<Value: Sendable> {
        var limit = SearchMemo.limit
        /// For values that are bytes: the bytes a generation holds at most (`bytes` so far).
        var byteLimit = Int.max
        var bytes = 0
        var current: [String: Value] = [:]
        var previous: [String: Value] = [:]

        /// The previous generation dropped is freed off the lock (`Disposal`).
        mutating func age() { Disposal.replace(&previous, with: current); current.removeAll(keepingCapacity: true); bytes = 0 }

        mutating func removeAll() { Disposal.replace(&current, with: [:]); Disposal.replace(&previous, with: [:]); bytes = 0 }

        /// Keeps `value` under `key` in the current generation (aged first when full).
        mutating func keep(_ value: Value, _ key: String) {
            let cost = byteLimit == .max ? 0 : (value as? [UInt8])?.count ?? 0
            if current[key] == nil && (current.count >= limit || bytes + cost > byteLimit) { age() }
            current[key] = value
            bytes += cost
        }

        /// The value kept under `key`, left where it is (a memo being carried does not change).
        func peek(_ key: String) -> Value? { current[key] ?? previous[key] }

        /// The value kept under `key`, moved into the current generation when found in the previous one.
        mutating func lookup(_ key: String) -> Value? {
            if let value = current[key] { return value }
            guard let value = previous[key] else { return nil }
            keep(value, key)
            return value
        }

        /// Keeps every value of `other` (its previous generation first).
        mutating func join(_ other: Generations) {
            for (key, value) in other.previous { keep(value, key) }
            for (key, value) in other.current { keep(value, key) }
        }

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
            guard carrying == nil else { return false }   // computed, kept aside (`next`) until carried
            Disposal.replace(&self, with: SearchMemo(version: version, synonyms: synonyms))
        }
        return version == self.version && synonyms == self.synonyms
    }

    /// Keeps `value`, computed at the version the memo is carried to (`version`), for when it is carried there.
    mutating func keepNext<T: Sendable>(_ path: WritableKeyPath<SearchMemo, Generations<T>>, _ value: T, _ key: String, at version: Int) {
        if next.first?.version != version { next = [SearchMemo(version: version, synonyms: synonyms)] }
        next[0][keyPath: path].keep(value, key)
    }

    /// The value computed at `version` while the memo is carried there, if any.
    func peekNext<T: Sendable>(_ path: WritableKeyPath<SearchMemo, Generations<T>>, _ key: String, at version: Int) -> T? {
        guard let next = next.first, next.version == version else { return nil }
        return next[keyPath: path].peek(key)
    }

    /// The memo carried to `version`: what was computed at it joins (older ones go).
    mutating func joinNext() {
        guard let joining = next.first, joining.version <= version else { return }
        next = []
        guard joining.version == version, joining.synonyms == synonyms else { return }
        expansions.join(joining.expansions)
        meta.join(joining.meta)
        suggestions.join(joining.suggestions)
        causes.join(joining.causes)
    }

    /// The value kept under `key` in `path` (`Generations.lookup`).
    mutating func lookup<T: Sendable>(_ path: WritableKeyPath<SearchMemo, Generations<T>>, _ key: String) -> T? {
        self[keyPath: path].lookup(key)
    }
}

extension CatalogEngine {
    /// `compute`d once per version, synonyms and `key` in `path` of the search memo. While the
    /// memo is carried to `version`, a kept value is served when `stays` finds no carry of the
    /// chain reaches it (`CarryCheck`, with the memo's version the chain starts from; nil:
    /// computed until carried).
    func searchMemoized<T: Sendable>(_ path: WritableKeyPath<SearchMemo, SearchMemo.Generations<T>>, _ key: String, version: Int, synonyms: Synonyms,
                           stays: ((T, _ base: Int, inout CarryCheck) -> Bool)? = nil, _ compute: () -> T) -> T {
        let (known, carried) = searchMemo.withLockedValue { memo -> (T?, (T, Int, [MemoCarry])?) in
            if memo.adopt(version: version, synonyms: synonyms) { return (memo.lookup(path, key), nil) }
            guard memo.carrying == version, memo.synonyms == synonyms else { return (nil, nil) }
            if let value = memo.peekNext(path, key, at: version) { return (value, nil) }
            guard stays != nil, let value = memo[keyPath: path].peek(key) else { return (nil, nil) }
            return (nil, (value, memo.version, memo.chain.map(\.carry)))
        }
        if let known { return known }
        if let (value, base, carries) = carried, let stays,
           carries.allSatisfy({ carry in var check = CarryCheck(carry); return stays(value, base, &check) }) { return value }
        let value = compute()
        searchMemo.withLockedValue { memo in
            if memo.adopt(version: version, synonyms: synonyms) { return memo[keyPath: path].keep(value, key) }
            // Computed while the memo is carried to `version`: kept for when it is there.
            if memo.carrying == version, memo.synonyms == synonyms { memo.keepNext(path, value, key, at: version) }
        }
        return value
    }
}
