@testable import App
import CatalogIndexing
import Core
import Testing

/// The carry reads only the answers of the word groups a change may reach (`AnswerMemo.Members`,
/// `AnswerMemo.carry`): through random keeps, replacements by other words, moves between the
/// generations and a generation's turn, what it finds is what a visit of every kept answer finds,
/// and every kept answer stays listed for the next carry.
@Suite("Answer memo: the carry's lists")
struct AnswerMemoCarryTests {
    typealias Memo = CatalogEngine.AnswerMemo

    @Test("over 150 chains of one to three changes, the answers a carry of the groups' lists finds reached are those a visit of every kept answer finds, every kept answer stays listed, and the groups no change may reach are passed over")
    func listsFindWhatAVisitFinds() {
        var rng = CatalogEngineTests.Random(state: 20261128)
        var index = CatalogIndex()
        index.setCategories((1...4).map { CatalogIndex.Category(id: $0, slug: "c\($0)") })
        index.beginBulk()
        var books: [Int: CatalogBook] = [:]
        for id in 1...300 {
            books[id] = CarryCheckTests.book(id, &rng)
            index.upsert(books[id]!)
        }
        index.endBulk()
        // 80 word lists (none: a browse), shared by the answers of 600 keys in four countries' catalogs.
        let wordLists = (0..<80).map { i -> [String] in
            i < 8 ? [] : (0..<Int.random(in: 1...2, using: &rng)).map { _ in
                let whole = CarryCheckTests.pool.randomElement(using: &rng)!
                return String(whole.prefix(Int.random(in: 3...whole.count, using: &rng)))
            }
        }
        let countries = ["", "JP", "US", "j1"]
        let keys = (0..<600).map { "w\($0)\u{1}p=1\u{2}a8k" + countries[$0 % 4] }
        var memo = Memo()
        // Kept as the engine keeps (asked first: an older answer moves to the newer generation,
        // so no key is in both), sometimes under other words than before.
        func keep(_ key: String) {
            _ = memo.answer(key)
            let words = wordLists.randomElement(using: &rng)!
            let filters = MemoCarry.BrowseFilters(publisher: nil, age: Bool.random(using: &rng) ? nil : Int.random(in: 0...12, using: &rng),
                                                  category: Bool.random(using: &rng) ? nil : Int.random(in: 1...4, using: &rng),
                                                  titleOrder: Bool.random(using: &rng), maxAge: nil, blockedCategories: [])
            let answer = CatalogIndex.Answer(total: 0, ids: [], categoryCounts: [], ageBandCounts: [])
            memo.keep(Memo.Entry(answer, group: memo.group(words, words.map { SearchExpansion.forms(of: $0, synonyms: Synonyms()) }), filters), key)
        }
        for key in keys { keep(key) }
        // A generation's turn: the answers so far become the older generation (browses of every
        // filter, which the first changes take away).
        for i in 0..<Memo.limit {
            memo.keep(Memo.Entry(CatalogIndex.Answer(total: 0, ids: [], categoryCounts: [], ageBandCounts: []), group: .browsing, nil), "filler\(i)")
        }
        #expect(!memo.older.isEmpty && memo.older.count + memo.answers.count == keys.count + Memo.limit)
        var stamp = 0, gone = 0, stayed = 0, listsRead = 0, listsPassed = 0
        for round in 0..<150 {
            // Between carries: answers kept anew (some under other words), and older ones asked again.
            if round > 0 {
                for _ in 0..<20 { keep(keys.randomElement(using: &rng)!) }
                for _ in 0..<10 { _ = memo.answer(keys.randomElement(using: &rng)!) }
            }
            var chain: [MemoCarry] = []
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                chain.append(CarryCheckTests.change(upTo: 3, &index, &books, &rng))
            }
            // Every kept answer visited, each checked afresh.
            var fresh = chain.map(CarryCheck.init)
            let live = [memo.answers, memo.older].flatMap { $0.map { ($0.key, $0.value) } }
            let expected = Set(live.filter { key, entry in fresh.indices.contains { fresh[$0].reaches(entry, key) } }.map(\.0))
            var checks = chain.enumerated().map { i, carry in
                var check = CarryCheck(carry)
                stamp += 1
                if i < 2 { check.cache = (stamp, i) }
                return check
            }
            let carried = Memo.carry([(memo.answers, memo.members), (memo.older, memo.olderMembers)], turns: memo.turns, &checks)
            #expect(Set(carried.gone) == expected, "round \(round): \(Set(carried.gone).symmetricDifference(expected).sorted())")
            #expect(carried.patched.isEmpty)
            listsRead += carried.lists.count
            listsPassed += memo.members.groups.count + memo.olderMembers.groups.count - carried.lists.count
            gone += expected.count
            stayed += live.count - carried.gone.count
            memo.apply(carried)
            // The lists the carry read hold only what stays in them.
            for list in carried.lists {
                let (members, answers) = list.generation == 0 ? (memo.members, memo.answers) : (memo.olderMembers, memo.older)
                let listed = members.groups[ObjectIdentifier(list.group)]?.keys ?? []
                #expect(listed.allSatisfy { answers[$0]?.group === list.group }, "round \(round): \(listed.filter { answers[$0]?.group !== list.group })")
            }
            // Every answer still kept is listed under its group (or among the browses) in its generation.
            for (answers, members) in [(memo.answers, memo.members), (memo.older, memo.olderMembers)] {
                let listed = Set(members.browses).union(members.groups.values.flatMap { member in member.keys.filter { answers[$0]?.group === member.group } })
                #expect(Set(answers.keys).isSubset(of: listed), "round \(round): \(Set(answers.keys).subtracting(listed).sorted())")
                #expect(members.groups.values.allSatisfy { !$0.group.words.isEmpty } && members.browses.count + members.groups.values.map(\.keys.count).reduce(0, +) <= 4 * keys.count + Memo.limit)
            }
        }
        #expect((Array(memo.answers.keys) + memo.older.keys).allSatisfy { !$0.hasPrefix("filler") } && gone > 2_000 && stayed > 3_000 && listsPassed > 1_000 && listsRead > 1_000,
                "\(gone) gone, \(stayed) stayed; \(listsRead) lists read, \(listsPassed) passed over")
    }
}
