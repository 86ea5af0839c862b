@testable import App
import CatalogIndexing
import Foundation
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
