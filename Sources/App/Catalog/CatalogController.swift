import Core
import Crypto
import SQLKit
import Vapor

/// The parent catalog: `/api/v1/catalog/books`, `/books/:id`, `/categories`. Read-only, so it
/// could run against a replica.
struct CatalogController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        let catalog = routes.grouped("catalog")
        catalog.get("categories", use: categories)
        let authed = catalog.grouped(ParentAuthMiddleware())
        authed.get("books", use: books)
        authed.get("books", ":id", use: book)
    }

    @Sendable
    func books(req: Request) async throws -> Response {
        let query = QueryParameters(query: req.url.query)
        let parameters = try CatalogParameters(query)
        let result = try await Self.list(parameters, req: req)
        return try paged(result.books, page: parameters.page, total: result.total, query: query, req: req)
    }

    /// The count and the page for `parameters`, the search expanded with typo alternatives.
    static func list(_ parameters: CatalogParameters, req: Request) async throws -> (books: [BookDTO], total: Int) {
        let queries = CatalogQueries(sql: req.sql)
        var search: CatalogQueries.Search?
        if !parameters.words.isEmpty {
            var lexicon = Lexicon()
            if parameters.words.contains(where: { $0.count >= SearchText.typoMinLength }) {
                lexicon = try await req.application.lexicon.refreshed(on: req.sql)
            }
            search = .init(clauses: parameters.words.map { [$0] + SearchText.typoPrefixes(of: $0, in: lexicon) })
        }
        let total = try await queries.count(parameters, search: search)
        let books = parameters.page.offset < total ? try await queries.page(parameters, search: search) : []
        return (books, total)
    }

    @Sendable
    func book(req: Request) async throws -> ItemDTO<BookDTO> {
        guard let id = req.parameters.get("id").flatMap({ Int($0) }), id > 0,
              let book = try await CatalogQueries(sql: req.sql).book(id: id) else {
            throw Problem.notFound("No such book.")
        }
        return ItemDTO(data: book)
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

    /// Public; sends an ETag and answers a matching `If-None-Match` with 304.
    @Sendable
    func categories(req: Request) async throws -> Response {
        let rows = try await req.sql.raw("""
            SELECT id, name, slug, icon_name, display_order FROM categories ORDER BY display_order, name, id
            """).all()
        let categories = try rows.map {
            CategoryDTO(id: try $0.decode(column: "id", as: Int.self), name: try $0.decode(column: "name", as: String.self),
                        slug: try $0.decode(column: "slug", as: String.self), iconName: try $0.decode(column: "icon_name", as: String?.self),
                        displayOrder: try $0.decode(column: "display_order", as: Int.self))
        }
        let response = try await ItemDTO(data: categories).encodeResponse(for: req)
        let body = response.body.data ?? Data()
        let etag = "\"" + SHA256.hash(data: body).prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
        response.headers.replaceOrAdd(name: .eTag, value: etag)
        response.headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=60")
        if let match = req.headers.first(name: .ifNoneMatch),
           match == "*" || match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "") == etag }) {
            return Response(status: .notModified, headers: ["ETag": etag, "Cache-Control": "public, max-age=60"])
        }
        return response
    }
}

/// A page response with its Link header.
func paged<Item: Content>(_ items: [Item], page: PageRequest, total: Int, query: QueryParameters, req: Request) throws -> Response {
    let dto = PageDTO(data: items, meta: .init(page: page.page, perPage: page.perPage, totalCount: total,
                                                 totalPages: page.totalPages(for: total)))
    let response = Response(status: .ok)
    try response.content.encode(dto, as: .json)
    response.headers.replaceOrAdd(name: "Link", value: page.linkHeader(path: req.url.path, query: query, totalCount: total))
    return response
}
