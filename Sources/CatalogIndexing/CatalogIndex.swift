import Core
/// The active catalog in memory: every parent catalog answer — filters, search, exact counts,
/// facets, pages in the contract's total orders — from sets and postings, updated book by book.
///
/// Book ids are the set members and the index of every per-book array (they are dense identity
/// values), so a set in id order is also the tie-break order, and a million books are a few dozen
/// flat arrays rather than a million objects. Not thread-safe: the owner serializes writers
/// against readers.
public struct CatalogIndex: Sendable {
    public struct Category: Sendable, Equatable {
        public let id: Int
        public let slug: String
        /// Translated names by locale, each a JSON string literal (docs/localization.md).
        public let names: [String: [UInt8]]
        public init(id: Int, slug: String, names: [String: [UInt8]] = [:]) { self.id = id; self.slug = slug; self.names = names }
    }

    public static let ageBands = [(label: "0-2", age: 0), (label: "2-4", age: 2), (label: "4-6", age: 4), (label: "6-8", age: 6), (label: "8+", age: 8)]
    /// Changes past this many books are applied as a batch: lists filtered and merged once
    /// instead of one insertion per book.
    static let batchThreshold = 64

    // Per book id.
    var active = Bitset()
    var ageMin: [UInt8] = []
    var ageMax: [UInt8] = []
    var createdAt: [Int64] = []
    var publisher: [Int32] = []
    var rightsOffset: [UInt32] = []
    var json = Arena<UInt8>()
    var titleKeys = Arena<UInt8>()
    var bookLexemes = Arena<UInt32>()      // lexeme id << 3 | weight bits
    var bookCategories = Arena<Int32>()
    var rights = Arena<Int64>()             // start, end (Int64.max: open), territory rule triples
    /// Per locale, each translated book's title then description as JSON literals (`null` where
    /// not translated): only translated books hold bytes (`CatalogIndex+Locales.swift`).
    var localized: [String: Arena<UInt8>] = [:]
    /// Per book, the description literal's start and length in its JSON (`CatalogIndex+Locales.swift`).
    var descriptionStart: [UInt32] = []
    var descriptionLength: [UInt32] = []

    // Sets and orders.
    var byAge = [Bitset](repeating: Bitset(), count: 19)
    var byCategory: [Int: Bitset] = [:]
    var byPublisher: [Int: Bitset] = [:]
    /// The age bands' and categories' sets side by side, for a page's facet counts.
    var facets = FacetTable(ages: CatalogIndex.ageBands.map { _ in Bitset() }, categories: [], byCategory: [:])
    var titleOrder: [Int32] = []
    var newestOrder: [Int32] = []
    /// Territory rules by number (0: worldwide), and per rule the books with a window under it.
    var territoryRules: [TerritoryRule] = [.worldwide]
    var ruleNumbers: [TerritoryRule: Int] = [.worldwide: 0]
    var byRule: [Bitset] = [Bitset()]
    /// Per rule, how many windows use it (whether any rule but worldwide is in use, at no cost).
    var ruleWindows: [Int] = [0]
    /// Books with at least one rights window.
    var windowed = Bitset()
    /// Scheduled books: in the catalog only from..<until (few; most books have no schedule).
    public internal(set) var schedule: [Int: (from: Int64, until: Int64)] = [:]
    /// Moves with every change of `schedule` (answers kept for a schedule state name it).
    public internal(set) var scheduleChanges = 0

    // Words.
    var lexemeIDs: [String: UInt32] = [:]
    var lexemeBytes: [[UInt8]] = []
    var lexemes: [LexemeBooks] = []
    /// Per lexeme, the books using it in a title or author (typo vocabulary membership).
    var typoUses: [Int] = []
    /// Lexeme ids in byte order of their text: the lexemes with a prefix are one range.
    var sortedLexemes: [UInt32] = []
    public internal(set) var typos = TypoVocabulary()

    /// In the order the catalog shows them (display_order, name, id): facets follow it.
    public internal(set) var categories: [Category] = []
    var slugs: [String: Int] = [:]
    var bulk = false
    public internal(set) var count = 0

    public init() {}

    public func contains(_ id: Int) -> Bool { active.contains(id) }

    public mutating func setCategories(_ list: [Category]) {
        categories = list
        slugs = Dictionary(list.map { ($0.slug, $0.id) }, uniquingKeysWith: { a, _ in a })
        buildFacets()
    }

    /// The facet table built again from the sets (new categories, the end of a bulk load).
    mutating func buildFacets() {
        facets = FacetTable(ages: Self.ageBands.map { byAge[$0.age] }, categories: categories.map(\.id), byCategory: byCategory)
    }

    /// The category id a `category` parameter names: a slug, else an id (as the SQL resolves it).
    public func categoryID(for parameter: String) -> Int? {
        slugs[parameter] ?? Int(parameter)
    }
}
