import Core
import CatalogIndexing
import Testing

/// The catalog index against a brute-force model of the contract's rules, on a catalog big enough
/// that common words are held as bitsets and rare ones as lists, through small and batched changes
/// (the App differential test compares the index with the SQL on a small catalog).
@Suite("Catalog index")
struct CatalogIndexTests {
    struct RNG: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Common words (in most books: bitsets) and rare ones (lists), sharing prefixes and one edit apart.
    static let common = ["dragon", "dream", "owl", "moon", "gift"]
    static let rare = ["drawing", "dragons", "owlet", "moonlight", "giraffe", "gifted", "deburi", "gifur", "night", "nigh",
                       "ocean", "otter", "draw", "dram", "mood", "moan", "rabbit", "robot", "rocket", "rover"]

    static func randomBook(_ id: Int, _ rng: inout RNG) -> CatalogBook {
        var lexemes: [String: UInt8] = [:]
        for word in common where Int.random(in: 0..<100, using: &rng) < 60 { lexemes[word, default: 0] |= UInt8.random(in: 1...7, using: &rng) }
        for word in rare where Int.random(in: 0..<100, using: &rng) < 4 { lexemes[word, default: 0] |= UInt8.random(in: 1...7, using: &rng) }
        let title = (0..<Int.random(in: 1...3, using: &rng)).map { _ in ["a", "b", "ab", "ba", "é"].randomElement(using: &rng)! }.joined()
        let ageMin = Int.random(in: 0...10, using: &rng)
        let categories = Array(Set((0..<Int.random(in: 0...3, using: &rng)).map { _ in Int.random(in: 1...4, using: &rng) })).sorted()
        let json = Array("{\"id\":\(id),\"rights_available\":".utf8)
        let rights = (0..<Int.random(in: 0...2, using: &rng)).map { _ -> CatalogBook.RightsWindow in
            let start = Int64.random(in: 0...100, using: &rng)
            return .init(start: start, end: Bool.random(using: &rng) ? nil : start + Int64.random(in: 1...50, using: &rng))
        }
        return CatalogBook(id: id, titleKey: Array(title.utf8), createdAt: Int64.random(in: 0...50, using: &rng), ageMin: ageMin,
                           ageMax: ageMin + Int.random(in: 0...6, using: &rng), publisherID: Bool.random(using: &rng) ? nil : Int.random(in: 1...3, using: &rng),
                           categoryIDs: categories, lexemes: lexemes.map { ($0.key, $0.value) }, json: json + Array("}".utf8),
                           rightsOffset: json.count, rights: rights)
    }

    static let categories = (1...4).map { CatalogIndex.Category(id: $0, slug: "c\($0)") }

    static func bulk(_ books: [Int: CatalogBook]) -> CatalogIndex {
        var index = CatalogIndex()
        index.setCategories(categories)
        index.beginBulk()
        for id in books.keys.sorted() { index.upsert(books[id]!) }
        index.endBulk()
        return index
    }

    /// The contract's rules, book by book.
    static func model(_ books: [Int: CatalogBook], _ p: CatalogParameters) -> CatalogIndex.Answer {
        var vocabulary: [String] = []
        for book in books.values { for (text, weights) in book.lexemes where weights & 3 != 0 { vocabulary.append(text) } }
        let typos = TypoVocabulary(vocabulary)
        let words = p.words.map { word in (word: word, alternatives: typos.alternatives(for: word)) }
        struct Hit { var any = false, title = false, titleOrAuthor = false, exact = false, whole = false }
        func hit(_ book: CatalogBook, _ w: (word: String, alternatives: [String])) -> Hit {
            var h = Hit()
            for (text, weights) in book.lexemes {
                let exact = text.hasPrefix(w.word)
                guard exact || w.alternatives.contains(where: { text.hasPrefix($0) }) else { continue }
                h.any = true
                if weights & 1 != 0 { h.title = true }
                if weights & 3 != 0 { h.titleOrAuthor = true }
                if exact { h.exact = true }
                if text == w.word { h.whole = true }
            }
            return h
        }
        let categoryID = p.category.flatMap { slug in categories.first { $0.slug == slug }?.id ?? Int(slug) }
        func passes(_ book: CatalogBook, category: Bool, age: Bool) -> Bool {
            if let publisher = p.publisher, book.publisherID != publisher { return false }
            if category, p.category != nil, !(categoryID.map { book.categoryIDs.contains($0) } ?? false) { return false }
            if age, let a = p.age, !(book.ageMin <= a && a <= book.ageMax) { return false }
            return true
        }
        var keyed: [(book: CatalogBook, key: Int)] = []
        var noCategory: [CatalogBook] = [], noAge: [CatalogBook] = []
        for book in books.values {
            let hits = words.map { hit(book, $0) }
            guard hits.allSatisfy(\.any) else { continue }
            if passes(book, category: false, age: true) { noCategory.append(book) }
            if passes(book, category: true, age: false) { noAge.append(book) }
            guard passes(book, category: true, age: true) else { continue }
            let tier = (hits.allSatisfy(\.title) ? 4 : 0) + (hits.allSatisfy(\.titleOrAuthor) ? 2 : 0) + (hits.allSatisfy(\.exact) ? 1 : 0)
            keyed.append((book, tier * (words.count + 1) + hits.filter(\.whole).count))
        }
        switch p.sort {
        case .relevance where !words.isEmpty:
            keyed.sort { $0.key != $1.key ? $0.key > $1.key : $0.book.id < $1.book.id }
        case .newest:
            keyed.sort { $0.book.createdAt != $1.book.createdAt ? $0.book.createdAt > $1.book.createdAt : $0.book.id > $1.book.id }
        default:
            keyed.sort { $0.book.titleKey != $1.book.titleKey ? $0.book.titleKey.lexicographicallyPrecedes($1.book.titleKey) : $0.book.id < $1.book.id }
        }
        let page = keyed.dropFirst(p.page.offset).prefix(p.page.perPage).map(\.book.id)
        return CatalogIndex.Answer(
            total: keyed.count, ids: Array(page),
            categoryCounts: categories.map { c in (id: c.id, count: noCategory.filter { $0.categoryIDs.contains(c.id) }.count) },
            ageBandCounts: CatalogIndex.ageBands.map { band in noAge.filter { $0.ageMin <= band.age && band.age <= $0.ageMax }.count })
    }

    static func randomQuery(_ rng: inout RNG) -> CatalogParameters {
        func word() -> String {
            let w = (common + rare).randomElement(using: &rng)!
            var text = String(w.prefix(Int.random(in: 3...w.count, using: &rng)))
            if text.count >= 5 && Bool.random(using: &rng) {   // one edit somewhere (the typo walk's four kinds)
                var letters = Array(text)
                let at = Int.random(in: 0..<letters.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: letters[at] = "x"
                case 1: letters.insert("q", at: at)
                case 2 where at + 1 < letters.count: letters.swapAt(at, at + 1)
                default: letters.remove(at: at)
                }
                text = String(letters)
            }
            return text
        }
        let text: String? = switch Int.random(in: 0..<4, using: &rng) {
        case 0: nil
        case 1: word() + " " + word()
        default: word()
        }
        let sorts: [CatalogParameters.Sort?] = [nil, .title, .newest, .relevance]
        return CatalogParameters(text: text, age: Bool.random(using: &rng) ? Int.random(in: 0...12, using: &rng) : nil,
                                 publisher: Int.random(in: 0..<4, using: &rng) == 0 ? Int.random(in: 1...3, using: &rng) : nil,
                                 category: Int.random(in: 0..<3, using: &rng) == 0 ? ["c1", "c3", "2", "nope"].randomElement(using: &rng)! : nil,
                                 page: PageRequest(page: [1, 1, 2, 3, 40].randomElement(using: &rng)!, perPage: [1, 20, 100].randomElement(using: &rng)!),
                                 sort: sorts.randomElement(using: &rng)!)
    }

    @Test("incremental changes, small and batched, answer as the contract's rules and as a fresh build")
    func differential() {
        var rng = RNG(state: 42)
        var books: [Int: CatalogBook] = [:]
        for id in 1...9_000 where Int.random(in: 0..<10, using: &rng) > 0 { books[id] = Self.randomBook(id, &rng) }
        var index = Self.bulk(books)
        var checked = 0
        for round in 0..<5 {
            if round > 0 {
                // one change of 1, 5, 200 or 3,000 books: new ones, replaced ones, removed ones
                let size = [1, 5, 200, 3_000][round - 1]
                var upserts: [CatalogBook] = [], removals: [Int] = []
                for _ in 0..<size {
                    let id = Int.random(in: 1...9_500, using: &rng)
                    if Int.random(in: 0..<3, using: &rng) == 0 {
                        removals.append(id); books[id] = nil; upserts.removeAll { $0.id == id }
                    } else {
                        let book = Self.randomBook(id, &rng)
                        books[id] = book; removals.removeAll { $0 == id }; upserts.removeAll { $0.id == id }; upserts.append(book)
                    }
                }
                index.apply(upserts, removing: removals)
            }
            #expect(index.count == books.count)
            let fresh = Self.bulk(books)
            for _ in 0..<60 {
                let query = Self.randomQuery(&rng)
                let answer = index.answer(query)
                #expect(answer == Self.model(books, query), "round \(round): \(query)")
                #expect(answer == fresh.answer(query))
                checked += 1
            }
            for id in books.keys.shuffled(using: &rng).prefix(50) {
                #expect(index.render(id, at: 30) == fresh.render(id, at: 30))
                let available = books[id]!.rights.contains { $0.contains(30) }
                #expect(index.render(id, at: 30) == Array("{\"id\":\(id),\"rights_available\":\(available)}".utf8))
            }
        }
        #expect(checked == 300)
    }

    @Test("answers the memo keeps across a change equal a fresh computation: 500 single-book changes × 200 queries")
    func memoCarry() {
        var rng = RNG(state: 7)
        let pool = Self.common + Self.rare + ["ball", "bell", "bill", "castle", "cattle", "kettle", "little", "lion", "line", "zebra"]
        func book(_ id: Int) -> CatalogBook {
            var base = Self.randomBook(id, &rng)
            var lexemes: [String: UInt8] = [:]
            for _ in 0..<Int.random(in: 1...4, using: &rng) { lexemes[pool.randomElement(using: &rng)!, default: 0] |= UInt8.random(in: 1...7, using: &rng) }
            base.lexemes = lexemes.map { ($0.key, $0.value) }
            return base
        }
        var books: [Int: CatalogBook] = [:]
        for id in 1...1_500 { books[id] = book(id) }
        var index = Self.bulk(books)
        let queries = (0..<200).map { _ in Self.randomQuery(&rng) }
        var answers = queries.map { index.answer($0) }
        var kept = 0
        for _ in 0..<500 {
            let id = Int.random(in: 1...1_600, using: &rng)
            let removing = Int.random(in: 0..<5, using: &rng) == 0
            let fresh = removing ? nil : book(id)
            let carry = MemoCarry(lexemes: index.lexemes(of: id) + (fresh?.lexemes.map(\.0) ?? []))
            index.apply(fresh.map { [$0] } ?? [], removing: removing ? [id] : [])
            books[id] = fresh
            for (i, query) in queries.enumerated() {
                if carry.affects(words: query.words) {
                    answers[i] = index.answer(query)
                } else {
                    kept += 1
                    #expect(answers[i] == index.answer(query), "kept a stale answer for \(query)")
                }
            }
        }
        #expect(kept > 30_000, "kept \(kept) of \(500 * 200)")   // about half here (a quarter of the queries have no words and always recompute)
    }
}
