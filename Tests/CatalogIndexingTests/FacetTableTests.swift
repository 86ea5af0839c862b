@testable import CatalogIndexing
import Core
import Testing

/// The facet table (`FacetTable`, a page's facet counts): its counts equal each set counted on its
/// own (`intersectionCount`), over every word or over the occupied ones, whatever the sets'
/// lengths, densities and columns; and the table an index keeps book by book equals the one built
/// again from its sets, after changes small and batched and new categories.
@Suite("Facet table")
struct FacetTableTests {
    typealias RNG = CatalogIndexTests.RNG

    static func random(_ capacity: Int, density: Int, _ rng: inout RNG) -> Bitset {
        var set = Bitset(capacity: capacity)
        guard capacity > 0 else { return set }
        for _ in 0..<(capacity / density + 1) { set.insert(Int.random(in: 0..<capacity, using: &rng)) }
        return set
    }

    @Test("one pass over the table equals each set counted on its own: 240 random rounds, 0–130 categories")
    func countsAgree() {
        var rng = RNG(state: 5120)
        let capacities = [0, 1, 64, 640, 32_767, 32_769, 65_600, 100_000]
        var nonzero = 0
        for round in 0..<240 {
            let capacity = capacities[round % capacities.count]
            let base = Self.random(capacity, density: [1, 3, 50, 5_000][Int.random(in: 0..<4, using: &rng)], &rng)
            // Shorter or longer than the base (missing words are empty); some categories without a
            // set, one listed twice now and then; from none to past a row's 8-column lines.
            func set() -> Bitset {
                let length = [capacity, capacity / 2, capacity + 700, 0][Int.random(in: 0..<4, using: &rng)]
                return Self.random(length, density: [9, 400, 3_000][Int.random(in: 0..<3, using: &rng)], &rng)
            }
            let ages = (0..<5).map { _ in set() }
            // (Every eighth round past 64 columns: a row read as several vectors.)
            var categories = Array(0..<(round % 8 == 7 ? Int.random(in: 60...130, using: &rng) : Int.random(in: 0...30, using: &rng))).map { $0 * 7 + 1 }
            if !categories.isEmpty && round % 5 == 0 { categories.append(categories[0]) }
            var byCategory: [Int: Bitset] = [:]
            for id in categories where Int.random(in: 0..<6, using: &rng) > 0 { byCategory[id] = set() }
            let table = FacetTable(ages: ages, categories: categories, byCategory: byCategory)
            let expected = ages.map { base.intersectionCount($0) } + Array(Set(categories)).sorted().map { id in
                byCategory[id].map { base.intersectionCount($0) } ?? 0
            }
            func inOrder(_ counts: [Int]) -> [Int] {
                Array(counts[0..<5]) + Array(Set(categories)).sorted().map { counts[table.categoryColumns[$0]!] }
            }
            let counts = table.counts(base)
            #expect(counts.count == 5 + Set(categories).count + 1)
            #expect(inOrder(counts) == expected, "round \(round)")
            #expect(counts.last == base.count)
            // Over the words holding the base's members only (a search's few matches).
            let occupied = base.occupiedWords(atMost: .max) ?? []
            #expect(table.counts(base, at: occupied) == counts, "round \(round), at the occupied words")
            #expect(base.intersectionCount(base, at: occupied) == base.count)
            nonzero += expected.count(where: { $0 > 0 })
        }
        #expect(nonzero > 1_000)   // (the rounds counted something)
    }

    @Test("the table kept book by book equals the one built again: bulk, 1–3,000-book changes, new categories")
    func keptAsBuilt() {
        var rng = RNG(state: 77)
        var books: [Int: CatalogBook] = [:]
        for id in 1...3_000 where Int.random(in: 0..<10, using: &rng) > 0 { books[id] = CatalogIndexTests.randomBook(id, &rng) }
        var index = CatalogIndexTests.bulk(books)
        func rebuilt(_ index: CatalogIndex) -> FacetTable {
            FacetTable(ages: CatalogIndex.ageBands.map { index.byAge[$0.age] }, categories: index.categories.map(\.id), byCategory: index.byCategory)
        }
        #expect(index.facets == rebuilt(index))
        #expect(index.facets.counts(index.active).last == books.count)
        for round in 0..<12 {
            let size = [1, 2, 5, 40, 200, 3_000][round % 6]
            var upserts: [CatalogBook] = [], removals: [Int] = []
            for _ in 0..<size {
                let id = Int.random(in: 1...3_400, using: &rng)
                if Int.random(in: 0..<3, using: &rng) == 0 {
                    removals.append(id); upserts.removeAll { $0.id == id }
                } else {
                    removals.removeAll { $0 == id }; upserts.removeAll { $0.id == id }; upserts.append(CatalogIndexTests.randomBook(id, &rng))
                }
            }
            index.apply(upserts, removing: removals)
            #expect(index.facets == rebuilt(index), "round \(round), \(size) books")
            if round % 4 == 3 {   // categories reordered, one dropped, one new (books name 1–4)
                index.setCategories(CatalogIndexTests.categories.shuffled(using: &rng).dropFirst() + [CatalogIndex.Category(id: 9, slug: "c9")])
                #expect(index.facets == rebuilt(index))
            }
        }
        #expect(index.facets.counts(index.active).last == index.count)
        // An index changed before it has categories or a bulk load: its age bands are counted.
        var unlisted = CatalogIndex()
        unlisted.apply(Array(books.values.prefix(300)), removing: [])
        #expect(unlisted.facets == rebuilt(unlisted))
        #expect(unlisted.answer(CatalogParameters()).ageBandCounts.reduce(0, +) > 0)
    }
}
