import Core
import CatalogIndexing
import Testing

/// Answers taking common words' sets from the `WordSetCache` equal answers reading the lexemes'
/// lists, and the contract's rules, through changes (each a new version) and under a child's scope.
@Suite("Word set cache")
struct WordSetCacheTests {
    typealias Base = CatalogIndexTests

    @Test("answers with common words' sets kept equal answers without them and the model: 5 versions × 200 queries, each asked twice, whole catalog and a child's scope")
    func keptSetsAgree() {
        var rng = Base.RNG(state: 77)
        var books: [Int: CatalogBook] = [:]
        for id in 1...9_000 where Int.random(in: 0..<10, using: &rng) > 0 { books[id] = Base.randomBook(id, &rng) }
        var index = Base.bulk(books)
        let cache = WordSetCache()
        let child = CatalogScope(maxAge: 8, blockedCategories: [1])
        var compared = 0, kept = 0
        for version in 0..<5 {
            if version > 0 {
                var upserts: [CatalogBook] = [], removals: [Int] = []
                for _ in 0..<[0, 1, 40, 500, 2_000][version] {
                    let id = Int.random(in: 1...9_500, using: &rng)
                    if Int.random(in: 0..<3, using: &rng) == 0 {
                        removals.append(id); books[id] = nil; upserts.removeAll { $0.id == id }
                    } else {
                        let book = Base.randomBook(id, &rng)
                        books[id] = book; removals.removeAll { $0 == id }; upserts.removeAll { $0.id == id }; upserts.append(book)
                    }
                }
                index.apply(upserts, removing: removals)
            }
            let queries = (0..<200).map { _ in Base.randomQuery(&rng) }
            for (n, query) in (queries + queries.shuffled(using: &rng)).enumerated() {   // the second time, common words come from the cache
                let expansions = index.expansions(query.words, synonyms: Synonyms())
                let reader = WordSetCache.Reader(cache, version: version)
                let answer = index.answer(query, expansions: expansions, cache: reader)
                #expect(answer == index.answer(query, expansions: expansions), "version \(version): \(query)")
                if n % 8 == 0 { #expect(answer == Base.model(books, query), "version \(version): \(query)") }   // the brute force is slow
                #expect(index.answer(query, expansions: expansions, scope: child, cache: reader) == index.answer(query, expansions: expansions, scope: child),
                        "version \(version), child's scope: \(query)")
                compared += 1
            }
            kept = max(kept, cache.count)
        }
        #expect(compared == 2_000)
        #expect(kept > 5, "\(kept) words kept")   // common words did take the cache's path
    }

    @Test("a new version empties the cache; an entry past half the budget is not kept")
    func versionsAndBudget() {
        var rng = Base.RNG(state: 78)
        var books: [Int: CatalogBook] = [:]
        for id in 1...4_000 { books[id] = Base.randomBook(id, &rng) }
        let index = Base.bulk(books)
        let query = CatalogParameters(text: "dragon", age: nil, publisher: nil, category: nil, page: PageRequest(page: 1, perPage: 20), sort: .relevance)
        let expansions = index.expansions(query.words, synonyms: Synonyms())
        let cache = WordSetCache()
        _ = index.answer(query, expansions: expansions, cache: WordSetCache.Reader(cache, version: 1))
        #expect(cache.count == 1)
        _ = index.answer(query, expansions: expansions, cache: WordSetCache.Reader(cache, version: 2))
        #expect(cache.count == 1)   // the version-1 entry is gone, the version-2 one kept
        let small = WordSetCache(budget: 100)
        #expect(index.answer(query, expansions: expansions, cache: WordSetCache.Reader(small, version: 1)) == index.answer(query, expansions: expansions))
        #expect(small.count == 0)
    }

    @Test("a search whose rarest word finds nothing reads (and keeps) none of its common words; an older version's reader neither reads nor empties the newer entries")
    func emptyStopsEarly() {
        var rng = Base.RNG(state: 79)
        var books: [Int: CatalogBook] = [:]
        for id in 1...4_000 { books[id] = Base.randomBook(id, &rng) }
        let index = Base.bulk(books)
        let cache = WordSetCache()
        for text in ["xqzvw dragon", "dragon xqzvw moon", "gif xqzvw dre"] {
            let query = CatalogParameters(text: text, age: nil, publisher: nil, category: nil, page: PageRequest(page: 1, perPage: 20), sort: .relevance)
            let expansions = index.expansions(query.words, synonyms: Synonyms())
            let answer = index.answer(query, expansions: expansions, cache: WordSetCache.Reader(cache, version: 3))
            #expect(answer.total == 0 && answer == index.answer(query, expansions: expansions), "\(text)")
            #expect(cache.count == 0, "\(text): \(cache.count) common words' sets built for an answer that needed none")
        }
        let query = CatalogParameters(text: "dragon moon", age: nil, publisher: nil, category: nil, page: PageRequest(page: 1, perPage: 20), sort: .relevance)
        let expansions = index.expansions(query.words, synonyms: Synonyms())
        _ = index.answer(query, expansions: expansions, cache: WordSetCache.Reader(cache, version: 3))
        #expect(cache.count == 2)
        #expect(index.answer(query, expansions: expansions, cache: WordSetCache.Reader(cache, version: 2)) == index.answer(query, expansions: expansions))
        #expect(cache.count == 2)   // version 3's entries stay
    }
}
