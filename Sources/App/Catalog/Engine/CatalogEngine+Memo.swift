import CatalogIndexing
import Core
import Foundation

extension CatalogEngine {
    /// Answers kept at one index version, in two generations: when the newer one fills up it
    /// becomes the older, and an answer found in the older moves back — so the answers in use
    /// stay while one-off searches pass through (what an LRU does, at a dictionary's cost).
    struct AnswerMemo {
        typealias Entry = (answer: CatalogIndex.Answer, words: [String], forms: [[String]])
        /// Answers per generation. (Three times as many was measured slower under writes: the
        /// carry visits every kept answer under the index's write lock.)
        static let limit = 4096
        var version = -1
        var answers: [String: Entry] = [:]
        var older: [String: Entry] = [:]

        mutating func answer(_ key: String) -> CatalogIndex.Answer? {
            if let entry = answers[key] { return entry.answer }
            guard let entry = older.removeValue(forKey: key) else { return nil }
            keep(entry, key)
            return entry.answer
        }

        mutating func keep(_ entry: Entry, _ key: String) {
            if answers.count >= Self.limit { older = answers; answers = [:] }
            answers[key] = entry
        }

        mutating func removeAll() {
            answers.removeAll(keepingCapacity: true)
            older.removeAll()
        }
    }

    /// The memo's answer for `key` at `version`, computing and keeping it when absent.
    /// Kept with each answer: its words' forms and stem tokens (`SearchExpansion.forms`, one
    /// list per word), against which a change is checked (`MemoCarry`; a change of synonyms drops
    /// the memo).
    func memoized(_ key: String, words: [String], forms: [[String]], version: Int, _ compute: () -> CatalogIndex.Answer) -> CatalogIndex.Answer {
        let known = memo.withLockedValue { $0.version == version ? $0.answer(key) : nil }
        if let known { return known }
        let answer = compute()
        memo.withLockedValue { memo in
            if memo.version != version {
                guard version > memo.version else { return }
                memo.version = version
                memo.removeAll()
            }
            memo.keep((answer, words, forms), key)
        }
        return answer
    }

    /// Moves the memo from `from` to `to` (under the index's write lock), keeping the answers the
    /// change cannot have touched (`MemoCarry`); `carry` nil drops them all. `index`: the index
    /// after the change.
    func carryMemo(from: Int, to: Int, _ carry: MemoCarry?, in index: CatalogIndex) {
        var verdicts: [String: Bool] = [:]
        // The kept answers after the carry: copies of the memo's dictionaries (copy-on-write: no
        // entry is copied), read by the search memo's carry.
        let kept: (answers: [String: AnswerMemo.Entry], older: [String: AnswerMemo.Entry])? = memo.withLockedValue { memo in
            guard memo.version == from, let carry else {
                memo.removeAll()
                memo.version = to
                return nil
            }
            func goes(_ entry: AnswerMemo.Entry) -> Bool {
                guard !entry.words.isEmpty else { return carry.browsing }
                return zip(entry.words, entry.forms).contains { word, forms in
                    if let known = verdicts[word] { return known }
                    let verdict = carry.mayMatch(word, forms: forms)
                    verdicts[word] = verdict
                    return verdict
                }
            }
            // In place: a change usually drops few answers (rebuilding both dictionaries under
            // the index's write lock held every reader for milliseconds).
            for key in memo.answers.compactMap({ goes($0.value) ? $0.key : nil }) { memo.answers.removeValue(forKey: key) }
            for key in memo.older.compactMap({ goes($0.value) ? $0.key : nil }) { memo.older.removeValue(forKey: key) }
            memo.version = to
            return (memo.answers, memo.older)
        }
        carrySets(from: from, to: to, carry, in: index)
        carrySearchMemo(from: from, to: to, carry, verdicts: verdicts, keptAnswers: kept.map { kept in
            { key in ((kept.answers[key] ?? kept.older[key])?.answer.total ?? 0) >= SearchMeta.fewResults }
        })
    }

    /// The search memo follows the answers: a word's expansion stays when the change cannot match
    /// it, a page's highlights when its answer stayed (and offered no correction, which depends on
    /// another answer); suggestions are computed again.
    private func carrySearchMemo(from: Int, to: Int, _ carry: MemoCarry?, verdicts: [String: Bool], keptAnswers: ((String) -> Bool)?) {
        searchMemo.withLockedValue { memo in
            guard memo.version == from, let carry, let keptAnswers else {
                memo = SearchMemo(version: to, synonyms: memo.synonyms)
                return
            }
            // A word's forms come with its kept expansion (made with the memo's synonyms), not from
            // the seven stemmers again under the write lock.
            let synonyms = memo.synonyms
            memo.expansions.filter { key, expansions in
                let words = key.split(separator: " ").map(String.init)
                return !words.indices.contains { i in
                    let forms = expansions.count == words.count ? expansions[i].forms : SearchExpansion.forms(of: words[i], synonyms: synonyms)
                    return verdicts[words[i]] ?? carry.mayMatch(words[i], forms: forms)
                }
            }
            memo.meta.filter { keptAnswers(String($0.prefix { $0 != "\u{3}" })) }   // less its locales
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
