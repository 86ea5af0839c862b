import CatalogIndexing
import Core
import Foundation
import NIOConcurrencyHelpers

/// What a search adds to its answer, kept per index version like the answers themselves: the
/// expansion of each search word (typo walk, stems, the sound-alike check), and for answers no scope narrows,
/// the rendered `did_you_mean` and `highlights` and the suggestions. A new version (any change,
/// synonyms included) empties it; answers computed with other synonyms than the kept ones are not
/// kept.
struct SearchMemo {
    static let limit = 8192
    var version = -1
    var synonyms = Synonyms()
    var expansions: [String: [SearchExpansion]] = [:]
    var meta: [String: [UInt8]] = [:]
    var suggestions: [String: [SuggestionDTO]] = [:]

    mutating func adopt(version: Int, synonyms: Synonyms) -> Bool {
        if version > self.version {
            self = SearchMemo(version: version, synonyms: synonyms)
        }
        return version == self.version && synonyms == self.synonyms
    }

    mutating func trim() {
        if expansions.count + meta.count + suggestions.count > Self.limit {
            expansions.removeAll(keepingCapacity: true); meta.removeAll(keepingCapacity: true); suggestions.removeAll(keepingCapacity: true)
        }
    }
}

extension CatalogEngine {
    /// `compute`d once per version, synonyms and `key` in `path` of the search memo.
    func searchMemoized<T>(_ path: WritableKeyPath<SearchMemo, [String: T]>, _ key: String, version: Int, synonyms: Synonyms, _ compute: () -> T) -> T {
        if let known = searchMemo.withLockedValue({ memo in memo.adopt(version: version, synonyms: synonyms) ? memo[keyPath: path][key] : nil }) {
            return known
        }
        let value = compute()
        searchMemo.withLockedValue { memo in
            guard memo.adopt(version: version, synonyms: synonyms) else { return }
            memo.trim()
            memo[keyPath: path][key] = value
        }
        return value
    }
}
