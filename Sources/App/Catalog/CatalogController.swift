import CatalogIndexing
import Core
import Crypto
import SQLKit
import Vapor

/// The parent catalog: `/api/v1/catalog/books`, `/books/:id`, `/categories`. Read-only (it could
/// run against a replica), and served from `CatalogCache` while the catalog does not change.
struct CatalogController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        let catalog = routes.grouped("catalog")
        catalog.get("categories", use: categories)
        let authed = catalog.grouped(ParentAuthMiddleware())
        authed.get("books", use: books)
        authed.get("books", ":id", use: book)
    }

    /// Future-based: when the engine is current, the request is answered on its event loop as
    /// soon as the version read returns; otherwise (catch-up, SQL path, a child's controls) it
    /// continues as a task.
    @Sendable
    func books(req: Request) throws -> EventLoopFuture<Response> {
        let query = QueryParameters(query: req.url.query)
        let parameters = try CatalogParameters(query)
        let child = try Self.childID(query)
        return req.application.catalogCache.current(for: req).flatMap { reading in
            let linked = { @Sendable (body: ByteBuffer, total: Int) -> Response in
                let response = jsonResponse(body)
                response.headers.replaceOrAdd(name: "Link", value: parameters.page.linkHeader(path: req.encodedPath, query: query, totalCount: total))
                return response
            }
            if child == nil, let engine = Self.currentEngine(req, version: reading.generation.version),
               let country = Self.knownCountry(req, reading: reading) {
                let (body, total) = engine.page(parameters, scope: CatalogScope(country: country), now: Date())
                return req.eventLoop.makeSucceededFuture(linked(body, total))
            }
            return req.eventLoop.makeFutureWithTask {
                let scope = try await Self.scope(of: child, reading: reading, req: req)
                let (body, total) = try await Self.booksBody(parameters, scope: scope, reading: reading, req: req)
                return linked(body, total)
            }
        }
    }

    /// `child_id`: a child whose family controls narrow the catalog (one of the caller's).
    static func childID(_ query: QueryParameters) throws -> Int? {
        try query.integer("child_id", in: 1...Int(Int64.max), what: "a positive integer")
    }

    /// The caller's country when this instance already knows it (no statement needed).
    static func knownCountry(_ req: Request, reading: CatalogCache.Reading) -> String? {
        guard let parent = try? req.parentID else { return nil }
        return req.application.parentCountries.cached(parent, version: reading.countriesVersion)
    }

    /// What the catalog is for this caller: their country's, narrowed by `child`'s controls when
    /// one is named. Another parent's child is a 404.
    static func scope(of child: Int?, reading: CatalogCache.Reading, req: Request) async throws -> CatalogScope {
        let country = try await req.parentCountry(version: reading.countriesVersion)
        guard let child else { return CatalogScope(country: country) }
        let (controls, library) = try await req.ownChildControls(child, withLibrary: true)
        var scope = controls.scope(library: library)
        scope.country = country
        return scope
    }

    /// The list body from the engine once caught up, else from the response cache or SQL.
    private static func booksBody(_ parameters: CatalogParameters, scope: CatalogScope, reading: CatalogCache.Reading, req: Request) async throws -> (ByteBuffer, Int) {
        let (generation, maxTermID, _) = reading
        if let engine = try await engine(req, version: generation.version) {
            return engine.page(parameters, scope: scope, now: Date())
        }
        // Without the engine, answers without family controls are kept per country.
        let cache = req.application.catalogCache
        let key = "books\u{1}" + (scope.country ?? "") + "\u{1}" + parameters.cacheKey
        if scope.isEmpty, let hit = cache.entry(key, in: generation) { return (hit.body, hit.totalCount) }
        let result = try await list(parameters, scope: scope, maxTermID: maxTermID, req: req,
                                    sql: await req.catalogSQL(atLeast: generation.version))
        let page = CatalogPageDTO(data: result.books, meta: .init(facets: result.facets, page: parameters.page.page, perPage: parameters.page.perPage,
                                                                  totalCount: result.total, totalPages: parameters.page.totalPages(for: result.total)))
        let entry = CatalogCache.Entry(body: try encode(page), totalCount: result.total, etag: nil)
        if scope.isEmpty { cache.store(entry, for: key, in: generation) }
        return (entry.body, entry.totalCount)
    }

    /// The count and the page for `parameters`, the search expanded with typo alternatives.
    /// Searches count and page in one statement; plain lists use the partial indexes for the
    /// page and skip it past the end.
    static func list(_ parameters: CatalogParameters, scope: CatalogScope? = nil, maxTermID: Int, req: Request,
                     sql: (any SQLDatabase)? = nil) async throws -> (books: [BookDTO], total: Int, facets: FacetsDTO) {
        let sql = sql ?? req.sql
        let queries = CatalogQueries(sql: sql, scope: scope)
        if !parameters.words.isEmpty {
            var lexicon = TypoVocabulary()
            if parameters.words.contains(where: { $0.count >= SearchText.typoMinLength }) {
                lexicon = try await req.application.catalogCache.lexicon(upTo: maxTermID, on: sql)
            }
            let search = CatalogQueries.Search(clauses: parameters.words.map { [$0] + lexicon.alternatives(for: $0) })
            let result = try await queries.searchPage(parameters, search: search)
            return (result.books, result.total, try await queries.facets(parameters, search: search))
        }
        let total = try await queries.count(parameters, search: nil)
        let books = parameters.page.offset < total ? try await queries.page(parameters, search: nil) : []
        return (books, total, try await queries.facets(parameters, search: nil))
    }

    /// The engine when it may answer without waiting: enabled, built and already at `version`.
    static func currentEngine(_ req: Request, version: Int) -> CatalogEngine? {
        let engine = req.application.catalogEngine
        guard req.application.settings.catalogEngine, engine.isReady, engine.currentVersion >= version else { return nil }
        return engine
    }

    /// The engine when it may answer: enabled, built, and brought up to `version` (the catalog
    /// version this request read) — so a commit is in the very next answer on every instance.
    static func engine(_ req: Request, version: Int) async throws -> CatalogEngine? {
        if let engine = currentEngine(req, version: version) { return engine }
        let engine = req.application.catalogEngine
        guard req.application.settings.catalogEngine, engine.isReady else { return nil }
        try await engine.catchUp(to: version, on: req.application.db)
        return engine
    }

    @Sendable
    func book(req: Request) throws -> EventLoopFuture<Response> {
        guard let id = req.parameters.get("id").flatMap({ Int($0) }), id > 0 else { throw Problem.notFound("No such book.") }
        let child = try Self.childID(QueryParameters(query: req.url.query))
        return req.application.catalogCache.current(for: req).flatMap { reading in
            if child == nil, let engine = Self.currentEngine(req, version: reading.generation.version),
               let country = Self.knownCountry(req, reading: reading) {
                guard let body = engine.book(id, scope: CatalogScope(country: country), now: Date()) else {
                    return req.eventLoop.makeFailedFuture(Problem.notFound("No such book."))
                }
                return req.eventLoop.makeSucceededFuture(jsonResponse(body))
            }
            return req.eventLoop.makeFutureWithTask {
                let scope = try await Self.scope(of: child, reading: reading, req: req)
                return jsonResponse(try await Self.bookBody(id, scope: scope, generation: reading.generation, req: req))
            }
        }
    }

    /// A book a child's controls hide is answered as an unknown one: 404.
    private static func bookBody(_ id: Int, scope: CatalogScope, generation: CatalogCache.Generation, req: Request) async throws -> ByteBuffer {
        if let engine = try await engine(req, version: generation.version) {
            guard let body = engine.book(id, scope: scope, now: Date()) else { throw Problem.notFound("No such book.") }
            return body
        }
        let cache = req.application.catalogCache
        let key = "book\u{1}" + (scope.country ?? "") + "\u{1}\(id)"
        if scope.isEmpty, let hit = cache.entry(key, in: generation) { return hit.body }
        let sql = await req.catalogSQL(atLeast: generation.version)
        guard let book = try await CatalogQueries(sql: sql, scope: scope).book(id: id) else { throw Problem.notFound("No such book.") }
        let entry = CatalogCache.Entry(body: try encode(ItemDTO(data: book)), totalCount: 1, etag: nil)
        if scope.isEmpty { cache.store(entry, for: key, in: generation) }
        return entry.body
    }

    struct CategoryDTO: Content {
        let id: Int
        let name: String
        let slug: String
        let iconName: String?
        let displayOrder: Int

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
            try container.encode(slug, forKey: .slug)
            try container.encode(iconName, forKey: .iconName)   // null, not absent
            try container.encode(displayOrder, forKey: .displayOrder)
        }
    }

    /// Public; sends an ETag and answers a matching `If-None-Match` with 304. Future-based: a
    /// cached list is answered on the request's event loop.
    @Sendable
    func categories(req: Request) -> EventLoopFuture<Response> {
        let cache = req.application.catalogCache
        return cache.current(for: req).flatMap { reading in
            if let hit = cache.entry("categories", in: reading.generation) {
                return req.eventLoop.makeSucceededFuture(Self.categoriesResponse(hit, req: req))
            }
            return req.eventLoop.makeFutureWithTask {
                Self.categoriesResponse(try await Self.loadCategories(generation: reading.generation, req: req), req: req)
            }
        }
    }

    private static func loadCategories(generation: CatalogCache.Generation, req: Request) async throws -> CatalogCache.Entry {
        let rows = try await req.catalogSQL(atLeast: generation.version).raw("""
            SELECT id, name, slug, icon_name, display_order FROM categories ORDER BY display_order, name, id
            """).all()
        let categories = try rows.map {
            CategoryDTO(id: try $0.decode(column: "id", as: Int.self), name: try $0.decode(column: "name", as: String.self),
                        slug: try $0.decode(column: "slug", as: String.self), iconName: try $0.decode(column: "icon_name", as: String?.self),
                        displayOrder: try $0.decode(column: "display_order", as: Int.self))
        }
        let body = try encode(ItemDTO(data: categories))
        let etag = "\"" + SHA256.hash(data: Data(body.readableBytesView)).prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
        let entry = CatalogCache.Entry(body: body, totalCount: categories.count, etag: etag)
        req.application.catalogCache.store(entry, for: "categories", in: generation)
        return entry
    }

    private static func categoriesResponse(_ entry: CatalogCache.Entry, req: Request) -> Response {
        let etag = entry.etag ?? ""
        if let match = req.headers.first(name: .ifNoneMatch),
           match == "*" || match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "") == etag }) {
            return Response(status: .notModified, headers: ["ETag": etag, "Cache-Control": "public, max-age=60"])
        }
        let response = jsonResponse(entry.body)
        response.headers.replaceOrAdd(name: .eTag, value: etag)
        response.headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=60")
        return response
    }
}

/// JSON with the app's encoder settings (snake_case, sorted keys, ISO 8601 dates).
func encode<T: Encodable>(_ value: T) throws -> ByteBuffer {
    var buffer = ByteBuffer()
    var headers = HTTPHeaders()
    try ContentConfiguration.global.requireEncoder(for: .json).encode(value, to: &buffer, headers: &headers)
    return buffer
}

func jsonResponse(_ body: ByteBuffer, status: HTTPStatus = .ok) -> Response {
    Response(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: .init(buffer: body))
}

/// A page response with its Link header.
func paged<Item: Content>(_ items: [Item], page: PageRequest, total: Int, query: QueryParameters, req: Request) throws -> Response {
    let dto = PageDTO(data: items, meta: .init(page: page.page, perPage: page.perPage, totalCount: total,
                                                 totalPages: page.totalPages(for: total)))
    let response = jsonResponse(try encode(dto))
    response.headers.replaceOrAdd(name: "Link", value: page.linkHeader(path: req.encodedPath, query: query, totalCount: total))
    return response
}
