import Core
import CatalogIndexing
import Testing

/// Relevance pages collected run by run over the matched blocks (64, then four times as many),
/// with the early stop once the best key holds the page, equal the contract's brute force over
/// catalogs matching many more blocks than the first run — the strong matches placed late, so
/// the page is not settled in the first run and weaker keys collected early must give way.
@Suite("Relevance runs")
struct RelevanceRunsTests {
    typealias Base = CatalogIndexTests

    /// A book whose common words are more often in its title the later it comes (`late` 0…1).
    static func book(_ id: Int, late: Double, _ rng: inout Base.RNG) -> CatalogBook {
        var book = Base.randomBook(id, &rng)
        var lexemes: [String: UInt8] = [:]
        for word in Base.common where Int.random(in: 0..<100, using: &rng) < 70 {
            let title = Double.random(in: 0..<1, using: &rng) < 0.02 + 0.9 * late * late
            lexemes[word] = title ? 1 : [2, 4, 6].randomElement(using: &rng)!
        }
        for word in Base.rare where Int.random(in: 0..<100, using: &rng) < 5 { lexemes[word, default: 0] |= UInt8.random(in: 1...7, using: &rng) }
        book.lexemes = lexemes.map { ($0.key, $0.value) }
        return book
    }

    /// Relevance queries of one to three words (prefixes, edits), no filters: many matches.
    static func query(_ rng: inout Base.RNG) -> String {
        (0..<Int.random(in: 1...3, using: &rng)).map { _ in
            Base.randomQuery(&rng).words.first ?? Base.common.randomElement(using: &rng)!
        }.joined(separator: " ")
    }

    /// A batch of ~2,000 books added, changed (`book` made anew) and removed at once: lists
    /// filtered and merged.
    static func changeBatch(_ books: inout [Int: CatalogBook], _ index: inout CatalogIndex, _ rng: inout Base.RNG, _ book: (Int, inout Base.RNG) -> CatalogBook) {
        var upserts: [CatalogBook] = [], removals: [Int] = []
        for id in Set((0..<2_000).map { _ in Int.random(in: 1...30_500, using: &rng) }) {
            if Bool.random(using: &rng), books[id] != nil { removals.append(id); books[id] = nil } else { books[id] = book(id, &rng); upserts.append(books[id]!) }
        }
        index.apply(upserts, removing: removals)
    }

    /// Pages 1…12 × 20 and 100 per page (near pages run by run, deep ones over every block), with
    /// and without the word-set cache, against one brute-force ranking per query.
    static func compare(_ books: [Int: CatalogBook], _ index: CatalogIndex, queries: Int, _ rng: inout Base.RNG, label: String, texts: [String] = []) -> Int {
        let cache = WordSetCache()
        var compared = 0
        for q in 0..<queries {
            let text = q < texts.count ? texts[q] : query(&rng)
            let all = Base.model(books, CatalogParameters(text: text, age: nil, publisher: nil, category: nil,
                                                          page: PageRequest(page: 1, perPage: 1_000_000), sort: .relevance))
            for perPage in [20, 100] {
                for page in 1...12 {
                    let p = CatalogParameters(text: text, age: nil, publisher: nil, category: nil, page: PageRequest(page: page, perPage: perPage), sort: .relevance)
                    let expansions = index.expansions(p.words, synonyms: Synonyms())
                    let expected = Array(all.ids.dropFirst(p.page.offset).prefix(perPage))
                    let answer = index.answer(p, expansions: expansions, cache: WordSetCache.Reader(cache, version: 1))
                    #expect(answer.total == all.total && answer.ids == expected, "\(label): \"\(text)\" page \(page) × \(perPage)")
                    #expect(index.answer(p, expansions: expansions).ids == expected, "\(label), no cache: \"\(text)\" page \(page) × \(perPage)")
                    compared += 1
                }
            }
        }
        return compared
    }

    @Test("one book per block, 3,000 blocks and a few far ids (runs of 64, 256, 1,024, 4,096 blocks): 30 queries × pages 1–12 × 20/100 equal the brute force")
    func sparse() {
        var rng = Base.RNG(state: 501)
        var books: [Int: CatalogBook] = [:]
        for i in 0..<3_000 {
            let id = i * 64 + Int.random(in: 1..<64, using: &rng)
            books[id] = Self.book(id, late: Double(i) / 3_000, &rng)
        }
        for id in [1_000_003, 1_500_077, 2_097_151] { books[id] = Self.book(id, late: 1, &rng) }
        let index = Base.bulk(books)
        #expect(Self.compare(books, index, queries: 30, &rng, label: "sparse") == 30 * 24)
    }

    @Test("24,000 books in 375 full blocks, built in bulk and changed in a batch (lists merged, some ids gone): 30 queries × pages 1–12 × 20/100 equal the brute force")
    func dense() {
        var rng = Base.RNG(state: 502)
        var books: [Int: CatalogBook] = [:]
        for id in 1...24_000 { books[id] = Self.book(id, late: Double(id) / 24_000, &rng) }
        var index = Base.bulk(books)
        var upserts: [CatalogBook] = [], removals: [Int] = []
        for _ in 0..<3_000 {
            let id = Int.random(in: 1...24_500, using: &rng)
            if Int.random(in: 0..<3, using: &rng) == 0, books[id] != nil, !upserts.contains(where: { $0.id == id }) {
                removals.append(id); books[id] = nil
            } else if !removals.contains(id) {
                let book = Self.book(id, late: Double.random(in: 0..<1, using: &rng), &rng)
                books[id] = book; upserts.removeAll { $0.id == id }; upserts.append(book)
            }
        }
        index.apply(upserts, removing: removals)
        #expect(index.count == books.count)
        #expect(Self.compare(books, index, queries: 30, &rng, label: "dense") == 30 * 24)
    }

    @Test("mistyped words, reaching their books by typos alone (the page settled at the best key of that level), alone and beside a word typed right: 8 queries × pages 1–12 × 20/100 equal the brute force")
    func mistyped() {
        var rng = Base.RNG(state: 503)
        var books: [Int: CatalogBook] = [:]
        for id in 1...24_000 { books[id] = Self.book(id, late: Double(id) / 24_000, &rng) }
        let index = Base.bulk(books)
        let texts = ["dargon", "dreem", "gfit", "dargon gfit", "dargon moon", "moon dreem", "drgaon dreem owl", "gitf"]
        #expect(Self.compare(books, index, queries: texts.count, &rng, label: "mistyped", texts: texts) == texts.count * 24)
    }

    @Test("a rare word beside common ones (a handful of far apart blocks left after the rarest word; common words' sets dense, rare ones lists): 8 queries × pages 1–12 × 20/100 equal the brute force, built in bulk and after a batch of changes")
    func rareBesideCommon() {
        var rng = Base.RNG(state: 504)
        var books: [Int: CatalogBook] = [:]
        func book(_ id: Int, _ rng: inout Base.RNG) -> CatalogBook {
            var book = Self.book(id, late: Double.random(in: 0..<1, using: &rng), &rng)
            // "zebra" in one book of 1,500, "okapi" in one of 3,000.
            if Int.random(in: 0..<1_500, using: &rng) == 0 { book.lexemes.append(("zebra", UInt8.random(in: 1...7, using: &rng))) }
            if Int.random(in: 0..<3_000, using: &rng) == 0 { book.lexemes.append(("okapi", UInt8.random(in: 1...7, using: &rng))) }
            return book
        }
        for id in 1...30_000 { books[id] = book(id, &rng) }
        var index = Base.bulk(books)
        let texts = ["zebra dragon", "okapi dream owl", "zebra drawing", "dragon moon zebra", "okapi zebra", "zebra gift ocean", "okapi dra", "zebr dream"]
        #expect(Self.compare(books, index, queries: texts.count, &rng, label: "rare, built", texts: texts) == texts.count * 24)
        // A batch of 2,000 books added, changed and removed: lists filtered and merged.
        Self.changeBatch(&books, &index, &rng, book)
        #expect(Self.compare(books, index, queries: texts.count, &rng, label: "rare, changed", texts: texts) == texts.count * 24)
    }

    @Test("a common word seldom in a title (the page not settled in the first run, then made over the books with every word in the title, or in the title or author, when they fill it, else over every block): 8 queries × pages 1–12 × 20/100 equal the brute force, built in bulk and after a batch of changes")
    func sparseTitles() {
        var rng = Base.RNG(state: 1_207)
        var books: [Int: CatalogBook] = [:]
        func book(_ id: Int, _ rng: inout Base.RNG) -> CatalogBook {
            var book = Self.book(id, late: Double.random(in: 0..<1, using: &rng), &rng)
            // "bears" in one book of 15: in its title one time in 40 (~50 titles in 30,000 books:
            // pages 1–2 of 20 narrowed to the titles), by its author one in 20 (~100 more: to page
            // 7), else in the description only (deeper pages: every block).
            if Int.random(in: 0..<15, using: &rng) == 0 {
                let field = Int.random(in: 0..<40, using: &rng)
                book.lexemes.append(("bears", field == 0 ? 1 : field < 3 ? 2 : 4))
            }
            return book
        }
        for id in 1...30_000 { books[id] = book(id, &rng) }
        var index = Base.bulk(books)
        let texts = ["bears", "bear", "bears dragon", "dragon bears", "bears owl moon", "beers", "bears dra", "bears zzz"]
        #expect(Self.compare(books, index, queries: texts.count, &rng, label: "sparse titles, built", texts: texts) == texts.count * 24)
        Self.changeBatch(&books, &index, &rng, book)
        #expect(Self.compare(books, index, queries: texts.count, &rng, label: "sparse titles, changed", texts: texts) == texts.count * 24)
    }
}
