import CatalogIndexing
import Core
import Foundation

extension CatalogEngine {
    /// Why a search found nothing in `scope` (`SearchMisses`): the same search without the
    /// child's controls, then in every country, then with scheduled books not yet live.
    func missCause(_ parameters: CatalogParameters, scope: CatalogScope?, now: Date, synonyms: Synonyms) -> SearchMisses.Cause {
        let micros = Int64((now.timeIntervalSince1970 * 1_000_000).rounded(.down))
        return reading(at: micros) { index, offline, _, version in
            // The answer that found nothing kept its words' expansions: taken from the memo.
            let expansions = keptExpansions(parameters.words, in: index, version: version, synonyms: synonyms)
            var counting = parameters
            counting.page = PageRequest(page: 1, perPage: 1)
            func total(_ scope: CatalogScope?, _ offline: Bitset?) -> Int {
                let narrowing = scope.flatMap { index.narrows($0) ? $0 : nil }
                return index.answer(counting, expansions: expansions, scope: narrowing, offline: offline).total
            }
            if let scope, !scope.isEmpty, total(CatalogScope(country: scope.country), offline) > 0 { return .hiddenByControls }
            // Every country's catalog is this one's when the country leaves no book out: nothing to count.
            if index.unlicensed(in: scope?.country) != nil, total(nil, offline) > 0 { return .licensedElsewhere }
            if offline != nil, total(nil, nil) > 0 { return .notLiveYet }
            return .notInCatalog
        }
    }
}
