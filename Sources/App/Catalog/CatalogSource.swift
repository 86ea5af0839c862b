import CatalogIndexing
import Core
import SQLKit
import Vapor

/// Where a catalog answer comes from. The two sources give the same bytes for the same request
/// (`CatalogEngineTests.differential`); `CatalogService` picks one per request.
protocol CatalogSource: Sendable {
    /// A list page in the catalog envelope (`data`, `meta` with facets, and for a search its
    /// highlights and any correction) and its total.
    func page(_ parameters: CatalogParameters, scope: CatalogScope, synonyms: Synonyms) async throws -> (body: ByteBuffer, total: Int)
    /// As-you-type completions of `words` in `scope`.
    func suggest(_ words: [String], scope: CatalogScope, synonyms: Synonyms) async throws -> [SuggestionDTO]
    /// Why a search found nothing in `scope`.
    func missCause(_ parameters: CatalogParameters, scope: CatalogScope, synonyms: Synonyms) async throws -> SearchMisses.Cause
    /// One book as `{"data": …}`, or nil when it is not in this scope's catalog.
    func book(_ id: Int, scope: CatalogScope) async throws -> ByteBuffer?
}

/// The in-memory index, already at the request's catalog version. Synchronous: it answers on the
/// request's event loop, as of `now` (the request's time, from the app's clock).
struct EngineCatalogSource: CatalogSource {
    let engine: CatalogEngine
    let now: Date

    func page(_ parameters: CatalogParameters, scope: CatalogScope, synonyms: Synonyms) -> (body: ByteBuffer, total: Int) {
        engine.page(parameters, scope: scope, now: now, synonyms: synonyms)
    }

    func suggest(_ words: [String], scope: CatalogScope, synonyms: Synonyms) -> [SuggestionDTO] {
        engine.suggest(words, scope: scope, now: now, synonyms: synonyms)
    }

    func missCause(_ parameters: CatalogParameters, scope: CatalogScope, synonyms: Synonyms) -> SearchMisses.Cause {
        engine.missCause(parameters, scope: scope, now: now, synonyms: synonyms)
    }

    func book(_ id: Int, scope: CatalogScope) -> ByteBuffer? {
        engine.book(id, scope: scope, now: now)
    }
}

/// PostgreSQL (the replica when it has replayed the request's version), with the answers that no
/// family control narrows kept per catalog generation and country in `CatalogCache`.
struct SQLCatalogSource: CatalogSource {
    let req: Request
    let reading: CatalogCache.Reading

    func page(_ parameters: CatalogParameters, scope: CatalogScope, synonyms: Synonyms) async throws -> (body: ByteBuffer, total: Int) {
        let key = "books\u{1}" + (scope.country ?? "") + "\u{1}" + scope.locales.joined(separator: ",") + "\u{1}" + parameters.cacheKey
        if let hit = cached(key, scope: scope) { return (hit.body, hit.totalCount) }
        let sql = await req.catalogSQL(atLeast: reading.generation.version)
        let result = try await list(parameters, scope: scope, synonyms: synonyms, sql: sql)
        var didYouMean: String?
        if let other = SearchMeta.correction(parameters, expansions: result.expansions, total: result.total, vocabulary: result.vocabulary),
           try await list(other, scope: scope, synonyms: synonyms, sql: sql, countOnly: true).total > result.total {
            didYouMean = other.text
        }
        let query = Highlighter.Query(result.expansions)
        let highlights = result.expansions.isEmpty ? nil : result.books.map {
            HighlightDTO(id: $0.id, title: $0.title, author: $0.author, language: $0.language, titleLanguage: $0.titleLanguage, query: query)
        }
        let page = CatalogPageDTO(data: result.books, meta: .init(didYouMean: didYouMean, facets: result.facets, highlights: highlights,
                                                                  page: parameters.page.page, perPage: parameters.page.perPage,
                                                                  totalCount: result.total, totalPages: parameters.page.totalPages(for: result.total)))
        let entry = CatalogCache.Entry(body: try .json(page), totalCount: result.total, etag: nil)
        keep(entry, key, scope: scope)
        return (entry.body, entry.totalCount)
    }

    func missCause(_ parameters: CatalogParameters, scope: CatalogScope, synonyms: Synonyms) async throws -> SearchMisses.Cause {
        try await missCause(parameters, scope: scope, synonyms: synonyms, sql: await req.catalogSQL(atLeast: reading.generation.version))
    }

    /// Why a search found nothing, on `sql` (resolved while the request runs: the cause is worked
    /// out after the answer went, perhaps after the application shut down).
    func missCause(_ parameters: CatalogParameters, scope: CatalogScope, synonyms: Synonyms, sql: any SQLDatabase) async throws -> SearchMisses.Cause {
        let search = CatalogQueries.Search(expansions: try await expansions(parameters.words, synonyms: synonyms, sql: sql).0)
        func total(_ scope: CatalogScope?, scheduled: Bool = false) async throws -> Int {
            try await CatalogQueries(sql: sql, now: req.now, scope: scope, includeScheduled: scheduled).count(parameters, search: search)
        }
        if !scope.isEmpty, try await total(CatalogScope(country: scope.country)) > 0 { return .hiddenByControls }
        if try await total(nil) > 0 { return .licensedElsewhere }
        if try await total(nil, scheduled: true) > 0 { return .notLiveYet }
        return .notInCatalog
    }

    func book(_ id: Int, scope: CatalogScope) async throws -> ByteBuffer? {
        let key = "book\u{1}" + (scope.country ?? "") + "\u{1}" + scope.locales.joined(separator: ",") + "\u{1}\(id)"
        if let hit = cached(key, scope: scope) { return hit.body }
        let sql = await req.catalogSQL(atLeast: reading.generation.version)
        guard let book = try await CatalogQueries(sql: sql, now: req.now, scope: scope).book(id: id) else { return nil }
        let entry = CatalogCache.Entry(body: try .json(ItemDTO(data: book)), totalCount: 1, etag: nil)
        keep(entry, key, scope: scope)
        return entry.body
    }

    /// The count, the page and the facets for `parameters`, the search expanded against the
    /// vocabulary (`SearchExpansion`). Searches count and page in one statement; plain lists use
    /// the partial indexes for the page and skip it past the end. `countOnly`: the total alone.
    func list(_ parameters: CatalogParameters, scope: CatalogScope, synonyms: Synonyms, sql: any SQLDatabase, countOnly: Bool = false) async throws
        -> (books: [BookDTO], total: Int, facets: FacetsDTO, expansions: [SearchExpansion], vocabulary: TypoVocabulary) {
        let queries = CatalogQueries(sql: sql, now: req.now, scope: scope)
        let empty = FacetsDTO(categories: [], ageBands: [])
        if !parameters.words.isEmpty {
            let (expansions, vocabulary) = try await expansions(parameters.words, synonyms: synonyms, sql: sql)
            let search = CatalogQueries.Search(expansions: expansions)
            if countOnly { return ([], try await queries.count(parameters, search: search), empty, expansions, vocabulary) }
            let result = try await queries.searchPage(parameters, search: search)
            return (result.books, result.total, try await queries.facets(parameters, search: search), expansions, vocabulary)
        }
        let total = try await queries.count(parameters, search: nil)
        if countOnly { return ([], total, empty, [], TypoVocabulary()) }
        let books = parameters.page.offset < total ? try await queries.page(parameters, search: nil) : []
        return (books, total, try await queries.facets(parameters, search: nil), [], TypoVocabulary())
    }

    /// The words' expansions against the SQL path's vocabulary (`search_terms`, refreshed); the
    /// words with sound-alikes are checked in one statement: they get them when nothing else
    /// they could match is in an active book (the engine's rule).
    private func expansions(_ words: [String], synonyms: Synonyms, sql: any SQLDatabase) async throws -> ([SearchExpansion], TypoVocabulary) {
        let vocabulary = try await req.appServices.catalogCache.lexicon(upTo: reading.maxTermID, on: sql)
        var expansions = words.map { SearchExpansion($0, vocabulary: vocabulary, synonyms: synonyms) }
        let checked = expansions.indices.filter { !expansions[$0].sounds.isEmpty }
        if !checked.isEmpty {
            let probes = checked.map { "EXISTS (SELECT 1 FROM books b WHERE b.status = 'active' AND \(CatalogQueries.Search(expansions: [expansions[$0]]).any))" as SQLQueryString }
            let found = try await sql.raw("SELECT ARRAY[\(probes.joined(separator: ", "))] AS found").first(decoding: Found.self)?.found ?? []
            for (i, index) in checked.enumerated() where i < found.count && !found[i] { expansions[index] = expansions[index].withSounds() }
        }
        return (expansions, vocabulary)
    }

    /// A row of the sound-alike probes: whether each checked word matches an active book as it is.
    private struct Found: Decodable { let found: [Bool] }

    /// Only answers no family control narrows are kept (a child's are per child and short-lived).
    private func cached(_ key: String, scope: CatalogScope) -> CatalogCache.Entry? {
        scope.isEmpty ? req.appServices.catalogCache.entry(key, in: reading.generation) : nil
    }

    private func keep(_ entry: CatalogCache.Entry, _ key: String, scope: CatalogScope) {
        if scope.isEmpty { req.appServices.catalogCache.store(entry, for: key, in: reading.generation) }
    }
}
