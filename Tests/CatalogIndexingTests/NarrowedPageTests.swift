@testable import CatalogIndexing
import Core
import Testing

/// A near relevance page made from the words' catalog-wide sets (`CatalogIndex.narrowedPage`)
/// equals the page made over every block, and the brute force through `answer` with filters —
/// with words whose levels cover only part of their matches ("beard" beside "bears": the literal
/// sets hold one, the typo set both) and whole words held by only some of a word's books ("bear"
/// in half of the "bears" books).
@Suite("Narrowed relevance pages")
struct NarrowedPageTests {
    typealias Base = CatalogIndexTests

    static func catalog(_ rng: inout Base.RNG) -> [Int: CatalogBook] {
        var books: [Int: CatalogBook] = [:]
        for id in 1...30_000 {
            var book = RelevanceRunsTests.book(id, late: Double.random(in: 0..<1, using: &rng), &rng)
            // "bears" in one book of 15 — titled one time in 40, by its author one in 20, else in
            // the description — "bear" beside it in half of those, "beard" in one book of 40.
            if Int.random(in: 0..<15, using: &rng) == 0 {
                let field = Int.random(in: 0..<40, using: &rng)
                book.lexemes.append(("bears", field == 0 ? 1 : field < 3 ? 2 : 4))
                if Bool.random(using: &rng) { book.lexemes.append(("bear", UInt8.random(in: 1...7, using: &rng))) }
            }
            if Int.random(in: 0..<40, using: &rng) == 0 { book.lexemes.append(("beard", [1, 2, 4, 4, 4].randomElement(using: &rng)!)) }
            books[id] = book
        }
        return books
    }

    @Test("narrowed pages equal the page over every block (pages 1–12 × 20, 6 searches) and, through the answer with an age or a category filter, the brute force")
    func narrowedAgrees() {
        var rng = Base.RNG(state: 3_301)
        let books = Self.catalog(&rng)
        let index = Base.bulk(books)
        let cache = WordSetCache()
        var narrowed = 0, compared = 0
        for text in ["bears", "beard", "beard dragon", "bear", "bear dragon", "bears owl"] {
            let words = CatalogParameters(text: text).words
            let expansions = index.expansions(words, synonyms: Synonyms())
            let sets = index.wordSets(expansions, within: index.books(in: nil, offline: nil), cache: WordSetCache.Reader(cache, version: 1))
            for page in 1...12 {
                let request = PageRequest(page: page, perPage: 20)
                if let made = index.narrowedPage(sets.matched, sets, page: request) {
                    narrowed += 1
                    #expect(made == index.relevancePage(sets.matched, sets: sets, page: request, narrowing: false), "\"\(text)\" page \(page)")
                }
            }
            for (age, category) in [(nil, nil), (5, nil), (nil, "c2"), (9, "c1")] as [(Int?, String?)] {
                compared += Self.expectAsBruteForce(CatalogParameters(text: text, age: age, category: category, sort: .relevance), expansions, index, books, cache)
            }
        }
        // Most of those pages were made narrowed (the rest: only all the matches fill them).
        #expect(narrowed >= 40, "\(narrowed) of 72 pages narrowed")
        #expect(compared >= 6 * 4 * 3, "\(compared) of 288 filtered pages held books")
    }
}

extension NarrowedPageTests {
    /// Pages 1–12 × 20 of `filtered` through the answer (the words' sets kept in `cache`), each
    /// expected to equal the brute force's over `books`; how many of them held books (a page past
    /// the matches is empty whatever the ranking).
    static func expectAsBruteForce(_ filtered: CatalogParameters, _ expansions: [SearchExpansion], _ index: CatalogIndex, _ books: [Int: CatalogBook],
                                   _ cache: WordSetCache) -> Int {
        var all = filtered
        all.page = PageRequest(page: 1, perPage: 1_000_000)
        let everything = Base.model(books, all)
        var held = 0
        for page in 1...12 {
            var p = filtered
            p.page = PageRequest(page: page, perPage: 20)
            let answer = index.answer(p, expansions: expansions, cache: WordSetCache.Reader(cache, version: 1))
            #expect(answer.total == everything.total && answer.ids == Array(everything.ids.dropFirst(p.page.offset).prefix(20)),
                    "\"\(filtered.text ?? "")\" age \(filtered.age ?? -1) publisher \(filtered.publisher ?? -1) category \(filtered.category ?? "-") page \(page)")
            if !answer.ids.isEmpty { held += 1 }
        }
        return held
    }

    @Test("under a child's scope (max age 6, one blocked category) narrowed pages equal the same search over a catalog of only the books the scope leaves (pages 1–12 × 20, 4 searches)")
    func narrowedUnderScope() {
        var rng = Base.RNG(state: 3_303)
        let books = Self.catalog(&rng)
        let index = Base.bulk(books)
        let scope = CatalogScope(maxAge: 6, blockedCategories: [index.categories.first!.id])
        let visible = index.books(in: scope, offline: nil)
        let left = Base.bulk(books.filter { visible.contains($0.key) })
        #expect(left.count < index.count * 3 / 4 && left.count > index.count / 4, "the scope leaves part of the catalog")
        let cache = WordSetCache()
        var narrowed = 0
        for text in ["bears", "beard", "bear", "bears owl"] {
            // The same expansions for both (a typo found only in a book the scope hides is still an alternative).
            let expansions = index.expansions(CatalogParameters(text: text).words, synonyms: Synonyms())
            let sets = index.wordSets(expansions, within: visible, cache: WordSetCache.Reader(cache, version: 1))
            for page in 1...12 {
                let p = CatalogParameters(text: text, page: PageRequest(page: page, perPage: 20), sort: .relevance)
                if index.narrowedPage(sets.matched, sets, page: p.page) != nil { narrowed += 1 }
                #expect(index.answer(p, expansions: expansions, scope: scope, cache: WordSetCache.Reader(cache, version: 1)) == left.answer(p, expansions: expansions),
                        "\"\(text)\" page \(page)")
            }
        }
        #expect(narrowed >= 20, "\(narrowed) of 48 pages narrowed")
    }

    @Test("the tiers' kept sets follow a change like the words' sets: a book's \"bears\" moved from its description to its title drops them, and the narrowed pages at the next version equal a fresh index's")
    func tierSetsCarried() {
        var rng = Base.RNG(state: 3_302)
        var books = Self.catalog(&rng)
        var index = Base.bulk(books)
        let cache = WordSetCache()
        let query = { (page: Int) in CatalogParameters(text: "bears", page: PageRequest(page: page, perPage: 20), sort: .relevance) }
        let expansions = index.expansions(query(1).words, synonyms: Synonyms())
        for page in 1...12 { _ = index.answer(query(page), expansions: expansions, cache: WordSetCache.Reader(cache, version: 1)) }
        let kept = cache.tiers?.count ?? 0
        #expect(kept > 0, "the narrowed pages kept their tier sets")
        // The first "bears" book found in its description alone now has the word in its title.
        let id = books.keys.sorted().first { books[$0]!.lexemes.contains { $0.0 == "bears" && $0.1 == CatalogBook.description } }!
        var book = books[id]!
        book.lexemes = book.lexemes.map { $0.0 == "bears" ? ($0.0, CatalogBook.title) : $0 }
        books[id] = book
        let carry = index.carry(changing: [book], removing: [])
        index.apply([book], removing: [])
        cache.carry(from: 1, to: 2, touched: carry.lexemes, in: index)
        #expect((cache.tiers?.count ?? 0) < kept, "the sets built from \"bears\" were dropped")
        let fresh = Base.bulk(books)
        for page in 1...12 {
            #expect(index.answer(query(page), expansions: expansions, cache: WordSetCache.Reader(cache, version: 2)) == fresh.answer(query(page), expansions: expansions),
                    "page \(page) after the change")
        }
    }
}

extension NarrowedPageTests {
    @Test("a word whose books lie in a few blocks (a tenth of the first 6,000 ids): its tiers matched over its matches' blocks make the pages over every block (pages 1–8 × 20, 5 searches)")
    func narrowedOverFewBlocks() {
        var rng = Base.RNG(state: 3_305)
        var books = Self.catalog(&rng)
        var extra = Base.RNG(state: 77)
        for id in 1...6_000 where Int.random(in: 0..<10, using: &extra) == 0 {
            books[id]!.lexemes.append(("zebra", [1, 2, 4, 4].randomElement(using: &extra)!))
            if Bool.random(using: &extra) { books[id]!.lexemes.append(("zebras", UInt8.random(in: 1...7, using: &extra))) }
        }
        let index = Base.bulk(books)
        let cache = WordSetCache()
        var narrowed = 0
        for text in ["zebra", "zebras", "zebra bears", "zebr", "zebra owl"] {
            let expansions = index.expansions(CatalogParameters(text: text).words, synonyms: Synonyms())
            let sets = index.wordSets(expansions, within: index.books(in: nil, offline: nil), cache: WordSetCache.Reader(cache, version: 1))
            #expect(sets.blocks.count * CatalogIndex.fewBlocks <= sets.matched.words.count, "\"\(text)\": its matches lie in few blocks")
            for page in 1...8 {
                let request = PageRequest(page: page, perPage: 20)
                if let made = index.narrowedPage(sets.matched, sets, page: request) {
                    narrowed += 1
                    #expect(made == index.relevancePage(sets.matched, sets: sets, page: request, narrowing: false), "\"\(text)\" page \(page)")
                }
            }
        }
        #expect(narrowed >= 10, "\(narrowed) of 40 pages narrowed")
    }
}

extension NarrowedPageTests {
    @Test("fewer matches than a page's end over many blocks: the narrowed page declines and the runs go on from where they were, the pages equal those made without narrowing (pages 1–12 × 20, 3 searches) and, through the answer with three filters, the brute force")
    func fewMatchesOverManyBlocks() {
        var rng = Base.RNG(state: 3_307)
        let books = Self.catalog(&rng)
        let index = Base.bulk(books)
        let cache = WordSetCache()
        var declined = 0, narrowed = 0
        for text in ["bears", "beard", "bear"] {
            let expansions = index.expansions(CatalogParameters(text: text).words, synonyms: Synonyms())
            let sets = index.wordSets(expansions, within: index.books(in: nil, offline: nil), cache: WordSetCache.Reader(cache, version: 1))
            #expect(sets.blocks.count > CatalogIndex.firstBlocks + CatalogIndex.narrowedPast, "\"\(text)\": its matches span more blocks than the first run and the narrowing's threshold")
            // One match in 40, in every part of the id range.
            var sparse = Bitset(capacity: sets.matched.capacity), seen = 0
            sets.matched.forEach { id in
                if seen % 40 == 0 { sparse.insert(id) }
                seen += 1
                return true
            }
            let held = sparse.intersectionCount(sparse)
            // One page of them all (its end one past them): declined, and every one ranked.
            let whole = PageRequest(page: 1, perPage: held + 1)
            #expect(held >= 10 && held < 100 && index.narrowedPage(sparse, sets, page: whole) == nil, "\"\(text)\": \(held) matches")
            let all = index.relevancePage(sparse, sets: sets, page: whole)
            #expect(all.count == held && Set(all).count == held && all == index.relevancePage(sparse, sets: sets, page: whole, narrowing: false), "\"\(text)\"")
            for page in 1...12 {
                let request = PageRequest(page: page, perPage: 20)
                let made = index.narrowedPage(sparse, sets, page: request)
                #expect((made == nil) == (page * 20 > held), "\"\(text)\" page \(page): declined exactly when the \(held) matches are fewer than its end")
                if made == nil { declined += 1 } else { narrowed += 1 }
                #expect(index.relevancePage(sparse, sets: sets, page: request) == index.relevancePage(sparse, sets: sets, page: request, narrowing: false),
                        "\"\(text)\" page \(page)")
            }
            #expect(Self.expectAsBruteForce(CatalogParameters(text: text, age: 9, publisher: 2, category: "c1", sort: .relevance), expansions, index, books, cache) >= 1,
                    "\"\(text)\": a filtered page holds books")
        }
        #expect(declined >= 12 && narrowed >= 3, "\(declined) pages declined, \(narrowed) narrowed")
    }
}

extension NarrowedPageTests {
    @Test("random searches, bases and pages: every narrowed page equals the page made over every block, and it declines exactly when the matches are fewer than its end (400 rounds; whole catalog, about a quarter, a run of ids, matches thinned; 1 to 60 a page, ends up to 240; up to three whole words; a word reaching three levels)")
    func narrowedAgreesAtRandom() {
        var rng = Base.RNG(state: 3_309)
        var books = Self.catalog(&rng)
        // "zebra" in the first 6,000 ids only (its matches in few blocks), "bear" beside it in some.
        for id in 1...6_000 where Int.random(in: 0..<8, using: &rng) == 0 {
            books[id]!.lexemes.append(("zebra", [1, 2, 4, 4].randomElement(using: &rng)!))
            if Bool.random(using: &rng) { books[id]!.lexemes.append(("bear", UInt8.random(in: 1...7, using: &rng))) }
        }
        // "cubs", a synonym of "bears" (a word form: level 2), in one book of 30: "bears" then
        // reaches three levels (3 itself, 2 "cubs", 1 "bear" and "beard" by typos), each set its own.
        for id in books.keys where Int.random(in: 0..<30, using: &rng) == 0 { books[id]!.lexemes.append(("cubs", [1, 2, 4].randomElement(using: &rng)!)) }
        let synonyms = Synonyms([Synonyms.Rule(words: "bears, cubs", oneWay: false)])
        let index = Base.bulk(books)
        let cache = WordSetCache(), everything = index.books(in: nil, offline: nil)
        let texts = ["bears", "bear", "beard", "bea", "beqrs", "zebra", "zebr", "zebra bear", "bears zebra", "bear beard", "bears owl", "beard dragon", "bears owl dragon", "bear bear owl", "bears beard owl"]
        var narrowed = 0, sparse = 0, inLine = 0, threeWholes = 0, withBefore = 0
        for round in 0..<400 {
            let text = texts.randomElement(using: &rng)!
            let expansions = index.expansions(CatalogParameters(text: text).words, synonyms: synonyms)
            var base = everything
            switch round % 4 {   // (1: about a quarter of the books, two random words ANDed)
            case 1: base = Bitset(words: base.words.map { $0 & UInt64.random(in: 0...UInt64.max, using: &rng) & UInt64.random(in: 0...UInt64.max, using: &rng) })
            case 2:
                let from = Int.random(in: 0..<25_000, using: &rng)
                var run = Bitset(capacity: base.capacity)
                for id in from..<from + Int.random(in: 500...8_000, using: &rng) { run.insert(id) }
                base.formIntersection(run)
            default: break
            }
            let sets = index.wordSets(expansions, within: base, cache: WordSetCache.Reader(cache, version: 1))
            // A filter after the words (an age, a category): the matches thinned, at random.
            let matches = round % 3 == 0 ? Bitset(words: sets.matched.words.map { $0 & UInt64.random(in: 0...UInt64.max, using: &rng) }) : sets.matched
            let perPage = Int.random(in: 1...60, using: &rng)
            let request = PageRequest(page: Int.random(in: 1...max(1, 240 / perPage), using: &rng), perPage: perPage)
            let made = index.narrowedPage(matches, sets, page: request)
            let held = matches.intersectionCount(matches, at: sets.blocks)
            #expect((made == nil) == (held < request.offset + request.perPage), "round \(round): \"\(text)\", \(held) matches, page end \(request.offset + request.perPage)")
            guard let made else { continue }
            narrowed += 1
            let wholes = sets.words.count(where: { $0.whole != nil })
            if sets.blocks.count * CatalogIndex.fewBlocks <= matches.words.count { sparse += 1 } else if wholes <= 2 { inLine += 1 }
            if wholes > 2 { threeWholes += 1 }
            if made != made.sorted() { withBefore += 1 }   // (books ranked before the key: the page is not in id order)
            #expect(made == index.relevancePage(matches, sets: sets, page: request, narrowing: false), "round \(round): \"\(text)\" page \(request.page) × \(perPage)")
        }
        #expect(narrowed >= 250 && sparse >= 60 && inLine >= 90 && threeWholes >= 20,   // (353, 134, 183 and 46 when written)
                "\(narrowed) of 400 pages narrowed: \(sparse) over few blocks, \(inLine) over many read in line, \(threeWholes) with three whole words")
        #expect(withBefore >= 50, "\(withBefore) narrowed pages ranked books before their key")   // (115)
    }
}
