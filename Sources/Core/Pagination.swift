/// A page request: 1-based page, 1–100 per page (default 20).
public struct PageRequest: Sendable, Equatable {
    public static let maxPage = 10_000_000
    public let page: Int
    public let perPage: Int
    public var offset: Int { (page - 1) * perPage }

    public init(page: Int = 1, perPage: Int = 20) {
        self.page = page
        self.perPage = perPage
    }

    public init(_ query: QueryParameters) throws(ParameterError) {
        page = try query.integer("page", in: 1...Self.maxPage, what: "an integer from 1 to \(Self.maxPage)") ?? 1
        perPage = try query.integer("per_page", in: 1...100, what: "an integer from 1 to 100") ?? 20
    }

    public func totalPages(for totalCount: Int) -> Int {
        totalCount == 0 ? 0 : (totalCount + perPage - 1) / perPage
    }

    /// The RFC 8288 Link header: first, last (page 1 when empty), prev and next where they exist,
    /// keeping the other parameters. Past the end, prev is the last page.
    public func linkHeader(path: String, query: QueryParameters, totalCount: Int) -> String {
        let totalPages = totalPages(for: totalCount)
        let last = max(totalPages, 1)
        func link(_ page: Int, _ rel: String) -> String {
            "<\(path)?\(query.setting("page", to: String(page)).encoded)>; rel=\"\(rel)\""
        }
        var links = [link(1, "first")]
        if page > 1 { links.append(link(min(page - 1, last), "prev")) }
        if page < totalPages { links.append(link(page + 1, "next")) }
        links.append(link(last, "last"))
        return links.joined(separator: ", ")
    }
}
