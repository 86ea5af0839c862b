/// The parameters of `GET /api/v1/catalog/books`, parsed and validated.
public struct CatalogParameters: Sendable, Equatable {
    public enum Sort: String, Sendable, CaseIterable { case relevance, title, newest }

    public static let maxQueryLength = 200

    public var text: String?
    /// Normalised search words (case and accents folded); empty when there is no search.
    public var words: [String]
    public var age: Int?
    public var publisher: Int?
    /// A category slug or id.
    public var category: String?
    public var page: PageRequest
    /// The effective order: `relevance` only when there are search words.
    public var sort: Sort

    public init(text: String? = nil, age: Int? = nil, publisher: Int? = nil, category: String? = nil,
                page: PageRequest = PageRequest(), sort: Sort? = nil) {
        self.text = text
        self.words = text.map(SearchText.words) ?? []
        self.age = age
        self.publisher = publisher
        self.category = category
        self.page = page
        let requested = sort ?? (words.isEmpty ? .title : .relevance)
        self.sort = requested == .relevance && words.isEmpty ? .title : requested
    }

    /// One key per distinct result: equal for requests that must get the same page.
    public var cacheKey: String {
        // The free-text parts carry their length, so no input can spell another request's key.
        let joined = words.joined(separator: " ")
        var parts = ["w=\(joined.utf8.count):" + joined, "s=" + sort.rawValue, "p=\(page.page)", "n=\(page.perPage)"]
        if let age { parts.append("a=\(age)") }
        if let publisher { parts.append("u=\(publisher)") }
        if let category { parts.append("c=\(category.utf8.count):" + category) }
        return parts.joined(separator: "\u{1}")
    }

    public init(_ query: QueryParameters) throws(ParameterError) {
        let text = try query.value("q")
        // Characters as a reader counts them; and at most 4 code points each on average, so one
        // "character" of thousands of combining marks cannot make a kept key of any size.
        if let text, text.count > Self.maxQueryLength || text.unicodeScalars.count > 4 * Self.maxQueryLength {
            throw ParameterError(field: "q", message: "q must be at most \(Self.maxQueryLength) characters")
        }
        self.init(
            text: text,
            age: try query.integer("age", in: 0...18, what: "an integer from 0 to 18"),
            publisher: try query.integer("publisher", in: 1...Int(Int64.max), what: "a positive integer"),
            category: try query.value("category"),
            page: try PageRequest(query),
            sort: try query.choice("sort", as: Sort.self, allowed: Sort.allCases))
    }
}

/// The parameters of a child's library list.
public struct LibraryParameters: Sendable, Equatable {
    public enum Sort: String, Sendable, CaseIterable {
        case recentlyAdded = "recently_added", title, recentlyWatched = "recently_watched"
    }
    public var sort: Sort
    public var page: PageRequest

    public init(sort: Sort = .recentlyAdded, page: PageRequest = PageRequest()) {
        self.sort = sort
        self.page = page
    }

    public init(_ query: QueryParameters) throws(ParameterError) {
        self.init(sort: try query.choice("sort", as: Sort.self, allowed: Sort.allCases) ?? .recentlyAdded,
                  page: try PageRequest(query))
    }
}
