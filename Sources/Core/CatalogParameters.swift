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
    public var cacheKey: String { cacheKey(then: "") }

    /// `cacheKey` with `suffixes` after it (a kept answer's schedule state and scope), made in
    /// one byte buffer: a page reads its key twice, for its answer and its meta, and a string
    /// appended to part by part was ~7 % of a one-off page.
    public func cacheKey(then suffixes: String...) -> String {
        // The free-text parts carry their length, so no input can spell another request's key.
        let wordBytes = words.reduce(max(0, words.count - 1)) { $0 + $1.utf8.count }   // the words joined by spaces
        var key: [UInt8] = []
        key.reserveCapacity(wordBytes + 48 + (category?.utf8.count ?? 0) + suffixes.reduce(0) { $0 + $1.utf8.count })
        func add(_ text: String) { key.append(contentsOf: text.utf8) }
        func add(_ number: Int) { key.append(contentsOf: String(number).utf8) }
        add("w="); add(wordBytes); add(":")
        for (i, word) in words.enumerated() {
            if i > 0 { key.append(32) }
            add(word)
        }
        add("\u{1}s="); add(sort.rawValue)
        add("\u{1}p="); add(page.page)
        add("\u{1}n="); add(page.perPage)
        if let age { add("\u{1}a="); add(age) }
        if let publisher { add("\u{1}u="); add(publisher) }
        if let category { add("\u{1}c="); add(category.utf8.count); add(":"); add(category) }
        for suffix in suffixes { add(suffix) }
        return String(decoding: key, as: UTF8.self)
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
