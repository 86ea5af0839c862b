import Core
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// The title/author vocabulary in memory, for typo alternatives. `search_terms` only grows, so a
/// refresh fetches just the terms added since the last one (an index range scan, usually empty):
/// a word added by any instance or by psql is typo-searchable on the next request.
final class LexiconCache: Sendable {
    private struct State { var lexicon = Lexicon(); var lastID = 0 }
    private let state = NIOLockedValueBox(State())

    func refreshed(on sql: any SQLDatabase) async throws -> Lexicon {
        let lastID = state.withLockedValue { $0.lastID }
        let rows = try await sql.raw("SELECT id, term FROM search_terms WHERE id > \(bind: lastID) ORDER BY id").all()
        guard !rows.isEmpty else { return state.withLockedValue { $0.lexicon } }
        let fresh = try rows.map { (try $0.decode(column: "id", as: Int.self), try $0.decode(column: "term", as: String.self)) }
        return state.withLockedValue { state in
            let newer = fresh.filter { $0.0 > state.lastID }
            state.lexicon.append(newer.map(\.1))
            state.lastID = max(state.lastID, newer.last?.0 ?? 0)
            return state.lexicon
        }
    }
}

extension Application {
    private struct LexiconKey: StorageKey { typealias Value = LexiconCache }
    var lexicon: LexiconCache {
        if let cache = storage[LexiconKey.self] { return cache }
        let cache = LexiconCache()
        storage[LexiconKey.self] = cache
        return cache
    }
}
