import CatalogIndexing
import Core
import Foundation

extension CatalogEngine {
    /// Why a search found nothing in `scope` (`SearchMisses`): the same search without the
    /// child's controls, then in every country, then with scheduled books not yet live. Each
    /// count is an answer of the memo (`solve`), and the cause is kept per answer key: a search
    /// missed again costs a lookup.
    func missCause(_ parameters: CatalogParameters, scope: CatalogScope?, now: Date, synonyms: Synonyms) -> SearchMisses.Cause {
        let micros = Int64((now.timeIntervalSince1970 * 1_000_000).rounded(.down))
        return reading(at: micros) { index, offline, stateKey, version in
            let controls = scope.map { !$0.isEmpty } ?? false
            let countryOnly = CatalogScope(country: scope?.country)
            // Every country's catalog is this one's when the country leaves no book out (kept per version).
            let elsewhere = narrowing(countryOnly, in: index, version: version) != nil
            // No controls, no book licensed only elsewhere, every book live: nothing to count, and
            // nothing to keep (most one-off searches that find nothing, a parent's).
            guard controls || elsewhere || offline != nil else { return .notInCatalog }
            func compute() -> SearchMisses.Cause {
                // The answer that found nothing kept its words' expansions: taken from the memo.
                let expansions = keptExpansions(parameters.words, in: index, version: version, synonyms: synonyms)
                var counting = parameters
                counting.page = PageRequest(page: 1, perPage: 1)
                func total(_ scope: CatalogScope?, _ offline: Bitset?, _ stateKey: String) -> Int {
                    solve(counting, expansions, in: index, narrowing: narrowing(scope, in: index, version: version), offline: offline,
                          stateKey: stateKey, version: version, synonyms: synonyms).total
                }
                if controls, total(countryOnly, offline, stateKey) > 0 { return .hiddenByControls }
                if elsewhere, total(nil, offline, stateKey) > 0 { return .licensedElsewhere }
                if offline != nil, total(nil, nil, "\u{6}every book live") > 0 { return .notLiveYet }
                return .notInCatalog
            }
            guard let key = Self.keptKey(parameters, stateKey: stateKey, narrowing: scope.flatMap { $0.isEmpty && $0.country == nil ? nil : $0 }) else { return compute() }
            return searchMemoized(\.causes, key, version: version, synonyms: synonyms, compute)
        }
    }
}
