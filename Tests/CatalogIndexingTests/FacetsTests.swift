@testable import CatalogIndexing
import Core
import Testing

/// The facets counted book by book (`facetsByBooks`, for a few matches spread over the id range)
/// against the passes per category and age band over the sets they replace.
@Suite("Facets by books")
struct FacetsTests {
    typealias Base = CatalogIndexTests

    @Test("for 2,000 random sets of matches (0–40 books, before and after 300 changes) the facets read book by book equal those counted over the sets; a category with no books counts none")
    func byBooksEqualThePasses() {
        var rng = Base.RNG(state: 77)
        var books: [Int: CatalogBook] = [:]
        for id in 1...6_000 { books[id] = Base.randomBook(id, &rng) }
        var index = Base.bulk(books)
        // A category no book is in, listed between the others.
        index.setCategories(Base.categories + [CatalogIndex.Category(id: 9, slug: "none")])
        var compared = 0
        for round in 0..<2_000 {
            if round == 1_000 {
                for _ in 0..<300 {
                    let id = Int.random(in: 1...6_100, using: &rng)
                    if Bool.random(using: &rng) { index.apply([Base.randomBook(id, &rng)], removing: []) } else { index.apply([], removing: [id]) }
                }
            }
            var noCategory = Bitset(capacity: 6_200), noAge = Bitset(capacity: 6_200)
            for _ in 0..<Int.random(in: 0...30, using: &rng) { noCategory.insert(Int.random(in: 1...6_100, using: &rng)) }
            noAge = Bool.random(using: &rng) ? noCategory : noAge
            for _ in 0..<Int.random(in: 0...10, using: &rng) { noAge.insert(Int.random(in: 1...6_100, using: &rng)) }
            noCategory.formIntersection(index.active); noAge.formIntersection(index.active)
            guard let byBooks = index.facetsByBooks(noCategory, noAge) else { continue }
            compared += 1
            #expect(byBooks.categories == index.categories.map { c in index.byCategory[c.id].map { noCategory.intersectionCount($0) } ?? 0 })
            #expect(byBooks.ages == CatalogIndex.ageBands.map { noAge.intersectionCount(index.byAge[$0.age]) })
        }
        #expect(compared > 1_000, "compared \(compared)")
        // Many matches: the passes (nil here).
        #expect(index.facetsByBooks(index.active, index.active) == nil)
    }
}
