import CatalogIndexing
import Core
import Foundation

extension CatalogEngine {
    /// Answers kept at one index version, in two generations: when the newer one fills up it
    /// becomes the older, and an answer found in the older moves back — so the answers in use
    /// stay while one-off searches pass through (what an LRU does, at a dictionary's cost).
    struct AnswerMemo {
        /// An answer, its search words and their forms, and its filters (nil: unknown; a search's
        /// say whether it is in title order). A class: the carry visits every entry its change may reach,
        /// and a struct of five arrays was retained and released five times over at each visit.
        final class Entry: Sendable {
            let answer: CatalogIndex.Answer
            /// Its words and their forms, shared with the answers kept with the same words.
            let group: WordGroup
            var words: [String] { group.words }
            var forms: [[String]] { group.forms }
            let filters: MemoCarry.BrowseFilters?
            /// A browse's scope, order and page's end: what patches it through a change
            /// (`MemoCarry.patched`; nil: dropped when reached — not kept in a snapshot).
            let counting: MemoCarry.BrowseCounting?
            init(_ answer: CatalogIndex.Answer, group: WordGroup, _ filters: MemoCarry.BrowseFilters?, counting: MemoCarry.BrowseCounting? = nil) {
                self.answer = answer; self.group = group; self.filters = filters; self.counting = counting
            }
            convenience init(_ answer: CatalogIndex.Answer, _ words: [String], _ forms: [[String]], _ filters: MemoCarry.BrowseFilters?,
                             counting: MemoCarry.BrowseCounting? = nil) {
                self.init(answer, group: words.isEmpty ? .browsing : WordGroup(words, forms), filters, counting: counting)
            }

            /// The same entry with `answer` (patched through a change).
            func with(_ answer: CatalogIndex.Answer) -> Entry { Entry(answer, group: group, filters, counting: counting) }
        }
        /// Answers per generation: the repeated mix of the bench (~6,000 paths) asked in five
        /// children's scopes is ~30,000 keys — at 4,096 three quarters of the 40 tablets' answers
        /// were computed. The carry visits the kept answers a change may reach, after it, off the
        /// lock, and a turn frees nothing under it: 65,536 (the 40 tablets at a million books
        /// computed 16–20 % of their answers instead of 17–21 %, docs/performance.md).
        static let limit = 65536
        var version = -1
        /// Which memo this is (`MemoEpoch`): a new number when it is made or emptied (`removeAll`).
        var epoch = MemoEpoch.next()
        var answers: [String: Entry] = [:]
        var older: [String: Entry] = [:]
        /// Their keys by word group, per generation: what a carry visits (`Members`).
        var members = Members(), olderMembers = Members()
        /// How many times the newer generation became the older (a carry's lists apply only to the generations it read).
        var turns = 0
        /// The changes these answers are being carried through (`finishCarry`), in order: the
        /// versions they lead to and their carries. Until they are, an answer at the last one is
        /// served from them when no carry of the chain reaches it (`CarryCheck`), else computed
        /// and kept aside (`next`).
        var chain: [(to: Int, carry: MemoCarry)] = []
        /// The version these answers are being carried to (nil: none).
        var carrying: Int? { chain.last?.to }
        /// Answers computed while the memo is carried, at the version it is carried to (every
        /// request then reads that version: a change waits for the index's readers). They join
        /// the memo when its carry reaches that version (`joinNext`); a further change leaves them
        /// for those computed at the newer version. Until carries kept nothing computed during
        /// them, and at ten changes a second carries run most of the time: a scope's first asks
        /// were computed again at the next ask.
        var next: (version: Int, answers: [String: Entry]) = (-1, [:])
        /// The word groups of the answers kept since the newer generation began (`group`).
        var groups: [[String]: WordGroup] = [:]

        /// The group of the answers with these search words and forms (a request may bring other
        /// synonyms than the memo's for a moment: its forms then get a group of their own). Groups
        /// start anew with each generation, and when a carry's removals keep it from filling.
        mutating func group(_ words: [String], _ forms: [[String]]) -> WordGroup {
            if words.isEmpty { return .browsing }
            if let group = groups[words], group.forms == forms { return group }
            if groups.count >= Self.limit { Disposal.replace(&groups, with: [:]) }
            let group = WordGroup(words, forms)
            groups[words] = group
            return group
        }

        mutating func answer(_ key: String) -> CatalogIndex.Answer? {
            if let entry = answers[key] { return entry.answer }
            guard let entry = older.removeValue(forKey: key) else { return nil }
            keep(entry, key)
            return entry.answer
        }

        mutating func keep(_ entry: Entry, _ key: String) {
            if answers.count >= Self.limit {
                // The generation dropped is freed off the lock (`Disposal`): 65,536 answers and their keys.
                Disposal.replace(&older, with: answers)
                answers = [:]   // (shared with `older` now: nothing freed)
                Disposal.replace(&groups, with: [:])
                Disposal.replace(&olderMembers, with: members)
                members = Members(); turns += 1
            }
            if answers.updateValue(entry, forKey: key)?.group !== entry.group { members.add(key, entry.group) }
        }

        mutating func removeAll() {
            epoch = MemoEpoch.next()
            // (What is dropped is freed off the lock, `Disposal`.)
            Disposal.replace(&answers, with: [:])
            Disposal.replace(&older, with: [:])
            Disposal.replace(&groups, with: [:])
            Disposal.replace(&members, with: Members())
            Disposal.replace(&olderMembers, with: Members())
            turns += 1
            chain = []
            Disposal.replace(&next, with: (-1, [:]))
        }

        /// Keeps `entry`, computed at `version`, among the answers that join the memo once it is carried there.
        mutating func keepNext(_ entry: Entry, _ key: String, at version: Int) {
            if next.version != version { Disposal.replace(&next, with: (version, [:])) }
            if next.answers.count < Self.limit { next.answers[key] = entry }
        }

        /// The memo carried to `version`: the answers computed at it join (older ones go).
        mutating func joinNext() {
            guard next.version <= version else { return }
            if next.version == version { for (key, entry) in next.answers { keep(entry, key) } }
            next = (-1, [:])
        }
    }

    /// The memo's answer for `key` at `version`, computing and keeping it when absent (while the
    /// memo is carried to `version`: the kept one when the carry does not reach it, or a browse's
    /// patched, `CarryCheck`).
    /// Kept with each answer: its words' forms and stem tokens (`SearchExpansion.forms`, one
    /// list per word), against which a change is checked (`MemoCarry`; a change of synonyms drops
    /// the memo) — or, for a browsing answer, its `filters` (`MemoCarry.affectsBrowse`).
    func memoized(_ key: String, words: [String], forms: [[String]], filters: MemoCarry.BrowseFilters? = nil, version: Int,
                  counting: (CatalogIndex.Answer) -> MemoCarry.BrowseCounting? = { _ in nil },
                  _ compute: () -> CatalogIndex.Answer) -> CatalogIndex.Answer {
        let (known, carried) = memo.withLockedValue { memo -> (CatalogIndex.Answer?, (AnswerMemo.Entry, [MemoCarry])?) in
            if memo.version == version { return (memo.answer(key), nil) }
            guard memo.carrying == version else { return (nil, nil) }
            if memo.next.version == version, let entry = memo.next.answers[key] { return (entry.answer, nil) }
            // Being carried to `version`: the kept entry, left where it is, to vet.
            guard let entry = memo.answers[key] ?? memo.older[key] else { return (nil, nil) }
            return (nil, (entry, memo.chain.map(\.carry)))
        }
        if let known = known ?? carried.flatMap({ entry, carries in CarryCheck.carried(entry, key, through: carries) }) {
            answersKept.wrappingAdd(1, ordering: .relaxed)
            return known
        }
        answersComputed.wrappingAdd(1, ordering: .relaxed)
        let answer = compute()
        let counting = counting(answer)
        memo.withLockedValue { memo in
            // (The entry made only where it is kept: its word group is kept with it.)
            if memo.version != version {
                guard memo.carrying == version || (version > memo.version && memo.carrying == nil) else { return }
                if memo.carrying == version {
                    let entry = AnswerMemo.Entry(answer, group: memo.group(words, forms), filters, counting: counting)
                    return memo.keepNext(entry, key, at: version)
                }
                memo.version = version
                memo.removeAll()
            }
            let entry = AnswerMemo.Entry(answer, group: memo.group(words, forms), filters, counting: counting)
            memo.keep(entry, key)
        }
        return answer
    }
}
