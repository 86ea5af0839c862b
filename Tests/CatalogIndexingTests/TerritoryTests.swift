import Core
import CatalogIndexing
import Testing

@Suite("Territories and schedules in the catalog index")
struct IndexTerritoryTests {
    @Test("ISO codes: any case and separator, sorted without repeats; an unknown code is named")
    func parse() throws {
        #expect(try Territories.parse("fr, BE  fr\nch").get() == ["BE", "CH", "FR"])
        #expect(try Territories.parse("").get() == [])
        guard case .failure(let unknown) = Territories.parse("FR, EU") else { Issue.record("EU accepted"); return }
        #expect(unknown.code == "EU" && Territories.codes.count == 249)
        #expect(TerritoryRule(territories: ["FR"], excluded: []).applies(to: "FR"))
        #expect(!TerritoryRule(territories: [], excluded: ["US"]).applies(to: "US"))
        #expect(TerritoryRule(territories: [], excluded: ["US"]).applies(to: "GB") && TerritoryRule.worldwide.applies(to: nil))
    }

    @Test("through random changes, the country's catalog and the live set equal a brute-force model")
    func model() {
        var rng = CatalogIndexTests.RNG(state: 11)
        let rules = [TerritoryRule.worldwide, .init(territories: ["FR"], excluded: []), .init(territories: ["FR", "BE"], excluded: []),
                     .init(territories: [], excluded: ["US"]), .init(territories: ["US"], excluded: [])]
        func book(_ id: Int) -> CatalogBook {
            var base = CatalogIndexTests.randomBook(id, &rng)
            base.rights = (0..<Int.random(in: 0...2, using: &rng)).map { _ in
                CatalogBook.RightsWindow(start: Int64.random(in: 0...100, using: &rng), end: Bool.random(using: &rng) ? nil : Int64.random(in: 101...200, using: &rng),
                                         rule: rules.randomElement(using: &rng)!)
            }
            if Int.random(in: 0..<4, using: &rng) == 0 { base.liveFrom = Int64.random(in: 0...100, using: &rng) }
            if Int.random(in: 0..<4, using: &rng) == 0 { base.liveUntil = Int64.random(in: 101...200, using: &rng) }
            return base
        }
        var books: [Int: CatalogBook] = [:]
        for id in 1...400 { books[id] = book(id) }
        var index = CatalogIndexTests.bulk(books)
        for step in 0..<300 {
            let id = Int.random(in: 1...420, using: &rng)
            let removing = Int.random(in: 0..<5, using: &rng) == 0
            let fresh = removing ? nil : book(id)
            index.apply(fresh.map { [$0] } ?? [], removing: removing ? [id] : [])
            books[id] = fresh
            guard step % 30 == 0 else { continue }
            for country in ["FR", "BE", "US", "JP"] {
                let expected = Set(books.values.filter { $0.rights.isEmpty || $0.rights.contains { $0.rule.applies(to: country) } }.map(\.id))
                let hidden = index.unlicensed(in: country)
                let shown = Set(books.keys).filter { !(hidden?.contains($0) ?? false) }
                #expect(shown == expected, "step \(step), \(country)")
            }
            let now = Int64.random(in: 0...200, using: &rng)
            let offline = Set(books.values.filter { ($0.liveFrom.map { now < $0 } ?? false) || ($0.liveUntil.map { now >= $0 } ?? false) }.map(\.id))
            let (set, since, until) = index.offline(at: now)
            #expect(Set(set?.members ?? []) == offline, "step \(step) at \(now)")
            let bounds = books.values.flatMap { [$0.liveFrom, $0.liveUntil].compactMap { $0 } }.filter { $0 > now }
            #expect(until == (bounds.min() ?? Int64.max), "step \(step)")
            let passed = books.values.flatMap { [$0.liveFrom, $0.liveUntil].compactMap { $0 } }.filter { $0 <= now }
            #expect(since == (passed.max() ?? Int64.min), "step \(step)")
            // The same set at every instant from `since` until `until` (the key answers are kept under).
            if since > Int64.min { #expect(Set(index.offline(at: since).books?.members ?? []) == offline, "step \(step) at \(since)") }
            if until < Int64.max { #expect(Set(index.offline(at: until - 1).books?.members ?? []) == offline, "step \(step) before \(until)") }
        }
    }
}

extension IndexTerritoryTests {
    @Test("a scope's kept key, written into one buffer, is the key its controls interpolated give (2,000 random scopes, ids in any order); none for an approved-only scope")
    func scopeKeys() {
        var rng = CatalogIndexTests.RNG(state: 12)
        func ids() -> [Int] { (0..<Int.random(in: 0...3, using: &rng)).map { _ in Int.random(in: -5...5_000_000_000, using: &rng) } }
        func list(_ ids: [Int]) -> String { ids.sorted().map(String.init).joined(separator: ",") }
        for _ in 0..<2_000 {
            let scope = CatalogScope(maxAge: Bool.random(using: &rng) ? Int.random(in: 0...18, using: &rng) : nil, blockedCategories: ids(),
                                     blockedPublishers: ids(), blockedBooks: ids(), country: ["FR", nil, "é"].randomElement(using: &rng)!)
            let reference = "\u{2}a\(scope.maxAge ?? 18)c\(list(scope.blockedCategories))p\(list(scope.blockedPublishers))b\(list(scope.blockedBooks))k\(scope.country ?? "")"
            #expect(scope.memoKey.map { Array($0.utf8) } == Array(reference.utf8))   // (bytes: == on strings is canonical)
        }
        #expect(CatalogScope(maxAge: 5, allowed: [1, 2]).memoKey == nil)
    }
}
