import Core
import Vapor

/// The parent catalog over HTTP: `/api/v1/catalog/books`, `/books/:id`, `/categories`. Parameters,
/// the Link header, ETags and problems; the answers come from `req.catalog` (`CatalogService`).
struct CatalogController: APIRouteCollection {
    func boot(api: APIRoutes) throws {
        api.anyone.get("catalog", "categories", use: categories)
        let authed = api.parentOrChildDevice.grouped("catalog")
        authed.get("books", use: books)
        authed.get("books", ":id", use: book)
        authed.get("suggest", use: suggest)
    }

    /// `q` (required, as the catalog's): up to eight completions, words then titles.
    @Sendable
    func suggest(req: Request) throws -> EventLoopFuture<Response> {
        let query = QueryParameters(query: req.url.query)
        guard (try? query.value("q")) != nil else { throw Problem.invalidParameter("q", "q is required: the text typed so far.") }
        let words = try CatalogParameters(query).words
        guard !words.isEmpty else { throw Problem.invalidParameter("q", "q has no letters or digits to complete.") }
        return req.catalog.suggest(words, child: try Self.childID(query, req: req)).flatMapThrowing { list in
            Response.json(try .json(ItemDTO(data: list))).languageHeaders(req)
        }
    }

    @Sendable
    func books(req: Request) throws -> EventLoopFuture<Response> {
        let query = QueryParameters(query: req.url.query)
        let parameters = try CatalogParameters(query)
        return req.catalog.books(parameters, child: try Self.childID(query, req: req)).map { answer in
            let response = Response.json(answer.body).languageHeaders(req)
            response.headers.replaceOrAdd(name: "Link", value: parameters.page.linkHeader(path: req.encodedPath, query: query, totalCount: answer.total))
            return response
        }
    }

    /// A book the caller's country or a child's controls hide is answered as an unknown one: 404.
    @Sendable
    func book(req: Request) throws -> EventLoopFuture<Response> {
        guard let id = req.parameters.get("id").flatMap({ Int($0) }), id > 0 else { throw Problem.notFound("No such book.") }
        return req.catalog.book(id, child: try Self.childID(QueryParameters(query: req.url.query), req: req)).flatMapThrowing { body in
            guard let body else { throw Problem.notFound("No such book.") }
            return Response.json(body).languageHeaders(req)
        }
    }

    /// `child_id`: a child whose family controls narrow the catalog (one of the caller's). A child
    /// device (child mode) always browses as its child: a `child_id` it sends is ignored.
    static func childID(_ query: QueryParameters, req: Request) throws -> Int? {
        if let own = req.childDeviceChild { return own }
        return try query.integer("child_id", in: 1...Int(Int64.max), what: "a positive integer")
    }

    /// Public; sends an ETag and answers a matching `If-None-Match` with 304.
    @Sendable
    func categories(req: Request) -> EventLoopFuture<Response> {
        req.catalog.categories().map { entry in
            let etag = entry.etag ?? ""
            if EntityTag.matches(req.headers.first(name: .ifNoneMatch), etag) {
                return Response(status: .notModified, headers: ["ETag": etag, "Cache-Control": "public, max-age=60"]).languageHeaders(req)
            }
            let response = Response.json(entry.body).languageHeaders(req)
            response.headers.replaceOrAdd(name: .eTag, value: etag)
            response.headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=60")
            return response
        }
    }
}
