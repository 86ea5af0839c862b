import Core
/// Which remembered answers a change of some books leaves exactly as they were.
///
/// A search answer can change only through the changed books: their own membership, or the
/// typo vocabulary their lexemes add or remove — and a vocabulary word that alters a query's
/// expansion is one edit from a prefix of that query's word. So an answer stays valid when no word
/// of its query could match any lexeme of a changed book, before or after the change. "Could
/// match" is the index's rule or wider (the word is a prefix of the lexeme; for words of
/// `SearchText.typoMinLength` letters or more, one edit — a letter changed, added, dropped, or two
/// neighbours swapped — from a prefix of it), so it never keeps an answer that changed.
/// Narrower, when the change is of a few books (`MemoCarry+Books.swift`): a search's expansion
/// changes only through the lexemes coming into or leaving the catalog, and its matches only
/// through a changed book that may match every one of its words on one side of its change, in
/// its scope and filters — a two-word search a take-down reaches through one word stays.
/// Answers without search words (browsing) are dropped when a book came or went or a changed
/// book's filters or sort keys changed (`browsing`) — only those whose filters that book meets,
/// before or after (`affectsBrowse`); a change that only alters words (a description) leaves them.
///
/// `CatalogIndex.carry(changing:removing:)` builds the carry from what each book's change
/// actually alters: nothing for a book whose indexed record is the same (a cover, a video, a
/// touch), only the words added or removed when its filters, sort keys and shown title stay.
///
/// Word forms, synonyms and sound-alikes widen "could match": a changed book holding one of the
/// word's forms or stem tokens (`SearchExpansion.forms(of:)`, kept with the answer), or a word
/// with the same Metaphone code, affects it too.
public struct MemoCarry: Sendable {
    /// Every lexeme of the change (`lexemes`), as a search word's "could match".
    private let lexicon: CarryLexicon
    /// The lexemes coming into or leaving the catalog, and the changed books one by one
    /// (`MemoCarry+Books.swift`; nil: not worked out — every lexeme counts for every search).
    let vocabulary: CarryLexicon?
    let changed: [ChangedBook]?
    /// Whether answers without search words (browsing) may have changed.
    public let browsing: Bool
    /// The filters of the books whose change reaches browsing answers, before and after (nil:
    /// unknown — every browsing answer).
    private let footprints: [Footprint]?
    /// What reaches only the answers in some countries' catalogs (books whose territory rules
    /// alone changed): those countries, and what to check the answers in them against besides.
    public var territorial: (countries: Set<String>, carry: MemoCarry)? { territorialPart.first }
    private let territorialPart: [(countries: Set<String>, carry: MemoCarry)]   // (an array: a struct cannot hold itself)
    /// The books whose title key moved, by every lexeme they had or have: a search in title
    /// order whose words may match one may have them among its matches, in another place.
    public var titleOrder: MemoCarry? { titleOrderPart.first }
    private let titleOrderPart: [MemoCarry]
    /// The lexemes the carry checks words against (everywhere: the common words' sets over the
    /// whole catalog follow them).
    public var lexemes: Set<String> { lexicon.whole }
    /// The books whose shown title, author, language or translations changed: a kept page's
    /// highlights showing one of them go, whether or not its answer stays (`reachesPage`).
    public let shown: Set<Int>
    /// The changed books before the change (nil: one is scheduled, or none reaches a browse), and
    /// on both sides once it is applied (`CatalogIndex.counting`): what patches a browse (`patched`).
    var countedBefore: [CountedBook]?
    public internal(set) var counted: CountedChange?
    /// Nothing an answer or a page reads changed (every changed book's record is the same where it counts).
    public var changesNothing: Bool { lexicon.whole.isEmpty && !browsing && territorial == nil && shown.isEmpty && titleOrder == nil }

    /// Whether a page of these books shows one whose shown fields changed (its highlights).
    public func reachesPage(_ ids: [Int]) -> Bool { !shown.isEmpty && ids.contains(where: shown.contains) }

    /// `lexemes`: every lexeme of the changed books, old and new (or only those a change added or
    /// removed, when nothing else about the book changed); `browsing`: whether a book's filters
    /// or sort keys changed; `shown`: the books whose shown fields changed; `territorial`: what
    /// reaches only some countries' catalogs; `vocabulary` and `changed`: the lexemes coming into
    /// or leaving the catalog and the changed books one by one (a search is then reached only
    /// through a book that may match all its words, `reaches(sides:filters:)`; nil: by any lexeme).
    public init(lexemes: some Sequence<String>, browsing: Bool = true, footprints: [Footprint]? = nil, shown: Set<Int> = [],
                territorial: (countries: Set<String>, carry: MemoCarry)? = nil, titleOrder: MemoCarry? = nil, countedBefore: [CountedBook]? = nil,
                vocabulary: [String]? = nil, changed: [ChangedBook]? = nil) {
        self.browsing = browsing
        self.countedBefore = countedBefore
        self.shown = shown
        titleOrderPart = titleOrder.map { [$0] } ?? []
        self.footprints = footprints
        territorialPart = territorial.map { [$0] } ?? []
        lexicon = CarryLexicon(lexemes)
        // Both or neither: a search's words are then checked against the vocabulary first.
        self.vocabulary = changed == nil ? nil : vocabulary.map(CarryLexicon.init)
        self.changed = vocabulary == nil ? nil : changed
    }

    /// Whether no lexeme comes into or leaves the catalog (known when the changed books are read
    /// one by one): no word's expansion can change (`WordReach.vocabulary`).
    public var keepsVocabulary: Bool { vocabulary?.whole.isEmpty ?? false }

    /// `mayMatch(word)`, or one of `forms` (the word's forms and stem tokens) is a changed
    /// book's lexeme, or a changed book has a word that sounds like it.
    public func mayMatch(_ word: String, forms: [String]) -> Bool { lexicon.mayMatch(word, forms: forms) }

    /// Whether an answer to a query with these search words may have changed — in `country`'s
    /// catalog (nil: an answer no country narrows, the whole catalog); a browsing answer's
    /// `filters` (`CatalogIndex.browseFilters`; nil: unknown).
    /// A search's `filters` say whether it is in title order (nil: it may be).
    public func affects(words: [String], synonyms: Synonyms = Synonyms(), country: String? = nil, filters: BrowseFilters? = nil) -> Bool {
        func reached(_ carry: MemoCarry) -> Bool { words.contains(where: { carry.mayMatch($0, forms: SearchExpansion.forms(of: $0, synonyms: synonyms)) }) }
        func searchReached() -> Bool {
            let forms = words.map { SearchExpansion.forms(of: $0, synonyms: synonyms) }
            var sides: UInt64 = 0
            for (word, forms) in zip(words, forms) {
                let reach = reach(word, forms: forms)
                if reach.vocabulary { return true }
                sides |= reach.altered
            }
            for (word, forms) in zip(words, forms) where sides != 0 { sides &= self.sides(word, forms: forms) }
            return reaches(sides: sides, filters: filters)
        }
        if words.isEmpty ? affectsBrowse(filters) : searchReached() { return true }
        if !words.isEmpty, filters?.titleOrder ?? true, let titleOrder, reached(titleOrder) { return true }
        guard let territorial, reaches(country) else { return false }
        return territorial.carry.affects(words: words, synonyms: synonyms, filters: filters)
    }

    /// A changed book's filters on one side of its change: what a browsing answer reads of it.
    /// (Ids compared in 32 bits, as the index keeps a book's: ids equal there count as equal.)
    public struct Footprint: Sendable {
        /// A book's publisher: none, one, or not known (the index's 32 bits read back as its
        /// "none" — an id ≡ -1 mod 2³² is stored the same — so any publisher filter may count it).
        public enum Publisher: Sendable { case none, id(Int32), unknown }
        let publisher: Publisher
        let ages: ClosedRange<Int>?
        let categories: [Int32]
        /// Only the book's place in the title order changed (its title key; every filter the
        /// same on both sides): no count moves, only a page in title order can.
        public var orderOnly = false
        /// Whether `categories` name the book's categories exactly (every category id of the
        /// index fits in 32 bits), so a scope's blocked category can be ruled out by them.
        public var exactCategories = false
        public init(publisher: Publisher, ageMin: Int, ageMax: Int, categories: [Int]) {
            self.publisher = publisher
            ages = ageMin <= ageMax ? ageMin...ageMax : nil
            self.categories = categories.map { Int32(truncatingIfNeeded: $0) }
        }
        public init(publisher: Int?, ageMin: Int, ageMax: Int, categories: [Int]) {
            self.init(publisher: publisher.map { .id(Int32(truncatingIfNeeded: $0)) } ?? .none, ageMin: ageMin, ageMax: ageMax, categories: categories)
        }

        /// Whether a browse with `filters` may read this side of the book: it may be in the
        /// browse's scope, and then meets the publisher asked for and the age or the category
        /// (each counted without the other: the facets) — or, for a change of order only, all of
        /// them in a page in title order.
        func reaches(_ filters: BrowseFilters) -> Bool {
            guard mayBeVisible(maxAge: filters.maxAge, blockedCategories: filters.blockedCategories) else { return false }
            if let asked = filters.publisher {
                switch publisher {
                case .none: return false
                case .id(let id): guard id == Int32(truncatingIfNeeded: asked) else { return false }
                case .unknown: break
                }
            }
            let age = filters.age.map { age in ages?.contains(age) ?? false } ?? true
            let category = filters.category.map { categories.contains(Int32(truncatingIfNeeded: $0)) } ?? true
            return orderOnly ? filters.titleOrder && age && category : age || category
        }

        /// False only when the book is surely outside a scope of `maxAge` (no age it covers is at
        /// most that: `CatalogIndex.visible`) or `blockedCategories` (one of its categories).
        func mayBeVisible(maxAge: Int?, blockedCategories: [Int]) -> Bool {
            if let maxAge, maxAge < 18, let ages, ages.lowerBound > max(0, maxAge) { return false }
            guard exactCategories else { return true }
            return !blockedCategories.contains { blocked in Int32(exactly: blocked).map(categories.contains) ?? false }
        }
    }

    /// The filters of a browsing answer: its publisher, age and category (-1: a category no
    /// slug or id names — no book is in it), whether its page is in title order (a search's
    /// filters say that alone: the rest is read from its words), and of the scope
    /// it is asked in, the oldest age and the blocked categories (a book outside them both before
    /// and after its change is in none of its counts).
    public struct BrowseFilters: Sendable, Equatable {
        public var publisher: Int?, age: Int?, category: Int?
        public var titleOrder = true
        public var maxAge: Int?
        public var blockedCategories: [Int] = []
        public init(publisher: Int?, age: Int?, category: Int?, titleOrder: Bool = true, maxAge: Int? = nil, blockedCategories: [Int] = []) {
            self.publisher = publisher; self.age = age; self.category = category
            self.titleOrder = titleOrder; self.maxAge = maxAge; self.blockedCategories = blockedCategories
        }
    }

    /// Whether a browsing answer with `filters` may have changed (nil: unknown). It reads a book
    /// only through its filters: the page and total the books meeting all of them, the category
    /// counts those meeting all but the category, the age bands' those meeting all but the age —
    /// so a book of another publisher, or outside both the age and the category asked for, or
    /// outside the scope, before and after its change, changes none of it; a book whose title
    /// alone moved changes only a page in title order whose filters it meets.
    public func affectsBrowse(_ filters: BrowseFilters?) -> Bool {
        guard browsing else { return false }
        guard let footprints, let filters else { return true }
        return footprints.contains { $0.reaches(filters) }
    }

    /// Whether the countries of `territorial` include `country` (nil: no country's catalog).
    public func reaches(_ country: String?) -> Bool {
        guard let country, let territorial else { return false }
        return territorial.countries.contains(country)
    }

    /// Could `word` match one of the lexemes (`CarryLexicon.mayMatch`): as a prefix, or
    /// (typo-length words) within one edit of a prefix.
    public func mayMatch(_ word: String) -> Bool { lexicon.mayMatch(word) }
}
