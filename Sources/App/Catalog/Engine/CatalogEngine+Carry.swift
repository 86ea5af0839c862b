import CatalogIndexing
import Core

/// What a change of the catalog leaves of the memos (`MemoCarry`: which answers it cannot have
/// reached), in two steps. `planCarry` works out which kept entries go from the memos as they
/// are at the version before the change — without the index's write lock, while requests go on
/// answering at that version (visiting every kept answer and search under the write lock held
/// every reader for ~7 ms per change: the p99 of traffic with writes). `finishCarry`, under the
/// write lock with the change itself, removes them, and every entry computed meanwhile (made at
/// the old version and not checked, it cannot be kept).
extension CatalogEngine {
    struct CarryPlan {
        /// The version the memos were planned at; nil `carry`: nothing is kept.
        let from: Int
        let carry: MemoCarry?
        var answers: [String] = []
        var expansions: [String] = []
        var meta: [String] = []
        /// Whether each memo was at `from` and its additions are followed since.
        var answersFollowed = false
        var searchFollowed = false
    }

    /// The entries `carry` reaches in the memos at `from` (called under no lock of the index; the
    /// memos' own locks are held only to copy them — copy-on-write — and to start following
    /// their additions).
    func planCarry(from: Int, _ carry: MemoCarry?) -> CarryPlan {
        var plan = CarryPlan(from: from, carry: carry)
        guard let carry else { return plan }
        var verdicts: [String: Bool] = [:]
        func goes(_ word: String, _ forms: [String]) -> Bool {
            if let known = verdicts[word] { return known }
            let verdict = carry.mayMatch(word, forms: forms)
            verdicts[word] = verdict
            return verdict
        }
        let answers = memo.withLockedValue { memo -> (current: [String: AnswerMemo.Entry], older: [String: AnswerMemo.Entry])? in
            guard memo.version == from else { return nil }
            memo.added = []
            return (memo.answers, memo.older)
        }
        // The answers that stay, as their totals (a page's highlights stay with its answer).
        var kept: [String: Int] = [:]
        if let answers {
            plan.answersFollowed = true
            for (key, entry) in [answers.older, answers.current].joined() {
                let reached = entry.words.isEmpty ? carry.browsing : zip(entry.words, entry.forms).contains { goes($0, $1) }
                if reached { plan.answers.append(key) } else { kept[key] = entry.answer.total }
            }
        }
        let search = searchMemo.withLockedValue { memo -> (expansions: [[String: [SearchExpansion]]], meta: [String], synonyms: Synonyms)? in
            guard memo.version == from else { return nil }
            memo.expansions.added = []
            memo.meta.added = []
            return ([memo.expansions.current, memo.expansions.previous], Array(memo.meta.current.keys) + memo.meta.previous.keys, memo.synonyms)
        }
        if let search {
            plan.searchFollowed = true
            // A word's forms come with its kept expansion (made with the memo's synonyms).
            for (key, expansions) in search.expansions.joined() {
                let words = key.split(separator: " ").map(String.init)
                let reached = words.indices.contains { i in
                    goes(words[i], expansions.count == words.count ? expansions[i].forms : SearchExpansion.forms(of: words[i], synonyms: search.synonyms))
                }
                if reached { plan.expansions.append(key) }
            }
            // A page's highlights stay when its answer stayed and offered no correction (which
            // depends on another answer); the key is the answer's, less its locales.
            plan.meta = search.meta.filter { key in
                !((kept[String(key.prefix { $0 != "\u{3}" })] ?? 0) >= SearchMeta.fewResults)
            }
        }
        return plan
    }

    /// Moves the memos from `from` to `to` (under the index's write lock, with the change):
    /// `plan`'s entries and those computed since it was made go; a memo not followed since
    /// `from` (or no plan) is emptied. `index`: the index after the change.
    func finishCarry(_ plan: CarryPlan?, from: Int, to: Int, in index: CatalogIndex) {
        let plan = plan.flatMap { $0.from == from && $0.carry != nil ? $0 : nil }
        memo.withLockedValue { memo in
            defer { memo.version = to; memo.added = nil }
            guard let plan, plan.answersFollowed, memo.version == from, let added = memo.added else { return memo.removeAll() }
            for key in plan.answers + added {
                memo.answers.removeValue(forKey: key)
                memo.older.removeValue(forKey: key)
            }
        }
        carrySets(from: from, to: to, plan?.carry, in: index)
        searchMemo.withLockedValue { memo in
            guard let plan, let carry = plan.carry, plan.searchFollowed, memo.version == from,
                  let expansions = memo.expansions.added, let meta = memo.meta.added else {
                memo = SearchMemo(version: to, synonyms: memo.synonyms)
                return
            }
            memo.expansions.remove(plan.expansions + expansions)
            memo.meta.remove(plan.meta + meta)
            memo.expansions.added = nil
            memo.meta.added = nil
            if !carry.changesNothing {
                memo.suggestions.removeAll()
                memo.causes.removeAll()
            }
            memo.version = to
        }
    }

    /// The sets kept per index state follow: a common word's catalog-wide set stays unless the
    /// change touched one of its lexemes (`WordSetCache.carry`), a scope's books and a country's
    /// verdict stay unless a book's filters changed or a book came or went (`MemoCarry.browsing`).
    private func carrySets(from: Int, to: Int, _ carry: MemoCarry?, in index: CatalogIndex) {
        guard let carry else { return scopeSets.withLockedValue { $0 = ScopeBooks() } }
        wordSets.carry(from: from, to: to, touched: carry.lexemes, in: index)
        scopeSets.withLockedValue { kept in
            // Emptied, not left to the version: a change applied at a version already reached
            // (a build racing a catch-up) must not leave sets it touched.
            if carry.browsing { kept = ScopeBooks() } else if kept.version == from { kept.version = to }
        }
    }
}
