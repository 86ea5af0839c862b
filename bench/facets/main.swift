// `BENCH_ONLY=facets bench/run.sh` (bench/facets.sh): the engine's facet counts alone, without
// the server — the table (`Sources/CatalogIndexing/FacetTable.swift`, compiled in as it is) over
// a million books' worth of random sets, a search's matches in a share of the catalog's 64-bit
// words, counted over the rows of those words (as the engine does up to two fifths of the
// words: `CatalogIndex+Answer.swift`) and over every row. From memory (the caches flushed by
// writing 64 MB first: a server's other work evicts the table) and cached. Prints one table.
import Foundation

let arguments = CommandLine.arguments
let books = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
let words = (books + 63) / 64, ages = 5, categories = 10
let rounds = (cold: 30, warm: 200)
var random = SystemRandomNumberGenerator()
/// A set holding about a quarter of the books (two random words ANDed).
func randomSet() -> Bitset {
    Bitset(words: (0..<words).map { _ in UInt64.random(in: 0...UInt64.max, using: &random) & UInt64.random(in: 0...UInt64.max, using: &random) })
}
let table = FacetTable(ages: (0..<ages).map { _ in randomSet() }, categories: Array(1...categories),
                       byCategory: Dictionary(uniqueKeysWithValues: (1...categories).map { ($0, randomSet()) }))
var junk = [UInt64](repeating: 1, count: 8 << 20)
@inline(never) func flush() -> UInt64 {
    var sum: UInt64 = 0
    for i in stride(from: 0, to: junk.count, by: 8) { junk[i] &+= 1; sum &+= junk[i] }
    return sum
}
var sink: UInt64 = 0
/// The fastest of `count` timings of `body` (µs), the caches flushed before each when `cold`.
func best(_ count: Int, cold: Bool, _ body: () -> [Int]) -> Double {
    var fastest = UInt64.max
    for _ in 0..<count {
        if cold { sink &+= flush() }
        let start = DispatchTime.now().uptimeNanoseconds
        sink &+= UInt64(body().last ?? 0)
        fastest = min(fastest, DispatchTime.now().uptimeNanoseconds - start)
    }
    return Double(fastest) / 1000
}
print("facet counts at \(books) books (\(ages + categories) facets, \(words) words; µs, best of \(rounds.cold) from memory, \(rounds.warm) cached)")
print("| matches in | rows of the matches, from memory | every row, from memory | rows of the matches, cached | every row, cached | the engine reads |")
print("|---:|---:|---:|---:|---:|---|")
for share in [0.01, 0.06, 0.12, 0.22, 0.4, 0.6, 1.0] {
    // Two books in each word of the share (a search's matches: few books, spread out).
    var matches = [UInt64](repeating: 0, count: words)
    for w in 0..<words where Double.random(in: 0..<1, using: &random) < share {
        matches[w] = 1 << UInt64.random(in: 0..<64, using: &random) | 1 << UInt64.random(in: 0..<64, using: &random)
    }
    let set = Bitset(words: matches), occupied = set.occupiedWords(atMost: .max) ?? []
    guard table.counts(set, at: occupied) == table.counts(set) else { fatalError("the two counts differ at \(share)") }
    let rowsCold = best(rounds.cold, cold: true) { table.counts(set, at: occupied) }
    let everyCold = best(rounds.cold, cold: true) { table.counts(set) }
    let rowsWarm = best(rounds.warm, cold: false) { table.counts(set, at: occupied) }
    let everyWarm = best(rounds.warm, cold: false) { table.counts(set) }
    let reads = occupied.count * 5 <= words * 2 ? "rows of the matches" : "every row"
    print(String(format: "| %.0f %% | %.1f | %.1f | %.1f | %.1f | %@ |", share * 100, rowsCold, everyCold, rowsWarm, everyWarm, reads))
}
if sink == 42 { print("") }   // (keeps the counts from being optimized away)
