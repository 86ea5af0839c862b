@testable import CatalogIndexing
import Core
import Testing

/// A lexeme's books ORed into a relevance page's compact sets (`LexemeBooks.accumulate`,
/// `accumulateAll(into:blocks:)`) equal the sets made book by book — whether the list is read
/// through, sought block by block (a list much longer than the blocks) or unsorted, and for a
/// list turned dense; and its books in some fields over the whole id range.
@Suite("Lexeme books")
struct LexemeBooksTests {
    typealias RNG = CatalogIndexTests.RNG

    @Test("a lexeme's compact sets over random blocks equal the sets made book by book: 3,000 lexemes (list read through, sought per block, unsorted, dense)")
    func compactSetsAgree() {
        var rng = RNG(state: 2027)
        var sought = 0, readThrough = 0
        for round in 0..<3_000 {
            let capacity = [640, 6_400, 70_000][round % 3]
            // Books at a density from one in 2 to one in 2,000; some lists left unsorted (appended
            // out of order, not finished), some past the dense threshold.
            let density = [2, 7, 40, 300, 2_000][Int.random(in: 0..<5, using: &rng)]
            var books: [Int: UInt8] = [:]
            for _ in 0..<max(1, capacity / density) { books[Int.random(in: 0..<capacity, using: &rng)] = UInt8.random(in: 1...7, using: &rng) }
            var lexeme = LexemeBooks()
            let unsorted = round % 7 == 0
            for (id, weights) in (unsorted ? books.shuffled(using: &rng) : books.sorted { $0.key < $1.key }) { lexeme.add(id, weights: weights, append: true) }
            if !unsorted { lexeme.finish(capacity: capacity) }
            // Blocks: a few scattered over the id range, or most of a run of it.
            let words = (capacity + 63) / 64
            let chosen = Set((0..<Int.random(in: 1...max(1, words / [1, 4, 60][round % 3]), using: &rng)).map { _ in Int.random(in: 0..<words, using: &rng) })
            let indices = chosen.sorted(), first = indices[0]
            var slots = [Int32](repeating: -1, count: indices.last! - first + 1)
            for (k, w) in indices.enumerated() { slots[w - first] = Int32(k) }
            let levels = Int.random(in: 0...3, using: &rng), width = indices.count
            if !unsorted && lexeme.dense == nil {
                let span = lexeme.list.count(where: { Int($0 >> 9) >= first && Int($0 >> 9) <= indices.last! })
                if span > width * LexemeBooks.seekRatio { sought += 1 } else { readThrough += 1 }
            }
            var five = [UInt64](repeating: 0, count: 5 * width), all = [UInt64](repeating: 0, count: width)
            indices.withUnsafeBufferPointer { indexBuffer in
                slots.withUnsafeBufferPointer { slotBuffer in
                    let blocks = LexemeBooks.Blocks(indices: indexBuffer, slots: slotBuffer, first: first)
                    five.withUnsafeMutableBufferPointer { lexeme.accumulate(into: $0, blocks: blocks, levels: levels) }
                    all.withUnsafeMutableBufferPointer { lexeme.accumulateAll(into: $0, blocks: blocks) }
                }
            }
            var expectedFive = [UInt64](repeating: 0, count: 5 * width), expectedAll = [UInt64](repeating: 0, count: width)
            for (id, weights) in books {
                guard let k = indices.firstIndex(of: id >> 6) else { continue }
                let bit = UInt64(1) << UInt64(id & 63)
                expectedAll[k] |= bit
                if weights & CatalogBook.title != 0 { expectedFive[k] |= bit }
                if weights & (CatalogBook.title | CatalogBook.author) != 0 { expectedFive[width + k] |= bit }
                for l in 0..<levels { expectedFive[(2 + l) * width + k] |= bit }
            }
            // And over the whole id range, in some fields only (a relevance page's best fields).
            let fields = [CatalogBook.title, CatalogBook.title | CatalogBook.author, 7][round % 3]
            var whole = [UInt64](repeating: 0, count: words), expectedWhole = whole
            whole.withUnsafeMutableBufferPointer { lexeme.accumulateAll(into: $0, fields: fields) }
            for (id, weights) in books where weights & fields != 0 { expectedWhole[id >> 6] |= UInt64(1) << UInt64(id & 63) }
            #expect(whole == expectedWhole, "round \(round): fields \(fields), dense \(lexeme.dense != nil)")
            #expect(five == expectedFive, "round \(round): \(books.count) books, \(width) blocks, levels \(levels)")
            #expect(all == expectedAll, "round \(round): \(books.count) books, \(width) blocks")
        }
        // Both ways of reading a sorted list were compared, many times each.
        #expect(sought > 300 && readThrough > 300, "sought \(sought), read through \(readThrough)")
    }

    @Test("seeking a sorted list finds the first entry at least a value, from any start: 20,000 seeks against a linear scan")
    func seekAgrees() {
        var rng = RNG(state: 9)
        for _ in 0..<20_000 {
            let list = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt32.random(in: 0..<5_000, using: &rng) }.sorted()
            let value = Int.random(in: 0..<5_100, using: &rng), start = Int.random(in: 0...list.count, using: &rng)
            let expected = list.indices.first { $0 >= start && Int(list[$0]) >= value } ?? max(start, list.count)
            let found = list.withUnsafeBufferPointer { LexemeBooks.seek($0, from: start, atLeast: value) }
            #expect(found == expected, "\(list.count) entries from \(start), at least \(value)")
        }
    }
}

extension LexemeBooksTests {
    @Test("sets' edges: an intersection with a shorter or longer set, occupied blocks with empty words after the last, bit 63 alone, and the limit; lists at the top of the id range (ids near 2^29) read through and sought")
    func edges() {
        let long = Bitset(words: [1, 0, 1 << 63, 5]), short = Bitset(words: [3, 7])
        #expect(long.intersection(short).words == [1, 0, 0, 0])
        #expect(short.intersection(long).words == [1, 0])
        #expect(Bitset(words: [0, 1 << 63, 0, 9, 0, 0]).occupiedWords(atMost: 2) == [1, 3])
        #expect(Bitset(words: [0, 1 << 63, 0, 9, 0, 0]).occupiedWords(atMost: 1) == nil)
        #expect(Bitset(words: [0, 0]).occupiedWords(atMost: 0) == [])
        #expect(Bitset(words: []).occupiedWords(atMost: 5) == [])
        let top = 1 << 29
        for ids in [[top - 1, top - 64, top - 65], (0..<100).map { top - 1 - $0 } + (0..<50).map { top - 300 - $0 }] {   // read through; sought (100 entries in 2 blocks)
            var lexeme = LexemeBooks()
            for id in ids.sorted() { lexeme.add(id, weights: 1, append: true) }
            lexeme.finish(capacity: top)
            let indices = [(top >> 6) - 2, (top >> 6) - 1]
            var slots: [Int32] = [0, 1], set = [UInt64](repeating: 0, count: 2)
            indices.withUnsafeBufferPointer { indexBuffer in
                slots.withUnsafeMutableBufferPointer { slotBuffer in
                    let blocks = LexemeBooks.Blocks(indices: indexBuffer, slots: UnsafeBufferPointer(slotBuffer), first: indices[0])
                    set.withUnsafeMutableBufferPointer { lexeme.accumulateAll(into: $0, blocks: blocks) }
                }
            }
            var expected = [UInt64](repeating: 0, count: 2)
            for id in ids where id >> 6 >= indices[0] { expected[id >> 6 - indices[0]] |= UInt64(1) << UInt64(id & 63) }
            #expect(set == expected, "\(ids.count) ids near 2^29")
        }
    }
}
