import CatalogIndexing
import Core
import NIOConcurrencyHelpers

/// What a change of the catalog leaves of the memos (`MemoCarry`: which answers it cannot have
/// reached), in two steps. `beginCarry`, under the index's write lock with the change, moves the
/// sets kept per index state and marks the memos as carried to the new version: until they are,
/// the memos stay as they were at the old version, and a request at the new version is served a
/// kept entry the carry does not reach (vetted on the spot: `CarryCheck`), else computed and not
/// kept. `finishCarry` then — after the lock, in a task of its own — removes the entries the
/// change reaches and moves the memos to the new version.
///
/// Visiting every kept answer and search under the write lock held every request for ~7 ms per
/// change, and before it, every request that read the new version waited for it: the p99 of
/// traffic with writes.
extension CatalogEngine {
    /// Under the index's write lock, with the change from `from` to `to` applied to `index`:
    /// whether the memos wait for `finishCarry` (else they were emptied, or nothing changed).
    func beginCarry(from: Int, to: Int, _ carry: MemoCarry?, in index: CatalogIndex) -> Bool {
        carrySets(from: from, to: to, carry, in: index)
        // A change applied at a version already reached (a build went further) keeps nothing.
        let carried = carry != nil && to > from
        let answers = memo.withLockedValue { memo in
            guard carried, memo.version == from, memo.carrying == nil else {
                memo.removeAll()
                memo.version = to
                return false
            }
            memo.carrying = to
            memo.carry = carry
            return true
        }
        let search = searchMemo.withLockedValue { memo in
            guard carried, memo.version == from, memo.carrying == nil else {
                memo = SearchMemo(version: to, synonyms: memo.synonyms)
                return false
            }
            memo.carrying = to
            memo.carry = carry
            return true
        }
        return answers || search
    }

    /// `finishCarry` in a task of its own (`merging`), counted and timed (`carries`).
    func startCarry(from: Int, to: Int, _ carry: MemoCarry) {
        merging.withLockedValue {
            $0 = Task {
                let start = ContinuousClock.now
                self.finishCarry(from: from, to: to, carry)
                let took = start.duration(to: .now)
                self.carries.wrappingAdd(1, ordering: .relaxed)
                self.carryMicroseconds.wrappingAdd(Int(took.components.seconds) * 1_000_000 + Int(took.components.attoseconds / 1_000_000_000_000), ordering: .relaxed)
            }
        }
    }

    /// Removes from the memos the entries `carry` reaches and moves them from `from` to `to` —
    /// unless another change came first (it emptied them).
    func finishCarry(from: Int, to: Int, _ carry: MemoCarry) {
        whileCarrying.withLockedValue { $0 }?()
        var check = CarryCheck(carry)
        // No request changes a memo being carried: copies (copy-on-write) are read outside its
        // lock, and let go before the memos change — removing in place then copies nothing.
        typealias Answers = [String: AnswerMemo.Entry]
        var answers = memo.withLockedValue { memo -> (current: Answers, older: Answers)? in
            memo.version == from && memo.carrying == to ? (memo.answers, memo.older) : nil
        }
        typealias Search = (expansions: [[String: [SearchExpansion]]], meta: [String], synonyms: Synonyms)
        var search = searchMemo.withLockedValue { memo -> Search? in
            guard memo.version == from && memo.carrying == to else { return nil }
            return ([memo.expansions.current, memo.expansions.previous], Array(memo.meta.current.keys) + memo.meta.previous.keys, memo.synonyms)
        }
        var goneAnswers: [String] = [], goneExpansions: [String] = [], goneMeta: [String] = []
        if let kept = answers {
            goneAnswers = kept.current.compactMap { check.reaches($1, $0) ? $0 : nil } + kept.older.compactMap { check.reaches($1, $0) ? $0 : nil }
        }
        if let kept = search {
            // A word's forms come with its kept expansion (made with the memo's synonyms).
            goneExpansions = kept.expansions.joined().compactMap { key, expansions in
                check.reaches(expansionsOf: key, expansions, synonyms: kept.synonyms) ? key : nil
            }
            // (The dictionaries bound once: this runs for every kept page; its answer checked
            // again — the verdicts are known by now — rather than looked up among those gone.)
            let current = answers?.current ?? [:], older = answers?.older ?? [:]
            goneMeta = kept.meta.filter { key in
                let answer = CarryCheck.answerKey(ofMeta: key)
                let entry = current[answer] ?? older[answer]
                return !check.metaStays(with: entry, answerReached: entry.map { check.reaches($0, answer) } ?? true)
            }
        }
        let carryingAnswers = answers != nil, carryingSearch = search != nil
        answers = nil
        search = nil
        if carryingAnswers {
            memo.withLockedValue { memo in
                guard memo.version == from, memo.carrying == to else { return }
                for key in goneAnswers {
                    memo.answers.removeValue(forKey: key)
                    memo.older.removeValue(forKey: key)
                }
                memo.version = to
                memo.carrying = nil
                memo.carry = nil
            }
        }
        guard carryingSearch else { return }
        searchMemo.withLockedValue { memo in
            guard memo.version == from, memo.carrying == to else { return }
            memo.expansions.remove(goneExpansions)
            memo.meta.remove(goneMeta)
            if !carry.changesNothing {
                memo.suggestions.removeAll()
                memo.causes.removeAll()
            }
            memo.version = to
            memo.carrying = nil
            memo.carry = nil
        }
    }

    /// Waits until the memos carried through the last change are (tests; a snapshot's answers).
    func carried() async {
        await merging.withLockedValue { $0 }?.value
    }

    /// The sets kept per index state follow: a common word's catalog-wide set stays unless the
    /// change touched one of its lexemes (`WordSetCache.carry`), a scope's books and a country's
    /// verdict stay unless a book's filters changed or a book came or went (`MemoCarry.browsing`)
    /// — or, for a change of territory rules alone, unless the scope is in a country it reaches.
    private func carrySets(from: Int, to: Int, _ carry: MemoCarry?, in index: CatalogIndex) {
        guard let carry else { return scopeSets.withLockedValue { $0 = ScopeBooks() } }
        wordSets.carry(from: from, to: to, touched: carry.lexemes, in: index)
        scopeSets.withLockedValue { kept in
            // Emptied, not left to the version: a change applied at a version already reached
            // (a build racing a catch-up) must not leave sets it touched.
            if carry.browsing { kept = ScopeBooks(); return }
            if let countries = carry.territorial?.countries {
                for country in countries { kept.countries[country] = nil }
                kept.sets = kept.sets.filter { key, _ in
                    Self.keptCountry(key).map { $0 != Self.unknownCountry && !countries.contains($0) } ?? true
                }
            }
            if kept.version == from { kept.version = to }
        }
    }

    /// The country whose catalog a kept key names (the scope's `memoKey` ends it, after `k`):
    /// nil when none (an answer no scope narrows, the whole catalog; a scope without a country),
    /// `unknownCountry` when the key does not say clearly.
    static func keptCountry(_ key: String) -> String? {
        // Bytes, not characters: this runs for every kept answer at a change of territory rules.
        let bytes = key.utf8
        guard let scope = bytes.lastIndex(of: 2) else { return nil }
        guard let k = bytes[scope...].lastIndex(of: UInt8(ascii: "k")) else { return unknownCountry }
        let country = bytes[bytes.index(after: k)...]
        if country.isEmpty { return nil }
        return country.count == 2 && country.allSatisfy({ (65...90).contains($0) }) ? String(Substring(country)) : unknownCountry
    }

    static let unknownCountry = "*"
}
