@testable import CatalogIndexing
import Core
import Testing

/// A search's words matched block by block (`CatalogIndex.followed`: the rarest word's books read
/// from its lists, the next words only over the blocks left) equal the same words ANDed over the
/// whole catalog, one catalog-sized set per word — over random words (common ones held as
/// bitsets, rare ones as lists, prefixes reaching both), random bases (a scope's books, a sparse
/// answer), each field choice, with and without the kept common sets and the base's blocks given.
@Suite("Words matched block by block")
struct FollowedMatchingTests {
    typealias Base = CatalogIndexTests

    /// Every book of `base` holding each word (any of its lexemes, in one of `fields`): a
    /// catalog-sized set per word, ANDed — the way matching was done before.
    static func reference(_ index: CatalogIndex, _ words: [CatalogIndex.WordLexemes], within base: Bitset, fields: UInt8) -> Bitset {
        var matched = base
        for word in words {
            var any = [UInt64](repeating: 0, count: index.active.words.count)
            any.withUnsafeMutableBufferPointer { buffer in
                for lexeme in word.lexemes { index.lexemes[lexeme.id].accumulateAll(into: buffer, fields: fields) }
            }
            matched.formIntersection(Bitset(words: any))
        }
        return matched
    }

    /// A random base: the whole catalog, a scope's books, or a sparse set (a few blocks, as an
    /// answer's matches are), and its blocks (`occupied`: exact, with empty blocks added, or not given).
    static func base(_ index: CatalogIndex, _ rng: inout Base.RNG) -> (Bitset, [Int]?) {
        var base = index.active
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: break
        case 1: base = index.books(in: CatalogScope(maxAge: Int.random(in: 2...9, using: &rng), blockedCategories: [Int.random(in: 1...4, using: &rng)]), offline: nil)
        default:
            var sparse = Bitset(capacity: base.capacity)
            for _ in 0..<Int.random(in: 0...400, using: &rng) {
                let id = Int.random(in: 0..<base.capacity, using: &rng)
                if base.contains(id) { sparse.insert(id) }
            }
            base = sparse
        }
        let exact = base.occupiedWords(atMost: .max) ?? []
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: return (base, exact)
        case 1: return (base, Array(Set(exact + (0..<20).map { _ in Int.random(in: 0..<base.words.count, using: &rng) })).sorted())
        default: return (base, nil)
        }
    }

    @Test("3,000 random searches (1–3 words, any fields, any base, kept sets or not) match as ANDed over the whole catalog, with their blocks exact")
    func followedAgrees() {
        var rng = Base.RNG(state: 4_417)
        var books: [Int: CatalogBook] = [:]
        // Beside the common and rare words, scarce ones (one book in a hundred: fewer than two a block).
        let scarce = ["zebra", "zebras", "zest", "quill", "quilt"]
        for id in 1...20_000 {
            var book = Base.randomBook(id, &rng)
            for word in scarce where Int.random(in: 0..<100, using: &rng) == 0 { book.lexemes.append((word, UInt8.random(in: 1...7, using: &rng))) }
            books[id] = book
        }
        let index = Base.bulk(books)
        let vocabulary = Base.common + Base.rare + scarce + scarce + ["d", "dr", "dra", "mo", "o", "g", "gi", "r", "ro", "n", "ze", "qui"]
        var seeded = 0, narrowed = 0, empty = 0
        for trial in 0..<3_000 {
            let cache = WordSetCache()
            let reader = Bool.random(using: &rng) ? WordSetCache.Reader(cache, version: 1) : nil
            let words = (0..<Int.random(in: 1...3, using: &rng)).map { _ in vocabulary.randomElement(using: &rng)! }
            let expansions = words.map { SearchExpansion($0, vocabulary: index.typos, synonyms: Synonyms()) }
            var lexemes = index.wordLexemes(expansions)
            // A word reaching no lexeme at a level (a relevance tier's filter leaves such words).
            if Int.random(in: 0..<10, using: &rng) == 0 { lexemes.append(CatalogIndex.WordLexemes()) }
            let (base, occupied) = Self.base(index, &rng)
            let fields = UInt8.random(in: 1...7, using: &rng)
            let tier = Bool.random(using: &rng)
            let expected = Self.reference(index, lexemes, within: base, fields: fields)
            let before = base.words
            let (set, blocks) = index.followed(lexemes, cache: reader, within: base, occupied: occupied, fields: fields, tier: tier)
            #expect(set.members == expected.members, "trial \(trial): \(words) fields \(fields)")
            #expect(base.words == before, "trial \(trial): the base is left as it was")
            if let blocks {
                #expect(blocks == expected.occupiedWords(atMost: .max) ?? [], "trial \(trial): blocks of \(words)")
                if occupied == nil { seeded += 1 } else { narrowed += 1 }
            }
            if expected.isEmpty { empty += 1 }
        }
        // Each way was taken: seeded from lists, narrowed over given blocks, and some found nothing.
        #expect(seeded >= 150 && narrowed >= 80, "\(seeded) seeded, \(narrowed) over given blocks")
        #expect(empty >= 100 && empty <= 2_900, "\(empty) found nothing")
    }
}
