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
        public init(id: Int, slug: String) { self.id = id; self.slug = slug }
    }

    public static let ageBands = [(label: "0-2", age: 0), (label: "2-4", age: 2), (label: "4-6", age: 4), (label: "6-8", age: 6), (label: "8+", age: 8)]
    /// Changes past this many books are applied as a batch: lists filtered and merged once
    /// instead of one insertion per book.
    static let batchThreshold = 64

    // Per book id.
    var active = Bitset()
    private(set) var ageMin: [UInt8] = []
    var ageMax: [UInt8] = []
    var createdAt: [Int64] = []
    private(set) var publisher: [Int32] = []
    var rightsOffset: [UInt32] = []
    var json = Arena<UInt8>()
    var titleKeys = Arena<UInt8>()
    var bookLexemes = Arena<UInt32>()      // lexeme id << 3 | weight bits
    var bookCategories = Arena<Int32>()
    var rights = Arena<Int64>()             // start, end (Int64.max: open), territory rule triples

    // Sets and orders.
    var byAge = [Bitset](repeating: Bitset(), count: 19)
    var byCategory: [Int: Bitset] = [:]
    var byPublisher: [Int: Bitset] = [:]
    var titleOrder: [Int32] = []
    var newestOrder: [Int32] = []
    /// Territory rules by number (0: worldwide), and per rule the books with a window under it.
    var territoryRules: [TerritoryRule] = [.worldwide]
    private var ruleNumbers: [TerritoryRule: Int] = [.worldwide: 0]
    var byRule: [Bitset] = [Bitset()]
    /// Per rule, how many windows use it (whether any rule but worldwide is in use, at no cost).
    var ruleWindows: [Int] = [0]
    /// Books with at least one rights window.
    var windowed = Bitset()
    /// Scheduled books: in the catalog only from..<until (few; most books have no schedule).
    public private(set) var schedule: [Int: (from: Int64, until: Int64)] = [:]
    /// Moves with every change of `schedule` (answers kept for a schedule state name it).
    public private(set) var scheduleChanges = 0

    // Words.
    private var lexemeIDs: [String: UInt32] = [:]
    var lexemeBytes: [[UInt8]] = []
    var lexemes: [LexemeBooks] = []
    /// Per lexeme, the books using it in a title or author (typo vocabulary membership).
    private var typoUses: [Int] = []
    /// Lexeme ids in byte order of their text: the lexemes with a prefix are one range.
    var sortedLexemes: [UInt32] = []
    public private(set) var typos = TypoVocabulary()

    /// In the order the catalog shows them (display_order, name, id): facets follow it.
    public private(set) var categories: [Category] = []
    private var slugs: [String: Int] = [:]
    private var bulk = false
    public private(set) var count = 0

    public init() {}

    public func contains(_ id: Int) -> Bool { active.contains(id) }

    public mutating func setCategories(_ list: [Category]) {
        categories = list
        slugs = Dictionary(list.map { ($0.slug, $0.id) }, uniquingKeysWith: { a, _ in a })
    }

    /// The category id a `category` parameter names: a slug, else an id (as the SQL resolves it).
    public func categoryID(for parameter: String) -> Int? {
        slugs[parameter] ?? Int(parameter)
    }

    // MARK: - Changes

    /// Starts a bulk load: books arrive in increasing id order into an empty index, and lists are
    /// sorted once at the end.
    public mutating func beginBulk() { bulk = true }

    public mutating func endBulk() {
        bulk = false
        var order = titleOrder
        titleOrder = []
        order.sort { lessTitle(Int($0), Int($1)) }
        titleOrder = order
        order = newestOrder
        newestOrder = []
        order.sort { lessNewest(Int($0), Int($1)) }
        newestOrder = order
        let capacity = active.capacity
        for i in lexemes.indices { lexemes[i].finish(capacity: capacity) }
        sortLexemes()
        typos.insertAll(typoUses.indices.filter { typoUses[$0] > 0 }.map { lexemeText(UInt32($0)) })
    }

    /// Adds a book during a bulk load.
    public mutating func upsert(_ book: CatalogBook) {
        if !bulk {
            apply([book], removing: [])
            return
        }
        attach(book, append: true)
        titleOrder.append(Int32(book.id))
        newestOrder.append(Int32(book.id))
    }

    /// Removes a book (no longer active, or deleted); unknown ids are ignored.
    public mutating func remove(_ id: Int) { apply([], removing: [id]) }

    /// Replaces `books` (added or changed) and drops `removing` (no longer active), as one change.
    public mutating func apply(_ books: [CatalogBook], removing: [Int]) {
        let changed = Set(books.map(\.id) + removing).filter { active.contains($0) }
        if changed.count + books.count <= Self.batchThreshold {
            for id in changed {
                removeFromOrders(id)
                detach(id, deferred: false)
            }
            for book in books {
                attach(book, append: false)
                insertIntoOrders(book.id)
            }
            return
        }
        // Batch: detach all, filter lists once, attach all, sort and merge once.
        var removed = Bitset(capacity: active.capacity)
        for id in changed { removed.insert(id) }
        titleOrder.removeAll { removed.contains(Int($0)) }
        newestOrder.removeAll { removed.contains(Int($0)) }
        var touched = Set<Int>()
        for id in changed {
            for entry in bookLexemes[id] { touched.insert(Int(entry >> 3)) }
            detach(id, deferred: true)
        }
        for lexeme in touched { lexemes[lexeme].filter(removed: removed) }
        for book in books {
            for id in attach(book, append: true) { touched.insert(id) }
        }
        let capacity = active.capacity
        for lexeme in touched { lexemes[lexeme].finish(capacity: capacity) }
        let added = books.map { Int32($0.id) }
        titleOrder = merge(titleOrder, added.sorted { lessTitle(Int($0), Int($1)) }, by: lessTitle)
        newestOrder = merge(newestOrder, added.sorted { lessNewest(Int($0), Int($1)) }, by: lessNewest)
    }

    /// Stores a book and adds it to every set and lexeme (not to the orders); returns its lexeme ids.
    @discardableResult
    private mutating func attach(_ book: CatalogBook, append: Bool) -> [Int] {
        let id = book.id
        growPerBook(to: id)
        var entries: [UInt32] = []
        entries.reserveCapacity(book.lexemes.count)
        var ids: [Int] = []
        ids.reserveCapacity(book.lexemes.count)
        for (text, weights) in book.lexemes {
            let lexeme = intern(text)
            entries.append(lexeme << 3 | UInt32(weights & 7))
            ids.append(Int(lexeme))
            lexemes[Int(lexeme)].add(id, weights: weights, append: append)
            if weights & 3 != 0 {
                typoUses[Int(lexeme)] += 1
                if typoUses[Int(lexeme)] == 1 && !bulk { typos.insert(text) }
            }
        }
        if !append {
            let capacity = active.capacity
            for lexeme in ids { lexemes[lexeme].finish(capacity: capacity) }
        }
        bookLexemes.set(id, entries)
        json.set(id, book.json)
        titleKeys.set(id, book.titleKey)
        bookCategories.set(id, book.categoryIDs.map { Int32(truncatingIfNeeded: $0) })
        rights.set(id, book.rights.flatMap { [$0.start, $0.end ?? Int64.max, Int64(ruleNumber(for: $0.rule))] })
        for window in book.rights {
            let number = ruleNumber(for: window.rule)
            byRule[number].insert(id)
            ruleWindows[number] += 1
        }
        if !book.rights.isEmpty { windowed.insert(id) }
        if book.liveFrom != nil || book.liveUntil != nil {
            schedule[id] = (book.liveFrom ?? Int64.min, book.liveUntil ?? Int64.max)
            scheduleChanges += 1
        }
        rightsOffset[id] = UInt32(book.rightsOffset)
        ageMin[id] = UInt8(clamping: book.ageMin)
        ageMax[id] = UInt8(clamping: book.ageMax)
        createdAt[id] = book.createdAt
        publisher[id] = book.publisherID.map { Int32(truncatingIfNeeded: $0) } ?? -1
        active.insert(id)
        count += 1
        for age in 0...18 where book.ageMin <= age && age <= book.ageMax { byAge[age].insert(id) }
        for category in book.categoryIDs { byCategory[category, default: Bitset()].insert(id) }
        if let publisher = book.publisherID { byPublisher[publisher, default: Bitset()].insert(id) }
        return ids
    }

    /// Takes a book out of every set and lexeme and frees its stored values (not the orders).
    private mutating func detach(_ id: Int, deferred: Bool) {
        for entry in bookLexemes[id] {
            let lexeme = Int(entry >> 3)
            lexemes[lexeme].remove(id, deferred: deferred)
            if entry & 3 != 0 {
                typoUses[lexeme] -= 1
                if typoUses[lexeme] == 0 { typos.remove(lexemeText(entry >> 3)) }
            }
        }
        for age in Int(ageMin[id])...max(Int(ageMin[id]), Int(ageMax[id])) where age <= 18 { byAge[age].remove(id) }
        for category in bookCategories[id] { byCategory[Int(category)]?.remove(id) }
        if publisher[id] >= 0 { byPublisher[Int(publisher[id])]?.remove(id) }
        let windows = rights[id]
        for i in stride(from: windows.startIndex + 2, to: windows.endIndex, by: 3) {
            byRule[Int(windows[i])].remove(id)
            ruleWindows[Int(windows[i])] -= 1
        }
        windowed.remove(id)
        if schedule.removeValue(forKey: id) != nil { scheduleChanges += 1 }
        active.remove(id)
        count -= 1
        bookLexemes.clear(id); json.clear(id); titleKeys.clear(id); bookCategories.clear(id); rights.clear(id)
    }

    private mutating func growPerBook(to id: Int) {
        guard id >= ageMin.count else { return }
        let extra = id + 1 - ageMin.count
        ageMin.append(contentsOf: repeatElement(0, count: extra))
        ageMax.append(contentsOf: repeatElement(0, count: extra))
        createdAt.append(contentsOf: repeatElement(0, count: extra))
        publisher.append(contentsOf: repeatElement(-1, count: extra))
        rightsOffset.append(contentsOf: repeatElement(0, count: extra))
    }

    private mutating func ruleNumber(for rule: TerritoryRule) -> Int {
        if let number = ruleNumbers[rule] { return number }
        territoryRules.append(rule)
        byRule.append(Bitset())
        ruleWindows.append(0)
        ruleNumbers[rule] = territoryRules.count - 1
        return territoryRules.count - 1
    }

    private mutating func intern(_ text: String) -> UInt32 {
        if let id = lexemeIDs[text] { return id }
        let id = UInt32(lexemeBytes.count)
        lexemeIDs[text] = id
        lexemeBytes.append(Array(text.utf8))
        lexemes.append(LexemeBooks())
        typoUses.append(0)
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

    private mutating func sortLexemes() {
        let bytes = lexemeBytes
        sortedLexemes = Array(0..<UInt32(bytes.count)).sorted { bytes[Int($0)].lexicographicallyPrecedes(bytes[Int($1)]) }
    }

    func lexemeID(_ text: String) -> UInt32? { lexemeIDs[text] }

    /// The lexemes of an indexed book (empty for an unknown id).
    public func lexemes(of id: Int) -> [String] { bookLexemes[id].map { lexemeText($0 >> 3) } }
    func lexemeText(_ id: UInt32) -> String { String(decoding: lexemeBytes[Int(id)], as: UTF8.self) }

}
