@testable import App
import CatalogIndexing
import Testing

/// The engine's kept answers in two generations: answers in use stay while one-off searches pass.
@Suite("Kept answers")
struct AnswerMemoTests {
    static func entry(_ total: Int) -> CatalogEngine.AnswerMemo.Entry {
        (CatalogIndex.Answer(total: total, ids: [total], categoryCounts: [], ageBandCounts: []), ["w\(total)"], [["w\(total)"]])
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
