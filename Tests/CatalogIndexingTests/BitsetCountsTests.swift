@testable import CatalogIndexing
import Testing

/// A set counted against many in one pass (`Bitset.intersectionCounts`, a page's facets) equals
/// each count taken on its own (`intersectionCount`), over every word or over the occupied ones,
/// whatever the sets' lengths against the runs the pass reads, their densities, and sets missing (nil).
@Suite("Bitset counts")
struct BitsetCountsTests {
    typealias RNG = CatalogIndexTests.RNG

    static func random(_ capacity: Int, density: Int, _ rng: inout RNG) -> Bitset {
        var set = Bitset(capacity: capacity)
        guard capacity > 0 else { return set }
        for _ in 0..<(capacity / density + 1) { set.insert(Int.random(in: 0..<capacity, using: &rng)) }
        return set
    }

    @Test("one pass against many sets equals each count on its own: 240 random rounds, lengths around the runs' bounds")
    func countsAgree() {
        var rng = RNG(state: 5120)
        // Around the pass's runs of 512 words (32,768 ids).
        let capacities = [0, 1, 64, 32_767, 32_768, 32_769, 65_600, 100_000]
        var nonzero = 0
        for round in 0..<240 {
            let capacity = capacities[round % capacities.count]
            let base = Self.random(capacity, density: [1, 3, 50, 5_000][Int.random(in: 0..<4, using: &rng)], &rng)
            let sets: [Bitset?] = (0..<Int.random(in: 0...14, using: &rng)).map { _ in
                guard Int.random(in: 0..<6, using: &rng) > 0 else { return nil }
                // Shorter or longer than the base: missing words are empty.
                let length = [capacity, capacity / 2, capacity + 700, 0][Int.random(in: 0..<4, using: &rng)]
                return Self.random(length, density: [9, 400, 3_000][Int.random(in: 0..<3, using: &rng)], &rng)
            }
            let expected = sets.map { $0.map { base.intersectionCount($0) } ?? 0 }
            #expect(base.intersectionCounts(sets) == expected, "round \(round)")
            #expect(base.intersectionCounts(sets + [base]).last == base.count)
            // Over the words holding the base's members only (a search's few matches).
            let occupied = base.occupiedWords(atMost: .max) ?? []
            #expect(base.intersectionCounts(sets, at: occupied) == expected, "round \(round), at the occupied words")
            #expect(base.intersectionCounts(sets, at: occupied) == sets.map { $0.map { base.intersectionCount($0, at: occupied) } ?? 0 })
            nonzero += expected.count(where: { $0 > 0 })
        }
        #expect(nonzero > 400)   // (the rounds counted something)
    }
}
