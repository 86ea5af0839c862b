import Core
import Foundation
import NIOConcurrencyHelpers
import SQLKit

/// The synonyms staff manage, as this instance last read them. `catalog_state.synonyms_version`
/// (read with the catalog version by every catalog request) moves with any change, so a rule
/// saved on one instance is in the next request's search on every instance.
final class SynonymStore: Sendable {
    private let state = NIOLockedValueBox<(version: Int, synonyms: Synonyms)?>(nil)

    /// The synonyms at `version`, when this instance holds them.
    func cached(version: Int) -> Synonyms? {
        state.withLockedValue { $0?.version == version ? $0?.synonyms : nil }
    }

    /// The synonyms at `version` or newer: read again when this instance holds an older set.
    func current(version: Int, on sql: any SQLDatabase) async throws -> Synonyms {
        if let known = cached(version: version) { return known }
        let row = try await sql.raw("""
            SELECT (SELECT synonyms_version FROM catalog_state) AS version,
                   COALESCE((SELECT json_agg(json_build_object('words', words, 'one_way', one_way) ORDER BY id) FROM search_synonyms), '[]')::text AS rules
            """).first(decoding: Rules.self)
        let read = row?.version ?? version
        let json = row?.rules ?? "[]"
        struct Rule: Decodable { let words: String; let one_way: Bool }
        let synonyms = Synonyms(try JSONDecoder().decode([Rule].self, from: Data(json.utf8)).map { .init(words: $0.words, oneWay: $0.one_way) })
        state.withLockedValue { state in
            if state == nil || state!.version < read { state = (read, synonyms) }
        }
        return synonyms
    }

    /// The synonyms' version and rules (a JSON array), as `current` reads them.
    private struct Rules: Decodable { let version: Int; let rules: String }
}
