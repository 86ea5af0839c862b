import CatalogIndexing
import Core
import SQLKit
import Vapor

/// Where a catalog answer comes from. The two sources give the same bytes for the same request
/// (`CatalogEngineTests.differential`); `CatalogService` picks one per request.
protocol CatalogSource: Sendable {
    /// A list page in the catalog envelope (`data`, `meta` with facets) and its total.
    func page(_ parameters: CatalogParameters, scope: CatalogScope) async throws -> (body: ByteBuffer, total: Int)
    /// One book as `{"data": …}`, or nil when it is not in this scope's catalog.
    func book(_ id: Int, scope: CatalogScope) async throws -> ByteBuffer?
}

/// The in-memory index, already at the request's catalog version. Synchronous: it answers on the
/// request's event loop.
struct EngineCatalogSource: CatalogSource {
    let engine: CatalogEngine

    func page(_ parameters: CatalogParameters, scope: CatalogScope) -> (body: ByteBuffer, total: Int) {
        engine.page(parameters, scope: scope, now: Date())
    }

    func book(_ id: Int, scope: CatalogScope) -> ByteBuffer? {
        engine.book(id, scope: scope, now: Date())
    }
}

/// PostgreSQL (the replica when it has replayed the request's version), with the answers that no
/// family control narrows kept per catalog generation and country in `CatalogCache`.
struct SQLCatalogSource: CatalogSource {
    let req: Request
    let reading: CatalogCache.Reading

    func page(_ parameters: CatalogParameters, scope: CatalogScope) async throws -> (body: ByteBuffer, total: Int) {
        let key = "books\u{1}" + (scope.country ?? "") + "\u{1}" + parameters.cacheKey
        if let hit = cached(key, scope: scope) { return (hit.body, hit.totalCount) }
        let result = try await list(parameters, scope: scope, sql: await req.catalogSQL(atLeast: reading.generation.version))
        let page = CatalogPageDTO(data: result.books, meta: .init(facets: result.facets, page: parameters.page.page, perPage: parameters.page.perPage,
                                                                  totalCount: result.total, totalPages: parameters.page.totalPages(for: result.total)))
        let entry = CatalogCache.Entry(body: try .json(page), totalCount: result.total, etag: nil)
        keep(entry, key, scope: scope)
        return (entry.body, entry.totalCount)
    }

    func book(_ id: Int, scope: CatalogScope) async throws -> ByteBuffer? {
        let key = "book\u{1}" + (scope.country ?? "") + "\u{1}\(id)"
        if let hit = cached(key, scope: scope) { return hit.body }
        let sql = await req.catalogSQL(atLeast: reading.generation.version)
        guard let book = try await CatalogQueries(sql: sql, scope: scope).book(id: id) else { return nil }
        let entry = CatalogCache.Entry(body: try .json(ItemDTO(data: book)), totalCount: 1, etag: nil)
        keep(entry, key, scope: scope)
        return entry.body
    }

    /// The count, the page and the facets for `parameters`, the search expanded with typo
    /// alternatives. Searches count and page in one statement; plain lists use the partial
    /// indexes for the page and skip it past the end.
    func list(_ parameters: CatalogParameters, scope: CatalogScope, sql: any SQLDatabase) async throws -> (books: [BookDTO], total: Int, facets: FacetsDTO) {
        let queries = CatalogQueries(sql: sql, scope: scope)
        if !parameters.words.isEmpty {
            var lexicon = TypoVocabulary()
            if parameters.words.contains(where: { $0.count >= SearchText.typoMinLength }) {
                lexicon = try await req.appServices.catalogCache.lexicon(upTo: reading.maxTermID, on: sql)
            }
            let search = CatalogQueries.Search(clauses: parameters.words.map { [$0] + lexicon.alternatives(for: $0) })
            let result = try await queries.searchPage(parameters, search: search)
            return (result.books, result.total, try await queries.facets(parameters, search: search))
        }
        let total = try await queries.count(parameters, search: nil)
        let books = parameters.page.offset < total ? try await queries.page(parameters, search: nil) : []
        return (books, total, try await queries.facets(parameters, search: nil))
    }

    /// Only answers no family control narrows are kept (a child's are per child and short-lived).
    private func cached(_ key: String, scope: CatalogScope) -> CatalogCache.Entry? {
        scope.isEmpty ? req.appServices.catalogCache.entry(key, in: reading.generation) : nil
    }

    private func keep(_ entry: CatalogCache.Entry, _ key: String, scope: CatalogScope) {
        if scope.isEmpty { req.appServices.catalogCache.store(entry, for: key, in: reading.generation) }
    }
}
