import CatalogIndexing
import Core

/// A search's meta, as bytes the list answer splices its facets into (`splice`): the spelling
/// correction (`did_you_mean`), the marker where the facets go, and the page's highlights.
extension CatalogEngine {
    /// The search's meta for `answer`: kept in the search memo with the answer (per request,
    /// schedule state and scope: `keptKey`, given as `kept`), computed each time for an approved-only scope.
    func searchMeta(_ parameters: CatalogParameters, _ expansions: [SearchExpansion], _ answer: CatalogIndex.Answer, in index: CatalogIndex,
                    narrowing: CatalogScope?, offline: Bitset?, stateKey: String, version: Int, synonyms: Synonyms, kept: String?,
                    locales: [String] = []) -> [UInt8] {
        func compute() -> [UInt8] {
            computeSearchMeta(parameters, expansions, answer, in: index, narrowing: narrowing, offline: offline,
                              stateKey: stateKey, version: version, synonyms: synonyms, locales: locales)
        }
        // A browse has no meta (no words: no correction, no highlights) — nothing to keep, and
        // nothing for every carry to visit (a browse's key was ~40 % of the kept pages' meta).
        guard !expansions.isEmpty, let key = kept else { return compute() }
        // Highlights point into the text shown, so they are kept per locale (after \u{3}).
        // While the memos are carried: kept when its answer is kept through the carry.
        // (The answer read at the search memo's own version: the two memos' chains may start
        // from different versions, and an older answer may not be the one the meta was made from.)
        func stays(_ meta: [UInt8], _ base: Int, _ check: inout CarryCheck) -> Bool {
            let entry = memo.withLockedValue { $0.version == base && $0.carrying == version ? $0.answers[key] ?? $0.older[key] : nil }
            return check.metaStays(with: entry, answerReached: entry.map { check.reaches($0, key) } ?? true)
        }
        return searchMemoized(\.meta, key + (locales.isEmpty ? "" : "\u{3}" + locales.joined(separator: ",")), version: version, synonyms: synonyms,
                              stays: stays, compute)
    }

    /// The search's meta computed: `"did_you_mean":…,` when a correction finds more (`correct`),
    /// the \u{1} marker where the facets go, then `,"highlights":[…]` (`highlight`); empty when
    /// the request has no search words.
    func computeSearchMeta(_ parameters: CatalogParameters, _ expansions: [SearchExpansion], _ answer: CatalogIndex.Answer, in index: CatalogIndex,
                           narrowing: CatalogScope?, offline: Bitset?, stateKey: String, version: Int, synonyms: Synonyms, locales: [String] = []) -> [UInt8] {
        var meta = JSONWriter()
        guard !expansions.isEmpty else { return [] }
        meta.bytes.reserveCapacity(128 + answer.ids.count * 80)   // (a page's highlights: no buffer grown and copied on the way)
        correct(parameters, expansions, answer, in: index, narrowing: narrowing, offline: offline,
                stateKey: stateKey, version: version, synonyms: synonyms, into: &meta)
        meta.raw("\u{1}")   // where the facets go
        Self.highlight(answer.ids, expansions, in: index, locales: locales, into: &meta)
        return meta.bytes
    }

    /// Spelling correction: writes `"did_you_mean":"…",` when the search corrected against the
    /// index's vocabulary (`SearchMeta.correction`) finds more books than `answer` in the same
    /// scope and schedule state (its answer taken from the memo like any other, `solve`).
    func correct(_ parameters: CatalogParameters, _ expansions: [SearchExpansion], _ answer: CatalogIndex.Answer, in index: CatalogIndex,
                 narrowing: CatalogScope?, offline: Bitset?, stateKey: String, version: Int, synonyms: Synonyms, into meta: inout JSONWriter) {
        if let other = SearchMeta.correction(parameters, expansions: expansions, total: answer.total, vocabulary: index.typos),
           solve(other, keptExpansions(other.words, in: index, version: version, synonyms: synonyms), in: index, narrowing: narrowing, offline: offline,
                 stateKey: stateKey, version: version, synonyms: synonyms).total > answer.total {
            meta.raw("\"did_you_mean\":"); meta.string(other.text ?? ""); meta.raw(",")
        }
    }

    /// Highlight: writes `,"highlights":[…]` — for each book of the page (`ids`, in order), where
    /// its title and author match the search's `expansions` (`HighlightDTO`).
    static func highlight(_ ids: [Int], _ expansions: [SearchExpansion], in index: CatalogIndex, locales: [String] = [], into meta: inout JSONWriter) {
        meta.raw(",\"highlights\":")
        guard !ids.isEmpty else { return meta.raw("[]") }   // (a search that found nothing: no query to prepare)
        let query = Highlighter.Query(expansions)
        index.warmDisplayFields(ids)
        meta.raw("[")
        for (i, id) in ids.enumerated() {
            if i > 0 { meta.raw(",") }
            let fields = index.displayFields(id, locales: locales)
            HighlightDTO.write(id: id, title: Highlighter.ranges(in: fields.title, language: fields.titleLanguage ?? fields.language, query: query),
                               author: Highlighter.ranges(in: fields.author, language: fields.language, query: query), into: &meta)
        }
        meta.raw("]")
    }
}
