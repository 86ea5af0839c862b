import CatalogIndexing
import Core

extension SearchMemo {
    /// The kept words' expansions the chain's `checks` reach (`finishCarry`). A word's forms
    /// come with its kept expansion (made with the memo's synonyms); only a lexeme coming into or
    /// leaving the catalog changes one (none: none is read).
    static func carry(expansions: [[String: [SearchExpansion]]], synonyms: Synonyms, _ checks: inout [CarryCheck]) -> [String] {
        if checks.allSatisfy(\.carry.keepsVocabulary) { return [] }
        return expansions.joined().compactMap { key, expansions in
            checks.indices.contains { checks[$0].reaches(expansionsOf: key, expansions, synonyms: synonyms) } ? key : nil
        }
    }

    /// The kept pages' meta the chain's `checks` reach, against `answers`, the answer memo at the
    /// pages' own version (nil: it is at another one — an older answer may not be the one a
    /// page's meta was made from — and every meta goes).
    static func carry(meta: [[String: [UInt8]]], answers: (current: [String: CatalogEngine.AnswerMemo.Entry], older: [String: CatalogEngine.AnswerMemo.Entry])?,
                      _ checks: inout [CarryCheck]) -> [String] {
        // (The dictionaries bound once: this runs for every kept page; its answer checked again —
        // the verdicts are known by now — rather than looked up among those gone. The keys read
        // from the generations themselves, not copied into an array; the carries read out of
        // the checks, which a call of theirs would copy.)
        let current = answers?.current ?? [:], older = answers?.older ?? [:]
        let carries = checks.map(\.carry)
        var goneMeta: [String] = []
        for key in meta.lazy.map(\.keys).joined() {
            let answer = CarryCheck.answerKey(ofMeta: key)
            guard let entry = current[answer] ?? older[answer] else { goneMeta.append(key); continue }
            let gone = checks.indices.contains { i in checks[i].reaches(entry, answer) || !CarryCheck.metaStays(with: entry, through: carries[i]) }
            if gone { goneMeta.append(key) }
        }
        return goneMeta
    }
}
