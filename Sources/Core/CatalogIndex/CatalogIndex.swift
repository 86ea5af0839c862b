/// The active catalog in memory: every parent catalog answer — filters, search, exact counts,
/// facets, pages in the contract's total orders — from sets and postings, updated book by book.
///
/// Book ids are the set members (they are dense identity values), so a set in id order is also
/// the tie-break order. Not thread-safe: the owner serializes writers against readers.
public struct CatalogIndex: Sendable {
    struct Stored: Sendable {
        var titleKey: [UInt8]
        var createdAt: Int64
        var ageMin: UInt8
        var ageMax: UInt8
        var publisherID: Int?
        var categoryIDs: [Int]
        /// lexeme id << 3 | weight bits
        var lexemes: [UInt32]
        var json: [UInt8]
        var rightsOffset: Int
        var rights: [CatalogBook.RightsWindow]

        func render(at now: Int64, into out: inout [UInt8]) {
            out.append(contentsOf: json[..<rightsOffset])
            let available = rights.contains { $0.contains(now) }
            out.append(contentsOf: available ? Array("true".utf8) : Array("false".utf8))
            out.append(contentsOf: json[rightsOffset...])
        }
    }

    public struct Category: Sendable, Equatable {
        public let id: Int
        public let slug: String
        public init(id: Int, slug: String) { self.id = id; self.slug = slug }
    }

    public static let ageBands = [(label: "0-2", age: 0), (label: "2-4", age: 2), (label: "4-6", age: 4), (label: "6-8", age: 6), (label: "8+", age: 8)]

    private var books: [Int: Stored] = [:]
    private var active = Bitset()
    private var byAge = [Bitset](repeating: Bitset(), count: 19)
    private var byCategory: [Int: Bitset] = [:]
    private var byPublisher: [Int: Bitset] = [:]
    private var titleOrder: [Int32] = []
    private var newestOrder: [Int32] = []
    private var lexemeIDs: [String: UInt32] = [:]
    private var lexemeBytes: [[UInt8]] = []
    /// Lexeme ids in byte order of their text: the lexemes with a prefix are one range.
    private var sortedLexemes: [UInt32] = []
    /// Per lexeme: book id << 3 | weight bits, in id order.
    private var postings: [[UInt32]] = []
    public private(set) var typos = TypoVocabulary()
    /// In the order the catalog shows them (display_order, name, id): facets follow it.
    public private(set) var categories: [Category] = []
    private var slugs: [String: Int] = [:]
    private var bulk = false

    public init() {}

    public var count: Int { books.count }
    public func contains(_ id: Int) -> Bool { books[id] != nil }

    public mutating func setCategories(_ list: [Category]) {
        categories = list
        slugs = Dictionary(list.map { ($0.slug, $0.id) }, uniquingKeysWith: { a, _ in a })
    }

    // MARK: - Changes

    /// Starts a bulk load: books arrive in increasing id order, the orders are sorted once at the end.
    public mutating func beginBulk() { bulk = true }

    public mutating func endBulk() {
        bulk = false
        let books = self.books
        titleOrder = titleOrder.sorted { Self.lessTitle(books, Int($0), Int($1)) }
        newestOrder = newestOrder.sorted { Self.lessNewest(books, Int($0), Int($1)) }
        let lexemeBytes = self.lexemeBytes
        sortedLexemes = Array(0..<UInt32(lexemeBytes.count)).sorted { lexemeBytes[Int($0)].lexicographicallyPrecedes(lexemeBytes[Int($1)]) }
        var words: [String] = []
        for (id, stored) in books {
            _ = id
            for entry in stored.lexemes where entry & 3 != 0 { words.append(lexemeText(entry >> 3)) }
        }
        typos.insertAll(words)
    }

    /// Adds or replaces a book.
    public mutating func upsert(_ book: CatalogBook) {
        if books[book.id] != nil { remove(book.id) }
        let id = book.id
        var lexemes: [UInt32] = []
        lexemes.reserveCapacity(book.lexemes.count)
        for (text, weights) in book.lexemes {
            let lexeme = intern(text)
            lexemes.append(lexeme << 3 | UInt32(weights & 7))
            let entry = UInt32(id) << 3 | UInt32(weights & 7)
            if bulk {
                postings[Int(lexeme)].append(entry)
            } else {
                postings[Int(lexeme)].insert(entry, at: lowerBound(postings[Int(lexeme)], UInt32(id) << 3))
                if weights & 3 != 0 { typos.insert(text) }
            }
        }
        books[id] = Stored(titleKey: book.titleKey, createdAt: book.createdAt, ageMin: UInt8(clamping: book.ageMin),
                           ageMax: UInt8(clamping: book.ageMax), publisherID: book.publisherID, categoryIDs: book.categoryIDs,
                           lexemes: lexemes, json: book.json, rightsOffset: book.rightsOffset, rights: book.rights)
        active.insert(id)
        for age in 0...18 where book.ageMin <= age && age <= book.ageMax { byAge[age].insert(id) }
        for category in book.categoryIDs { byCategory[category, default: Bitset()].insert(id) }
        if let publisher = book.publisherID { byPublisher[publisher, default: Bitset()].insert(id) }
        if bulk {
            titleOrder.append(Int32(id))
            newestOrder.append(Int32(id))
        } else {
            let titleAt = position(in: titleOrder, of: id, by: lessTitle)
            titleOrder.insert(Int32(id), at: titleAt)
            let newestAt = position(in: newestOrder, of: id, by: lessNewest)
            newestOrder.insert(Int32(id), at: newestAt)
        }
    }

    /// Removes a book (no longer active, or deleted); unknown ids are ignored.
    public mutating func remove(_ id: Int) {
        guard let stored = books[id] else { return }
        if let at = index(in: titleOrder, of: id, by: lessTitle) { titleOrder.remove(at: at) }
        if let at = index(in: newestOrder, of: id, by: lessNewest) { newestOrder.remove(at: at) }
        for entry in stored.lexemes {
            let lexeme = Int(entry >> 3)
            let at = lowerBound(postings[lexeme], UInt32(id) << 3)
            if at < postings[lexeme].count && postings[lexeme][at] >> 3 == UInt32(id) { postings[lexeme].remove(at: at) }
            if entry & 3 != 0 { typos.remove(lexemeText(entry >> 3)) }
        }
        active.remove(id)
        for age in 0...18 where Int(stored.ageMin) <= age && age <= Int(stored.ageMax) { byAge[age].remove(id) }
        for category in stored.categoryIDs { byCategory[category]?.remove(id) }
        if let publisher = stored.publisherID { byPublisher[publisher]?.remove(id) }
        books[id] = nil
    }

    private mutating func intern(_ text: String) -> UInt32 {
        if let id = lexemeIDs[text] { return id }
        let id = UInt32(lexemeBytes.count)
        lexemeIDs[text] = id
        lexemeBytes.append(Array(text.utf8))
        postings.append([])
        if !bulk {
            let bytes = lexemeBytes[Int(id)]
            var a = 0, b = sortedLexemes.count
            while a < b {
                let m = (a + b) / 2
                if lexemeBytes[Int(sortedLexemes[m])].lexicographicallyPrecedes(bytes) { a = m + 1 } else { b = m }
            }
            sortedLexemes.insert(id, at: a)
        }
        return id
    }

    private func lexemeText(_ id: UInt32) -> String { String(decoding: lexemeBytes[Int(id)], as: UTF8.self) }

    // MARK: - Orders

    private func lessTitle(_ a: Int, _ b: Int) -> Bool { Self.lessTitle(books, a, b) }
    private func lessNewest(_ a: Int, _ b: Int) -> Bool { Self.lessNewest(books, a, b) }

    private static func lessTitle(_ books: [Int: Stored], _ a: Int, _ b: Int) -> Bool {
        let x = books[a]!.titleKey, y = books[b]!.titleKey
        if x != y { return x.lexicographicallyPrecedes(y) }
        return a < b
    }

    private static func lessNewest(_ books: [Int: Stored], _ a: Int, _ b: Int) -> Bool {
        let x = books[a]!.createdAt, y = books[b]!.createdAt
        if x != y { return x > y }
        return a > b
    }

    private func position(in order: [Int32], of id: Int, by less: (Int, Int) -> Bool) -> Int {
        var a = 0, b = order.count
        while a < b {
            let m = (a + b) / 2
            if less(Int(order[m]), id) { a = m + 1 } else { b = m }
        }
        return a
    }

    private func index(in order: [Int32], of id: Int, by less: (Int, Int) -> Bool) -> Int? {
        let at = position(in: order, of: id, by: less)
        return at < order.count && order[at] == Int32(id) ? at : nil
    }

    private func lowerBound(_ list: [UInt32], _ value: UInt32) -> Int {
        var a = 0, b = list.count
        while a < b {
            let m = (a + b) / 2
            if list[m] < value { a = m + 1 } else { b = m }
        }
        return a
    }

    // MARK: - Answers

    public struct Answer: Sendable, Equatable {
        public var total: Int
        public var ids: [Int]
        /// Per category, in catalog order: matches if that category were the filter.
        public var categoryCounts: [(id: Int, count: Int)]
        /// Per age band of the picker: matches if that band's age were the filter.
        public var ageBandCounts: [Int]

        public static func == (a: Answer, b: Answer) -> Bool {
            a.total == b.total && a.ids == b.ids && a.ageBandCounts == b.ageBandCounts
                && a.categoryCounts.map(\.id) == b.categoryCounts.map(\.id) && a.categoryCounts.map(\.count) == b.categoryCounts.map(\.count)
        }
    }

    /// The category id a `category` parameter names: a slug, else an id (as the SQL resolves it).
    public func categoryID(for parameter: String) -> Int? {
        slugs[parameter] ?? Int(parameter)
    }

    /// The sets of one search word: where it matches (with its typo alternatives) anywhere, in a
    /// title, in a title or author; where it matches without a typo; where it is a whole word.
    struct WordSets {
        var any = Bitset(), title = Bitset(), titleOrAuthor = Bitset(), exact = Bitset(), whole = Bitset()
    }

    private func wordSets(_ word: String) -> WordSets {
        var sets = WordSets()
        let capacity = active.capacity
        sets.any.reserve(capacity); sets.title.reserve(capacity); sets.titleOrAuthor.reserve(capacity)
        sets.exact.reserve(capacity); sets.whole.reserve(capacity)
        let bytes = Array(word.utf8)
        scan(prefix: bytes, into: &sets, exact: true)
        if let whole = lexemeIDs[word] {
            for entry in postings[Int(whole)] { sets.whole.insert(Int(entry >> 3)) }
        }
        for alternative in typos.alternatives(for: word) {
            scan(prefix: Array(alternative.utf8), into: &sets, exact: false)
        }
        return sets
    }

    private func scan(prefix: [UInt8], into sets: inout WordSets, exact: Bool) {
        var a = 0, b = sortedLexemes.count
        while a < b {
            let m = (a + b) / 2
            if lexemeBytes[Int(sortedLexemes[m])].lexicographicallyPrecedes(prefix) { a = m + 1 } else { b = m }
        }
        var i = a
        while i < sortedLexemes.count {
            let lexeme = Int(sortedLexemes[i])
            guard lexemeBytes[lexeme].starts(with: prefix) else { break }
            for entry in postings[lexeme] {
                let id = Int(entry >> 3)
                sets.any.insert(id)
                if entry & 1 != 0 { sets.title.insert(id) }
                if entry & 3 != 0 { sets.titleOrAuthor.insert(id) }
                if exact { sets.exact.insert(id) }
            }
            i += 1
        }
    }

    public func answer(_ parameters: CatalogParameters) -> Answer {
        let words = parameters.words.map(wordSets)
        var base = active
        for word in words { base.formIntersection(word.any) }
        // The filters, each also left out once for its own facet.
        var noCategory = base, noAge = base
        var categorySet: Bitset?
        if let category = parameters.category {
            if category.unicodeScalars.contains("\u{0}") { categorySet = Bitset() }
            else { categorySet = categoryID(for: category).flatMap { byCategory[$0] } ?? Bitset() }
        }
        if let publisher = parameters.publisher {
            let set = byPublisher[publisher] ?? Bitset()
            noCategory.formIntersection(set); noAge.formIntersection(set)
        }
        if let age = parameters.age { noCategory.formIntersection(byAge[age]) }
        if let categorySet { noAge.formIntersection(categorySet) }
        var matches = noAge
        if let age = parameters.age { matches.formIntersection(byAge[age]) }

        let total = matches.count
        let categoryCounts = categories.map { (id: $0.id, count: byCategory[$0.id].map(noCategory.intersectionCount) ?? 0) }
        let ageBandCounts = Self.ageBands.map { noAge.intersectionCount(byAge[$0.age]) }
        let page = parameters.page
        var ids: [Int] = []
        if page.offset < total {
            switch parameters.sort {
            case .relevance where !words.isEmpty: ids = relevancePage(matches, total: total, words: words, page: page)
            case .newest: ids = orderedPage(matches, total: total, order: newestOrder, page: page, by: lessNewest)
            default: ids = orderedPage(matches, total: total, order: titleOrder, page: page, by: lessTitle)
            }
        }
        return Answer(total: total, ids: ids, categoryCounts: categoryCounts, ageBandCounts: ageBandCounts)
    }

    /// A page in a stored order: few matches are sorted directly; many are found by walking the order.
    private func orderedPage(_ matches: Bitset, total: Int, order: [Int32], page: PageRequest, by less: (Int, Int) -> Bool) -> [Int] {
        let end = min(page.offset + page.perPage, total)
        if total <= 512 {
            return Array(matches.members.sorted(by: less)[page.offset..<end])
        }
        var result: [Int] = []
        result.reserveCapacity(end - page.offset)
        var seen = 0
        for id in order {
            guard matches.contains(Int(id)) else { continue }
            if seen >= page.offset { result.append(Int(id)) }
            seen += 1
            if seen == end { break }
        }
        return result
    }

    /// Relevance: tier (all words in titles 4, in titles or authors 2, all without a typo 1)
    /// descending, then the number of words found as whole words descending, then id.
    private func relevancePage(_ matches: Bitset, total: Int, words: [WordSets], page: PageRequest) -> [Int] {
        var inTitle = matches, inTitleOrAuthor = matches, exact = matches
        for word in words {
            inTitle.formIntersection(word.title)
            inTitleOrAuthor.formIntersection(word.titleOrAuthor)
            exact.formIntersection(word.exact)
        }
        let n = words.count
        func key(_ id: Int) -> Int {
            let tier = (inTitle.contains(id) ? 4 : 0) + (inTitleOrAuthor.contains(id) ? 2 : 0) + (exact.contains(id) ? 1 : 0)
            var score = 0
            for word in words where word.whole.contains(id) { score += 1 }
            return tier * (n + 1) + score
        }
        // Counting sort by key, descending; ids stay in increasing order within a key.
        var buckets = [[Int]](repeating: [], count: 8 * (n + 1))
        matches.forEach { id in buckets[key(id)].append(id); return true }
        var result: [Int] = []
        var skip = page.offset
        for bucket in buckets.reversed() where !bucket.isEmpty {
            if skip >= bucket.count { skip -= bucket.count; continue }
            let take = bucket[skip..<min(bucket.count, skip + page.perPage - result.count)]
            result.append(contentsOf: take)
            skip = 0
            if result.count == page.perPage { break }
        }
        return result
    }

    /// The book objects of `ids` as a JSON array's elements, rights evaluated at `now`.
    public func render(_ ids: [Int], at now: Int64, into out: inout [UInt8]) {
        for (i, id) in ids.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            books[id]?.render(at: now, into: &out)
        }
    }

    public func render(_ id: Int, at now: Int64) -> [UInt8]? {
        guard let stored = books[id] else { return nil }
        var out: [UInt8] = []
        stored.render(at: now, into: &out)
        return out
    }
}
