@testable import App
import CatalogIndexing
import Core
import Foundation
import Testing

/// The engine's kept answers in two generations: answers in use stay while one-off searches pass.
@Suite("Kept answers")
struct AnswerMemoTests {
    static func entry(_ total: Int) -> CatalogEngine.AnswerMemo.Entry {
        .init(CatalogIndex.Answer(total: total, ids: [total], categoryCounts: [], ageBandCounts: []), ["w\(total)"], [["w\(total)"]], nil)
    }

    @Test("an answer asked for now and then survives any number of one-off answers; a one-off one is gone two generations later")
    func generations() {
        var memo = CatalogEngine.AnswerMemo()
        memo.keep(Self.entry(0), "popular")
        memo.keep(Self.entry(1), "once")
        let limit = CatalogEngine.AnswerMemo.limit
        for round in 0..<5 {
            for i in 0..<limit { memo.keep(Self.entry(i + 2), "one-off \(round) \(i)") }
            // Asked for again within each generation: moved back to the newer one.
            #expect(memo.answer("popular")?.total == 0, "round \(round)")
        }
        #expect(memo.answer("once") == nil)
        #expect(memo.answers.count + memo.older.count <= 2 * limit)
        memo.removeAll()
        #expect(memo.answer("popular") == nil)
    }
}

/// A memo's dropped generation is freed on the disposal thread (`Disposal`), not under the memo's
/// lock by the keep that turned it: held back, it is still alive after the turn; drained, gone.
@Suite("Dropped generations")
struct DroppedGenerationTests {
    final class Probe: Sendable {}

    @Test("an answer two turns old is not freed by the keep that drops it, but on the disposal thread")
    func answers() {
        var memo = CatalogEngine.AnswerMemo()
        weak var dropped: CatalogEngine.AnswerMemo.Entry?
        do { let entry = AnswerMemoTests.entry(0); dropped = entry; memo.keep(entry, "once") }
        Disposal.held {
            for i in 0..<2 * CatalogEngine.AnswerMemo.limit { memo.keep(AnswerMemoTests.entry(i + 1), "one-off \(i)") }
            #expect(memo.answer("once") == nil)
            #expect(dropped != nil)   // dropped by the memo, not freed there
        }
        Disposal.drain()
        #expect(dropped == nil)
        // Emptied: the same.
        do { let entry = AnswerMemoTests.entry(0); dropped = entry; memo.keep(entry, "again") }
        Disposal.held {
            memo.removeAll()
            #expect(dropped != nil)
        }
        Disposal.drain()
        #expect(dropped == nil)
    }

    @Test("a search memo's generation two turns old is not freed by the keep that drops it, but on the disposal thread")
    func searchGenerations() {
        var generations = SearchMemo.Generations<Probe>(limit: 4)
        weak var dropped: Probe?
        do { let probe = Probe(); dropped = probe; generations.keep(probe, "once") }
        Disposal.held {
            for i in 0..<8 { generations.keep(Probe(), "one-off \(i)") }
            #expect(generations.peek("once") == nil && dropped != nil)
        }
        Disposal.drain()
        #expect(dropped == nil)
    }
}

@Suite("Kept expansions, highlights and suggestions")
struct SearchMemoTests {
    @Test("a word asked for now and then keeps its expansion through any number of one-off searches; a one-off one is gone two generations later")
    func generations() {
        var memo = SearchMemo()
        let adopted = memo.adopt(version: 1, synonyms: Synonyms())
        #expect(adopted)
        func keep(_ key: String) { memo.meta.keep(Array(key.utf8), key) }
        memo.expansions.keep([], "james")
        keep("once")
        for round in 0..<5 {
            for i in 0..<SearchMemo.limit { keep("one-off \(round) \(i)") }
            let james = memo.lookup(\.expansions, "james")   // asked again: kept in the newer generation
            #expect(james != nil, "round \(round)")
        }
        let once = memo.lookup(\.meta, "once")
        #expect(once == nil)
        #expect(memo.meta.current.count <= SearchMemo.limit && memo.meta.previous.count <= SearchMemo.limit)
        // Looking up the previous generation moves entries within the limit too.
        for i in 0..<SearchMemo.limit { _ = memo.lookup(\.meta, "one-off 4 \(i)") }
        for i in 0..<SearchMemo.limit { keep("again \(i)") }
        #expect(memo.meta.current.count <= SearchMemo.limit && memo.meta.previous.count <= SearchMemo.limit)
        let older = memo.adopt(version: 0, synonyms: Synonyms()), newer = memo.adopt(version: 2, synonyms: Synonyms())
        #expect(!older && newer)   // an older version is not kept; a newer one is
        let fresh = memo.lookup(\.expansions, "james")
        #expect(fresh == nil)   // a new version starts empty
    }

    @Test("a page's meta ages by its bytes too: a generation never holds more than its byte limit")
    func metaByBytes() {
        var meta = SearchMemo.Generations<[UInt8]>(limit: 100, byteLimit: 1_000)
        for i in 0..<10 {
            meta.keep([UInt8](repeating: 1, count: 300), "page \(i)")
            #expect(meta.current.values.reduce(0) { $0 + $1.count } <= 1_000 && meta.bytes <= 1_000)
        }
        #expect(meta.current.count == 1 && meta.previous.count == 3)   // 10 pages of 300 bytes: generations of 3
        #expect(SearchMemo().meta.byteLimit == 32 << 20 && SearchMemo().expansions.byteLimit == .max)
    }

    @Test("one-off searches' metas and causes (one per request) do not push out the words' expansions: those have generations of their own")
    func wordsOutlastOneOffPages() {
        var memo = SearchMemo()
        _ = memo.adopt(version: 1, synonyms: Synonyms())
        // A word typed once, then 3 × the meta limit of one-off pages and causes before it comes again.
        memo.expansions.keep([], "dinosaur")
        for i in 0..<3 * SearchMemo.limit {
            memo.meta.keep([1], "page \(i)")
            memo.causes.keep(.notInCatalog, "page \(i)")
        }
        #expect(memo.lookup(\.expansions, "dinosaur") != nil)
        #expect(memo.lookup(\.meta, "page 0") == nil)
        // The words' own generations hold `expansionsLimit` words each.
        for i in 0..<SearchMemo.expansionsLimit { memo.expansions.keep([], "word \(i)") }
        #expect(memo.lookup(\.expansions, "word 0") != nil)
        #expect(memo.expansions.current.count <= SearchMemo.expansionsLimit && memo.expansions.previous.count <= SearchMemo.expansionsLimit)
        for i in 0..<2 * SearchMemo.expansionsLimit { memo.expansions.keep([], "other \(i)") }
        #expect(memo.lookup(\.expansions, "word 1") == nil)
    }
}

@Suite("Search misses' weeks")
struct SearchMissWeekTests {
    @Test("the week of a miss by arithmetic is the ISO week's Monday (UTC) the calendar gives, over 5,000 random instants and the edges")
    func weekByArithmetic() {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var generator = SystemRandomNumberGenerator()
        let edges: [Double] = [0, 345_599, 345_600, 345_601, 1_798_675_200 - 1, 1_798_675_200, -86_400 * 3.5]
        let instants = edges + (0..<5_000).map { _ in Double.random(in: -1e9...4e9, using: &generator) }
        for t in instants {
            let date = Date(timeIntervalSince1970: t)
            #expect(SearchMisses.week(of: date) == calendar.dateInterval(of: .weekOfYear, for: date)!.start, "\(t)")
        }
    }
}
