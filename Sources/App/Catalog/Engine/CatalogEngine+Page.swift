import CatalogIndexing
import Core
import Foundation
import NIOCore

/// The list answer, in named steps, all under the index's read lock (`reading(at:)`): the words'
/// expansions and the answer from the memos, the search's meta (`CatalogEngine+Highlight.swift`:
/// spelling correction and highlights), then the body rendered with the facets spliced into the
/// meta.
extension CatalogEngine {
    /// The list response body (`{"data": [...], "meta": {...}}`) and its total. `scope` narrows
    /// it (a child's family controls; the caller's country, when some books are licensed only
    /// elsewhere); answers are kept per scope (`solve`), the scope's books per index state
    /// (`scopeBooks`). Rights are evaluated in the scope's country.
    func page(_ parameters: CatalogParameters, scope: CatalogScope? = nil, now: Date, synonyms: Synonyms = Synonyms()) -> (body: ByteBuffer, total: Int) {
        let micros = Int64((now.timeIntervalSince1970 * 1_000_000).rounded(.down))
        // Scheduled books out of the catalog now: kept answers name the schedule state they saw (`stateKey`).
        return reading(at: micros) { index, offline, stateKey, version in
            let narrowing = narrowing(scope, in: index, version: version)
            let expansions = keptExpansions(parameters.words, in: index, version: version, synonyms: synonyms)
            let kept = Self.keptKey(parameters, stateKey: stateKey, narrowing: narrowing)   // (once: the answer's and the meta's)
            let answer = solve(parameters, expansions, in: index, narrowing: narrowing, offline: offline,
                               stateKey: stateKey, version: version, synonyms: synonyms, kept: kept)
            let meta = searchMeta(parameters, expansions, answer, in: index, narrowing: narrowing, offline: offline,
                                  stateKey: stateKey, version: version, synonyms: synonyms, kept: kept, locales: scope?.locales ?? [])
            return (render(parameters.page, answer, meta: meta, in: index, at: micros, country: scope?.country, locales: scope?.locales ?? []), answer.total)
        }
    }

    /// Memo lookup: the expansions of the search `words` (typo walk, stems, the sound-alike
    /// check) from the search memo at `version`, word by word (a word's expansion does not depend
    /// on the others: "james zorr" and "james viaje" walk "james" once), computed and kept when absent.
    func keptExpansions(_ words: [String], in index: CatalogIndex, version: Int, synonyms: Synonyms) -> [SearchExpansion] {
        words.flatMap { word in
            searchMemoized(\.expansions, word, version: version, synonyms: synonyms,
                           stays: { !$2.reaches(expansionsOf: word, $0, synonyms: synonyms) }) { index.expansions([word], synonyms: synonyms) }
        }
    }

    /// Memo lookup: the answer to `parameters` without the scheduled books `offline`, from the
    /// answer memo, keyed by the request, the schedule state (`stateKey`) and the scope
    /// (`keptKey`), computed and kept when absent — from the scope's books kept per index state
    /// (`scopeBooks`). An approved-only scope's answer is computed from the sets each time.
    /// `kept`: the key, `keptKey(parameters, stateKey:, narrowing:)`, when the caller made it.
    func solve(_ parameters: CatalogParameters, _ expansions: [SearchExpansion], in index: CatalogIndex, narrowing: CatalogScope?,
               offline: Bitset?, stateKey: String, version: Int, synonyms: Synonyms, kept: String?? = nil) -> CatalogIndex.Answer {
        let cache = WordSetCache.Reader(wordSets, version: version)
        guard let key = kept ?? Self.keptKey(parameters, stateKey: stateKey, narrowing: narrowing) else {
            return index.answer(parameters, expansions: expansions, scope: narrowing, offline: offline, cache: cache)
        }
        // The words' forms come with their expansions (one per word, in order).
        let forms = expansions.count == parameters.words.count ? expansions.map(\.forms) : parameters.words.map { SearchExpansion.forms(of: $0, synonyms: synonyms) }
        // (A search's say whether it is in title order: a title edit moves its matches there.)
        let filters = index.browseFilters(parameters, scope: narrowing)
        return memoized(key, words: parameters.words, forms: forms, filters: filters, version: version,
                        counting: { index.browseCounting(parameters, scope: narrowing, $0) }) {
            guard let narrowing else { return index.answer(parameters, expansions: expansions, offline: offline, cache: cache) }
            return index.answer(parameters, expansions: expansions,
                                within: scopeBooks(narrowing, in: index, offline: offline, stateKey: stateKey, version: version), cache: cache)
        }
    }

    /// The key of an answer (and its meta) among the kept ones: the request, the schedule state
    /// and the scope narrowing it; nil when it is not kept (an approved-only scope).
    static func keptKey(_ parameters: CatalogParameters, stateKey: String, narrowing: CatalogScope?) -> String? {
        guard let narrowing else { return parameters.cacheKey(then: stateKey) }
        return narrowing.memoKey.map { parameters.cacheKey(then: stateKey, $0) }
    }

    /// Render: the response body — `{"data":[`, the answer's books rendered with their rights at
    /// `micros` in `country`, `],"meta":{`, the search's `meta` with the facets spliced in
    /// (`splice`), then the page, per page and totals.
    func render(_ page: PageRequest, _ answer: CatalogIndex.Answer, meta: [UInt8], in index: CatalogIndex, at micros: Int64, country: String?,
                locales: [String] = []) -> ByteBuffer {
        var out: [UInt8] = []
        out.reserveCapacity(1024 + answer.ids.count * 600)
        out.append(contentsOf: Array(#"{"data":["#.utf8))
        index.render(answer.ids, at: micros, in: country, locales: locales, into: &out)
        out.append(contentsOf: Array(#"],"meta":{"#.utf8))
        Self.splice(meta, into: &out) { FacetsDTO.write(answer, categories: index.categories, into: &$0) }
        out.append(contentsOf: Array(#","page":\#(page.page),"per_page":\#(page.perPage),"total_count":\#(answer.total),"total_pages":\#(page.totalPages(for: answer.total))}}"#.utf8))
        return ByteBuffer(bytes: out)
    }

    /// Byte splicing: appends the search's `meta` to `out` with `"facets":` and the facets (written
    /// by `facets`) where its \u{1} marker stands (the marker itself left out); a meta with no
    /// marker (no search words: empty) gets them first.
    static func splice(_ meta: [UInt8], into out: inout [UInt8], facets: (inout [UInt8]) -> Void) {
        let split = meta.firstIndex(of: 1) ?? meta.startIndex
        out.append(contentsOf: meta[..<split])
        out.append(contentsOf: Array(#""facets":"#.utf8))
        facets(&out)
        if split < meta.endIndex { out.append(contentsOf: meta[(split + 1)...]) }
    }
}
