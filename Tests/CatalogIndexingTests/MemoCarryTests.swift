import Core
import CatalogIndexing
import Testing

/// The carry's "could match" (`MemoCarry.mayMatch`) against its rule worked out the slow way:
/// a word matches a lexeme it is a prefix of, and a word of typo length one edit (the typo walk's:
/// a letter substituted, inserted or deleted, or two neighbours swapped) from some prefix of it.
@Suite("Memo carry")
struct MemoCarryTests {
    /// Optimal string alignment distance (the typo walk's edits), by the full table.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in stride(from: 1, through: a.count, by: 1) {
            for j in stride(from: 1, through: b.count, by: 1) {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }

    static func rule(_ word: String, _ lexeme: String) -> Bool {
        if lexeme.hasPrefix(word) { return true }
        guard word.unicodeScalars.count >= SearchText.typoMinLength else { return false }
        let w = Array(word), l = Array(lexeme)
        return (0...l.count).contains { distance(w, Array(l[..<$0])) <= 1 }
    }

    @Test("a word may match a lexeme exactly when the rule says so: 200,000 random pairs over two and three letters, and near misses of real words")
    func oneEditOfAPrefix() {
        var rng = CatalogIndexTests.RNG(state: 5)
        func text(_ n: ClosedRange<Int>, _ letters: String) -> String { String((0..<Int.random(in: n, using: &rng)).map { _ in letters.randomElement(using: &rng)! }) }
        var matched = 0
        for i in 0..<200_000 {
            // Half over three letters (mostly no match), half over two (near misses of every kind).
            let word = i % 2 == 0 ? text(3...8, "abc") : text(4...7, "ab"), lexeme = i % 2 == 0 ? text(1...10, "abc") : text(3...9, "ab")
            let expected = Self.rule(word, lexeme)
            #expect(MemoCarry(lexemes: [lexeme]).mayMatch(word) == expected, "\(word) in \(lexeme)")
            matched += expected ? 1 : 0
        }
        #expect(matched > 8_000 && matched < 100_000, "\(matched) matched")   // ~15,000: both answers common
        // Each kind of edit, and letters shared in another order (the old letter count's false match).
        for (word, lexeme, expected) in [("dargon", "dragonfly", true), ("drgon", "dragons", true), ("draggon", "dragon", true),
                                         ("drxgon", "dragon", true), ("dragonx", "dragon", true), ("dragon", "grandmother", false),
                                         ("gnarod", "dragon", false), ("drgaon", "dragon", true), ("rdagon", "dragon", true), ("dragno", "dragon", true)] {
            #expect(MemoCarry(lexemes: [lexeme]).mayMatch(word) == expected, "\(word) in \(lexeme)")
            #expect(Self.rule(word, lexeme) == expected, "the rule: \(word) in \(lexeme)")
        }
    }

    @Test("a browse filtered by a publisher whose id passes 2³¹ (or reads back as the index's 'none') is reached when that publisher's book goes")
    func publishersPastThirtyTwoBits() {
        var rng = CatalogIndexTests.RNG(state: 9)
        var books: [Int: CatalogBook] = [:]
        for id in 1...3 { books[id] = CatalogIndexTests.randomBook(id, &rng) }
        books[1]!.publisherID = 2_147_483_648
        books[2]!.publisherID = 4_294_967_295   // stored in 32 bits as the index's "none" (-1)
        books[3]!.publisherID = nil
        let index = CatalogIndexTests.bulk(books)
        for (id, publisher) in [(1, 2_147_483_648), (2, 4_294_967_295)] {
            let carry = index.carry(changing: [], removing: [id])
            #expect(carry.affects(words: [], filters: MemoCarry.BrowseFilters(publisher: publisher, age: nil, category: nil)), "book \(id)")
        }
        // An indexed book of no publisher reads back as that id would: any publisher's browse counts it (it drops, to be safe).
        let none = index.carry(changing: [], removing: [3])
        #expect(none.affects(words: [], filters: MemoCarry.BrowseFilters(publisher: 7, age: nil, category: nil)))
        // A book arriving with no publisher is known to be none's: publishers' browses stay.
        var fresh = CatalogIndexTests.randomBook(4, &rng)
        fresh.publisherID = nil
        let arriving = index.carry(changing: [fresh], removing: [])
        #expect(!arriving.affects(words: [], filters: MemoCarry.BrowseFilters(publisher: 7, age: nil, category: nil)))
        #expect(arriving.affects(words: [], filters: MemoCarry.BrowseFilters(publisher: nil, age: nil, category: nil)))
    }

    @Test("a scope's blocked category rules a book out only when the index keeps its categories exactly (an id past 2³¹ reads back as another)")
    func blockedCategoriesPastThirtyTwoBits() {
        var rng = CatalogIndexTests.RNG(state: 10)
        var books: [Int: CatalogBook] = [:]
        for id in 1...3 { books[id] = CatalogIndexTests.randomBook(id, &rng); books[id]!.ageMin = 2; books[id]!.ageMax = 6 }
        books[1]!.categoryIDs = [1]
        books[2]!.categoryIDs = [4_294_967_297]   // 1 in the index's 32 bits: not category 1, so visible in a scope blocking 1
        let blocking = MemoCarry.BrowseFilters(publisher: nil, age: nil, category: nil, maxAge: 8, blockedCategories: [1])
        let exact = CatalogIndexTests.bulk(books.filter { $0.key != 2 })
        #expect(!exact.carry(changing: [], removing: [1]).affects(words: [], filters: blocking), "a book of the blocked category is outside the scope")
        #expect(exact.carry(changing: [], removing: [3]).affects(words: [], filters: blocking) == !books[3]!.categoryIDs.contains(1))
        let wide = CatalogIndexTests.bulk(books)
        #expect(wide.carry(changing: [], removing: [2]).affects(words: [], filters: blocking), "a category id past 2³¹: not ruled out")
        #expect(wide.carry(changing: [], removing: [1]).affects(words: [], filters: blocking), "an index holding such an id: no category ruled out")
        // Past the scope's oldest age on both sides: outside it.
        var older = books[3]!
        older.ageMin = 10; older.ageMax = 12
        let index = CatalogIndexTests.bulk([3: older])
        var changed = older
        changed.categoryIDs = [2]
        #expect(!index.carry(changing: [changed], removing: []).affects(words: [], filters: blocking))
        #expect(index.carry(changing: [changed], removing: []).affects(words: [], filters: MemoCarry.BrowseFilters(publisher: nil, age: nil, category: nil)))
    }

    @Test("a browse patched through a take-down of a book in two categories whose ids are 2³² apart (and a publisher past 2³¹) equals a fresh one, in the whole catalog and in scopes blocking either")
    func patchedPastThirtyTwoBits() {
        var rng = CatalogIndexTests.RNG(state: 12)
        var books: [Int: CatalogBook] = [:]
        for id in 1...40 { books[id] = CatalogIndexTests.randomBook(id, &rng) }
        books[7]!.categoryIDs = [5, 4_294_967_301]   // both 5 in the index's 32 bits
        books[7]!.publisherID = 2_147_483_653
        books[7]!.titleKey = Array("zzzz".utf8)   // after the first page in title order
        books[9]!.categoryIDs = [4_294_967_301]
        var index = CatalogIndexTests.bulk(books)
        index.setCategories(CatalogIndexTests.categories + [.init(id: 5, slug: "c5"), .init(id: 4_294_967_301, slug: "wide")])
        let scopes: [CatalogScope?] = [nil, CatalogScope(blockedCategories: [4_294_967_301]), CatalogScope(blockedCategories: [5]),
                                       CatalogScope(blockedPublishers: [2_147_483_653])]
        let queries = [CatalogParameters(text: "", page: PageRequest(page: 1, perPage: 2)),
                       CatalogParameters(text: "", category: "wide", page: PageRequest(page: 1, perPage: 2)),
                       CatalogParameters(text: "", publisher: 2_147_483_653, page: PageRequest(page: 1, perPage: 1))]
        var kept: [(CatalogParameters, CatalogScope?, CatalogIndex.Answer, MemoCarry.BrowseCounting?)] = []
        for query in queries { for scope in scopes { let answer = index.answer(query, scope: scope); kept.append((query, scope, answer, index.browseCounting(query, scope: scope, answer))) } }
        let carry = index.carry(changing: [], removing: [7])
        index.apply([], removing: [7])
        let counted = index.counting(carry)
        var patched = 0
        for (query, scope, answer, counting) in kept {
            guard let counting, let patch = counted.patched(answer, filters: index.browseFilters(query, scope: scope), counting: counting) else { continue }
            #expect(patch == index.answer(query, scope: scope), "\(query) in \(String(describing: scope))")
            patched += 1
        }
        #expect(patched >= 4, "patched \(patched)")
    }

    @Test("browses patched through 300 changes of two to six books at once (added, removed, moved between categories, ages, publishers, titles, creation times) equal fresh ones, small pages in both orders, in four scopes")
    func patchedThroughBatches() {
        var rng = CatalogIndexTests.RNG(state: 13)
        var books: [Int: CatalogBook] = [:]
        for id in 1...400 { books[id] = CatalogIndexTests.randomBook(id, &rng) }
        var index = CatalogIndexTests.bulk(books)
        let scopes: [CatalogScope?] = [nil, CatalogScope(maxAge: 5, blockedCategories: [2]), CatalogScope(blockedPublishers: [1]), CatalogScope(country: "US")]
        let queries: [(CatalogParameters, CatalogScope?)] = (0..<60).map { _ in
            let query = CatalogParameters(text: "", age: Bool.random(using: &rng) ? Int.random(in: 0...10, using: &rng) : nil,
                                          publisher: Int.random(in: 0...3, using: &rng) == 0 ? Int.random(in: 1...3, using: &rng) : nil,
                                          category: Bool.random(using: &rng) ? "c\(Int.random(in: 1...4, using: &rng))" : nil,
                                          page: PageRequest(page: Int.random(in: 1...3, using: &rng), perPage: Int.random(in: 1...8, using: &rng)),
                                          sort: Bool.random(using: &rng) ? .newest : .title)
            return (query, scopes.randomElement(using: &rng)!)
        }
        var answers = queries.map { index.answer($0.0, scope: $0.1) }
        var countings = queries.indices.map { index.browseCounting(queries[$0].0, scope: queries[$0].1, answers[$0]) }
        var patched = 0, moved = 0
        for _ in 0..<300 {
            var upserts: [CatalogBook] = [], removals: [Int] = []
            for id in Set((0..<Int.random(in: 2...6, using: &rng)).map { _ in Int.random(in: 1...420, using: &rng) }) {
                if Int.random(in: 0..<4, using: &rng) == 0 { removals.append(id); books[id] = nil; continue }
                var book = books[id] ?? CatalogIndexTests.randomBook(id, &rng)
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: book.categoryIDs = Array(Set((0..<Int.random(in: 0...2, using: &rng)).map { _ in Int.random(in: 1...4, using: &rng) })).sorted()
                case 1: book.ageMin = Int.random(in: 0...10, using: &rng); book.ageMax = book.ageMin + Int.random(in: 0...6, using: &rng)
                case 2: book.publisherID = Bool.random(using: &rng) ? nil : Int.random(in: 1...3, using: &rng)
                case 3: book.titleKey = Array(["a", "b", "ab", "ba", "zz"].randomElement(using: &rng)!.utf8)
                default: book.createdAt = Int64.random(in: 0...50, using: &rng)
                }
                books[id] = book
                upserts.append(book)
            }
            let carry = index.carry(changing: upserts, removing: removals)
            index.apply(upserts, removing: removals)
            let counted = index.counting(carry)
            for (i, (query, scope)) in queries.enumerated() {
                let fresh = index.answer(query, scope: scope)
                if let counting = countings[i], let patch = counted.patched(answers[i], filters: index.browseFilters(query, scope: scope), counting: counting) {
                    #expect(patch == fresh, "\(query) in \(String(describing: scope)) after \(upserts.map(\.id)) and \(removals)")
                    patched += 1
                    if patch != answers[i] { moved += 1 }
                    answers[i] = patch
                } else {
                    answers[i] = fresh
                    countings[i] = index.browseCounting(query, scope: scope, fresh)
                }
            }
        }
        #expect(patched > 5_000 && moved > 1_000, "patched \(patched), moved \(moved)")
    }

    @Test("a book moved off a publisher or category whose id passes 2³¹ leaves its set (the index keeps a book's in 32 bits), and a move to an id 2³² apart is a change of its filters")
    func movedOffWideIDs() {
        var rng = CatalogIndexTests.RNG(state: 11)
        var book = CatalogIndexTests.randomBook(1, &rng)
        book.publisherID = 2_147_483_648
        book.categoryIDs = [4_294_967_297]
        var index = CatalogIndexTests.bulk([1: book])
        var moved = book
        moved.publisherID = 7
        moved.categoryIDs = [1]
        #expect(index.carry(changing: [moved], removing: []).browsing)
        index.apply([moved], removing: [])
        #expect(index.answer(CatalogParameters(publisher: 2_147_483_648)).total == 0)
        #expect(index.answer(CatalogParameters(publisher: 7)).total == 1)
        #expect(index.answer(CatalogParameters(), scope: CatalogScope(blockedCategories: [4_294_967_297])).total == 1)
        #expect(index.answer(CatalogParameters(), scope: CatalogScope(blockedCategories: [1])).total == 0)
        var aliased = moved
        aliased.publisherID = 7 + 4_294_967_296
        #expect(index.carry(changing: [aliased], removing: []).browsing)
        aliased = moved
        aliased.categoryIDs = [1 + 4_294_967_296]
        #expect(index.carry(changing: [aliased], removing: []).browsing)
    }
}
