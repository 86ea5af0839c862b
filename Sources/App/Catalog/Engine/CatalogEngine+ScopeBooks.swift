import CatalogIndexing
import Core

/// The books of a child's scope (their age, blocked categories, publishers and books, their
/// country's rights), kept per scope and index state: every answer in that scope starts from the
/// same set instead of building it again (the age bands' union, the blocked sets' removal).
struct ScopeBooks {
    /// Scopes kept at once (a family's children share few; past this many the kept sets start over).
    static let limit = 1024
    var version = -1
    var stateKey = ""
    var sets: [String: Bitset] = [:]
    /// Per country, at `version`: whether its catalog leaves a book out (working it out builds a
    /// set of the catalog's size, so it is not done per request).
    var countries: [String: Bool] = [:]
}

extension CatalogEngine {
    /// `scope` when it narrows the catalog at the index's `version` (`CatalogIndex.narrows`), nil
    /// when the whole catalog is its catalog; the country's part kept per version (under the
    /// index's read lock).
    func narrowing(_ scope: CatalogScope?, in index: CatalogIndex, version: Int) -> CatalogScope? {
        guard let scope else { return nil }
        guard scope.isEmpty else { return scope }
        guard let country = scope.country, index.hasTerritoryRules else { return nil }
        if let known = scopeSets.withLockedValue({ $0.version == version ? $0.countries[country] : nil }) { return known ? scope : nil }
        let narrows = index.unlicensed(in: country) != nil
        scopeSets.withLockedValue { kept in
            if kept.version != version {
                guard version >= kept.version else { return }
                Disposal.replace(&kept, with: ScopeBooks(version: version, stateKey: kept.stateKey))
            }
            kept.countries[country] = narrows
        }
        return narrows ? scope : nil
    }

    /// The active books `scope` leaves visible without `offline`, at the index's `version` and
    /// schedule state `stateKey` (called under the index's read lock).
    func scopeBooks(_ scope: CatalogScope, in index: CatalogIndex, offline: Bitset?, stateKey: String, version: Int) -> Bitset {
        guard let key = scope.memoKey else { return index.books(in: scope, offline: offline) }
        if let kept = scopeSets.withLockedValue({ $0.version == version && $0.stateKey == stateKey ? $0.sets[key] : nil }) { return kept }
        let books = index.books(in: scope, offline: offline)
        scopeSets.withLockedValue { kept in
            if kept.version != version || kept.stateKey != stateKey {
                guard version >= kept.version else { return }
                Disposal.replace(&kept, with: ScopeBooks(version: version, stateKey: stateKey))
            }
            if kept.sets.count >= ScopeBooks.limit { Disposal.replace(&kept.sets, with: [:]) }   // (freed off the lock)
            kept.sets[key] = books
        }
        return books
    }
}
