import Core
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Catalog responses kept in memory per catalog version, so a hot page costs one cheap statement
/// instead of an exact COUNT(*) over the catalog.
///
/// Correctness: `catalog_state.version` is bumped by triggers in the same transaction as any change
/// parents could see, so reading it first tells every instance whether anyone (console, another
/// instance, psql) committed a change; a new version empties the cache. Rights availability also
/// and scheduled publishing change with time alone, so a generation is valid only until the next
/// rights window starts or ends, or a scheduled book enters or leaves the catalog, by the app's clock
/// (`AppClock`, bound into the statement: a test moves the clock instead of waiting).
final class CatalogCache: Sendable {
    struct Generation: Sendable, Equatable {
        let version: Int
        let validUntil: Date?
    }

    struct Entry: Sendable {
        let body: ByteBuffer
        let totalCount: Int
        let etag: String?
    }

    private struct State {
        var generation: Generation?
        var entries: [String: Entry] = [:]
        var lexicon = TypoVocabulary()
        var lexiconMaxID = 0
    }

    /// Entries are dropped wholesale past this many (a new version drops them anyway).
    static let maxEntries = 20_000
    private let state = NIOLockedValueBox(State())

    typealias Reading = (generation: Generation, maxTermID: Int, countriesVersion: Int, controlsVersion: Int, synonymsVersion: Int)

    /// Keyed by whether the catalog engine serves (the lighter statement suffices then).
    private let reads: BatchedRead<Bool, Reading>

    init(clock: AppClock) {
        reads = BatchedRead { keys, sql in
            // A batch with any request from before the engine was ready reads everything for all.
            let engineServes = !keys.contains(false)
            return CatalogCache.read(on: sql, engineServes: engineServes, now: clock.now()).map { reading in
                Dictionary(uniqueKeysWithValues: keys.map { ($0, reading) })
            }
        }
    }

    /// The current generation and the newest vocabulary id, read after the request arrived
    /// (`BatchedRead`: concurrent requests share one statement).
    func current(for req: Request) -> EventLoopFuture<Reading> {
        let app = req.application
        let engineServes = app.settings.catalogEngine && app.appServices.catalogEngine.isReady
        return reads.value(for: engineServes, on: req).flatMapThrowing { reading in
            guard let reading else { throw Abort(.internalServerError, reason: "catalog_state has no row") }
            self.adopt(reading.generation)
            return reading
        }
    }

    func current(for req: Request) async throws -> Reading {
        try await current(for: req).get()
    }

    /// A new generation empties the cache.
    private func adopt(_ generation: Generation) {
        state.withLockedValue { state in
            if state.generation != generation {
                state.generation = generation
                state.entries.removeAll(keepingCapacity: true)
            }
        }
    }

    /// One statement: the version (with the versions of parents' countries and children's
    /// controls, which instances keep in memory), the newest vocabulary id and the next rights boundary (two
    /// index probes on rights_windows) after `now`. While the catalog engine serves, only the version: the
    /// engine evaluates rights against the clock and has its own vocabulary.
    private static func read(on sql: any SQLDatabase, engineServes: Bool, now: Date) -> EventLoopFuture<Reading> {
        let statement: SQLQueryString = engineServes
            ? "SELECT version, 0::bigint AS max_term, NULL::timestamptz AS next_boundary, countries_version, controls_version, synonyms_version FROM catalog_state"
            : """
            SELECT s.version, s.countries_version, s.controls_version, s.synonyms_version, COALESCE((SELECT max(id) FROM search_terms), 0) AS max_term,
                   LEAST((SELECT min(starts_at) FROM rights_windows WHERE starts_at > \(at: now)),
                         (SELECT min(ends_at) FROM rights_windows WHERE ends_at > \(at: now)),
                         (SELECT min(live_from) FROM books WHERE live_from IS NOT NULL AND status = 'active' AND live_from > \(at: now)),
                         (SELECT min(live_until) FROM books WHERE live_until IS NOT NULL AND status = 'active' AND live_until > \(at: now))) AS next_boundary
              FROM catalog_state s
            """
        return sql.raw(statement).first().flatMapThrowing { row in
            guard let row else { throw Abort(.internalServerError, reason: "catalog_state has no row") }
            let state = try row.decode(model: StateRow.self, keyDecodingStrategy: .convertFromSnakeCase)
            return (Generation(version: state.version, validUntil: state.nextBoundary), state.maxTerm, state.countriesVersion,
                    state.controlsVersion, state.synonymsVersion)
        }
    }

    /// The row `read` selects.
    private struct StateRow: Decodable {
        let version, maxTerm, countriesVersion, controlsVersion, synonymsVersion: Int
        let nextBoundary: Date?
    }

    /// A term of the vocabulary (`search_terms`).
    private struct TermRow: Decodable { let id: Int; let term: String }

    /// Responses held now (a metric).
    var count: Int { state.withLockedValue { $0.entries.count } }

    func entry(_ key: String, in generation: Generation) -> Entry? {
        state.withLockedValue { $0.generation == generation ? $0.entries[key] : nil }
    }

    func store(_ entry: Entry, for key: String, in generation: Generation) {
        state.withLockedValue { state in
            guard state.generation == generation else { return }
            if state.entries.count >= Self.maxEntries { state.entries.removeAll(keepingCapacity: true) }
            state.entries[key] = entry
        }
    }

    /// The title/author vocabulary; fetches only the terms added since the last look, and only
    /// when `maxTermID` says there are some.
    func lexicon(upTo maxTermID: Int, on sql: any SQLDatabase) async throws -> TypoVocabulary {
        let known = state.withLockedValue { $0.lexiconMaxID }
        guard maxTermID > known else { return state.withLockedValue { $0.lexicon } }
        let fresh = try await sql.raw("SELECT id, term FROM search_terms WHERE id > \(bind: known) ORDER BY id").all(decoding: TermRow.self)
            .map { ($0.id, $0.term) }
        return state.withLockedValue { state in
            let newer = fresh.filter { $0.0 > state.lexiconMaxID }
            for (_, term) in newer where !state.lexicon.contains(term) { state.lexicon.insert(term) }
            state.lexiconMaxID = max(state.lexiconMaxID, newer.last?.0 ?? 0)
            return state.lexicon
        }
    }
}

