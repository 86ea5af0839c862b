@testable import App
import CatalogIndexing
import Core
import Testing

/// The carry's check (`CarryCheck`) with its verdicts kept in the answers' word groups — as
/// `finishCarry` runs it, several checks of a chain over answers sharing groups — answers
/// exactly as a check asked afresh for each answer, and never keeps an answer the carry's
/// own rule (`MemoCarry.affects`) reaches.
@Suite("Carry check")
struct CarryCheckTests {
    static let pool = ["dragon", "dream", "owl", "moon", "gift", "drawing", "owlet", "moonlight", "giraffe", "gifted", "night", "ocean", "otter", "rabbit", "robot"]

    static func book(_ id: Int, _ rng: inout CatalogEngineTests.Random) -> CatalogBook {
        var lexemes: [String: UInt8] = [:]
        for word in pool where Int.random(in: 0..<100, using: &rng) < 20 { lexemes[word, default: 0] |= UInt8.random(in: 1...7, using: &rng) }
        let title = pool.randomElement(using: &rng)! + " " + pool.randomElement(using: &rng)!
        let ageMin = Int.random(in: 0...10, using: &rng)
        let json = Array("{\"id\":\(id),\"title\":\"\(title)\",\"rights_available\":".utf8)
        return CatalogBook(id: id, titleKey: Array(title.utf8), createdAt: Int64.random(in: 0...50, using: &rng), ageMin: ageMin,
                           ageMax: ageMin + Int.random(in: 0...6, using: &rng), publisherID: Bool.random(using: &rng) ? nil : Int.random(in: 1...3, using: &rng),
                           categoryIDs: Array(Set((0..<Int.random(in: 0...2, using: &rng)).map { _ in Int.random(in: 1...4, using: &rng) })).sorted(),
                           lexemes: lexemes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, json: json + Array("}".utf8),
                           rightsOffset: json.count, rights: [.init(start: 0, end: nil, rule: rules.randomElement(using: &rng)!)])
    }

    /// A random change of one to `most` books of ids 1…320, applied to `index` and `books`, and
    /// its carry: some removed; of the rest, a book made anew, or only its territory rules or its
    /// title key changed (what reaches only some countries' catalogs; a search's page in title order).
    static func change(upTo most: Int, _ index: inout CatalogIndex, _ books: inout [Int: CatalogBook],
                       _ rng: inout CatalogEngineTests.Random) -> MemoCarry {
        let ids = (0..<Int.random(in: 1...most, using: &rng)).map { _ in Int.random(in: 1...320, using: &rng) }
        let removing = ids.filter { _ in Int.random(in: 0..<5, using: &rng) == 0 }
        let changing = Set(ids).subtracting(removing).sorted().map { id -> CatalogBook in
            guard var book = books[id], Int.random(in: 0..<3, using: &rng) > 0 else { return Self.book(id, &rng) }
            if Bool.random(using: &rng) { book.rights = [.init(start: 0, end: nil, rule: Self.rules.randomElement(using: &rng)!)] }
            else { book.titleKey = Array((Self.pool.randomElement(using: &rng)! + " \(id)").utf8) }
            return book
        }
        let carry = index.carry(changing: changing, removing: removing)
        index.apply(changing, removing: removing)
        for book in changing { books[book.id] = book }
        for id in removing { books[id] = nil }
        return carry
    }

    static let rules = [TerritoryRule.worldwide, TerritoryRule(territories: [], excluded: ["JP"]), TerritoryRule(territories: ["US"], excluded: [])]

    @Test("verdicts kept per word group through 300 chains of one to three changes of one to four books equal a fresh check's for each of 400 answers (searches and browses, filters, four countries' keys, one unreadable, a fifth kept with other synonyms), and never keep one MemoCarry.affects reaches")
    func groupsAnswerAsAFreshCheck() {
        var rng = CatalogEngineTests.Random(state: 20261127)
        var index = CatalogIndex()
        index.setCategories((1...4).map { CatalogIndex.Category(id: $0, slug: "c\($0)") })
        var books: [Int: CatalogBook] = [:]
        index.beginBulk()
        for id in 1...300 {
            books[id] = Self.book(id, &rng)
            index.upsert(books[id]!)
        }
        index.endBulk()
        // Answers: a search's words, prefixes or one edit off the pool's (a group per distinct words).
        func word() -> String {
            let whole = Self.pool.randomElement(using: &rng)!
            var text = String(whole.prefix(Int.random(in: 3...whole.count, using: &rng)))
            if text.count >= 5 && Bool.random(using: &rng) { text.removeLast() ; text += "x" }
            return text
        }
        var groups: [[String]: WordGroup] = [:]
        let countries = ["", "JP", "US", "j1"]   // (the last one unreadable: every territorial change reaches it)
        // A synonyms window: a fifth of the answers kept with synonyms the others lack — the same
        // word with other forms, in a group of its own.
        let synonyms = [Synonyms(), Synonyms([.init(words: "owl, otter", oneWay: false), .init(words: "moon => night", oneWay: true)])]
        let entries = (0..<400).map { i -> (key: String, entry: CatalogEngine.AnswerMemo.Entry, country: String, synonyms: Synonyms) in
            let words = (0..<Int.random(in: 0...2, using: &rng)).map { _ in word() }
            let window = Int.random(in: 0..<5, using: &rng) == 0 ? 1 : 0
            let forms = words.map { SearchExpansion.forms(of: $0, synonyms: synonyms[window]) }
            let group = words.isEmpty ? WordGroup.browsing : groups[words + ["\(window)"]] ?? WordGroup(words, forms)
            groups[words + ["\(window)"]] = group
            let filters = MemoCarry.BrowseFilters(publisher: Bool.random(using: &rng) ? nil : Int.random(in: 1...3, using: &rng),
                                                  age: Bool.random(using: &rng) ? nil : Int.random(in: 0...12, using: &rng),
                                                  category: Bool.random(using: &rng) ? nil : Int.random(in: 1...4, using: &rng),
                                                  titleOrder: Bool.random(using: &rng), maxAge: Bool.random(using: &rng) ? nil : 8,
                                                  blockedCategories: Bool.random(using: &rng) ? [] : [Int.random(in: 1...4, using: &rng)])
            let country = countries.randomElement(using: &rng)!
            let answer = CatalogIndex.Answer(total: 0, ids: [], categoryCounts: [], ageBandCounts: [])
            return ("w\(i)\u{1}p=1\u{2}a8k" + country, CatalogEngine.AnswerMemo.Entry(answer, group: group, filters), country, synonyms[window])
        }
        var stamp = 0, reached = 0, stayed = 0, affected = 0, territorial = 0, titleOrder = 0
        for _ in 0..<300 {
            var chain: [MemoCarry] = []
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let carry = Self.change(upTo: 4, &index, &books, &rng)
                if carry.territorial != nil { territorial += 1 }
                if carry.titleOrder != nil { titleOrder += 1 }
                chain.append(carry)
            }
            var cached = chain.enumerated().map { i, carry in
                var check = CarryCheck(carry)
                stamp += 1
                if i < 2 { check.cache = (stamp, i) }
                return check
            }
            for (key, entry, country, synonyms) in entries.shuffled(using: &rng) {
                for i in chain.indices {
                    var fresh = CarryCheck(chain[i])
                    let verdict = cached[i].reaches(entry, key)
                    #expect(verdict == fresh.reaches(entry, key), "\(entry.words) \(key)")
                    let rule = chain[i].affects(words: entry.words, synonyms: synonyms, country: country.isEmpty ? nil : country, filters: entry.filters)
                    #expect(verdict || !rule, "kept \(entry.words) \(key), which the carry's rule reaches")
                    if verdict { reached += 1 } else { stayed += 1 }
                    if rule { affected += 1 }
                }
            }
        }
        let searches = entries.filter { !$0.entry.words.isEmpty }.count
        let searchGroups = groups.keys.filter { $0.count > 1 }.count   // (a browse's key: its window alone)
        #expect(searchGroups < searches * 3 / 4 && reached > affected && stayed > 10_000 && affected > 5_000 && territorial > 20 && titleOrder > 20,
                "\(searchGroups) groups for \(searches) searches, \(reached) reached, \(stayed) stayed, \(affected) by the rule; \(territorial) territorial, \(titleOrder) title-order carries")
    }

    @Test("a word's verdict is reused only for the same forms: \"bunny\" kept with \"bunny => rabbit\" is reached by a change to a \"rabbit\" book, before or after the same word kept without it stayed")
    func verdictsPerForms() {
        let carry = MemoCarry(lexemes: ["rabbit"], browsing: false)
        let plain = SearchExpansion.forms(of: "bunny", synonyms: Synonyms())
        let withRabbit = SearchExpansion.forms(of: "bunny", synonyms: Synonyms([.init(words: "bunny => rabbit", oneWay: true)]))
        #expect(plain != withRabbit)
        let answer = CatalogIndex.Answer(total: 0, ids: [], categoryCounts: [], ageBandCounts: [])
        let kept = CatalogEngine.AnswerMemo.Entry(answer, ["bunny"], [plain], nil), synonymous = CatalogEngine.AnswerMemo.Entry(answer, ["bunny"], [withRabbit], nil)
        for order in [[kept, synonymous, kept], [synonymous, kept, synonymous]] {
            var check = CarryCheck(carry)
            #expect(order.map { check.reaches($0, "k") } == order.map { $0 === synonymous })
        }
    }
}

/// (SplitMix64 serves the standard library's random draws too.)
extension CatalogEngineTests.Random: RandomNumberGenerator {}
