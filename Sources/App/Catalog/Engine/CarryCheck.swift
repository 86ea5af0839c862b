import CatalogIndexing
import Core

/// Whether a change's carry (`MemoCarry`) may reach a kept entry — the one rule for the carry
/// that removes what it reaches (`finishCarry`, every kept entry) and for a request answered
/// while it runs (the entry it asks for, vetted on the spot and served when not reached: the
/// ~25 ms a carry takes computed every answer at the new version).
/// Verdicts are worked out once per word (and once more for what reaches only some countries).
struct CarryCheck {
    let carry: MemoCarry
    /// The carry's parts, read once: `carry.territorial` and `carry.titleOrder` copy a whole
    /// carry each time (~20 retains), and the check runs for every kept answer — a fifth of the
    /// server's time at ten writes a second went to finishing carries, a third of that retains.
    private let territorial: (countries: Set<String>, carry: MemoCarry)?, titleOrder: MemoCarry?
    private var wordReaches: [String: MemoCarry.WordReach] = [:], wordSides: [String: UInt64] = [:], territorialVerdicts: [String: Bool] = [:], orderVerdicts: [String: Bool] = [:]

    init(_ carry: MemoCarry) { self.carry = carry; territorial = carry.territorial; titleOrder = carry.titleOrder }

    /// The answer kept under `key` carried through every change of `carries` (a chain).
    static func carried(_ entry: CatalogEngine.AnswerMemo.Entry, _ key: String, through carries: [MemoCarry]) -> CatalogIndex.Answer? {
        var checks = carries.map(CarryCheck.init)
        return carried(entry, key, &checks)
    }

    /// The answer kept under `key` carried through the changes of `checks` (a chain, in order):
    /// as kept when none reaches it; a browse's patched by the changed books (`MemoCarry.patched`)
    /// through those that do; nil when one reaches it otherwise (it goes).
    static func carried(_ entry: CatalogEngine.AnswerMemo.Entry, _ key: String, _ checks: inout [CarryCheck]) -> CatalogIndex.Answer? {
        var answer = entry.answer
        for i in checks.indices where checks[i].reaches(entry, key) {
            guard entry.words.isEmpty, let filters = entry.filters, let counting = entry.counting,
                  let patched = checks[i].carry.patched(answer, filters: filters, counting: counting) else { return nil }
            answer = patched
        }
        return answer
    }

    /// What of the carry `word` (whose forms and stem tokens are `forms`) may reach
    /// (`MemoCarry.reach`), worked out once per word.
    mutating func reach(_ word: String, _ forms: [String]) -> MemoCarry.WordReach {
        if let known = wordReaches[word] { return known }
        let reach = carry.reach(word, forms: forms)
        wordReaches[word] = reach
        return reach
    }

    /// Whether the carry may reach a search with these words (and forms), with `filters` (nil:
    /// unknown): a word's expansion, or a changed book that may match every word (`MemoCarry+Books.swift`).
    mutating func reaches(search words: [String], _ forms: [[String]], filters: MemoCarry.BrowseFilters?) -> Bool {
        var sides: UInt64 = 0
        for (word, forms) in zip(words, forms) {
            let reach = reach(word, forms)
            if reach.vocabulary { return true }
            sides |= reach.altered
        }
        for (word, forms) in zip(words, forms) where sides != 0 {
            if let known = wordSides[word] { sides &= known; continue }
            let mine = carry.sides(word, forms: forms)
            wordSides[word] = mine
            sides &= mine
        }
        return sides != 0 && carry.reaches(sides: sides, filters: filters)
    }

    /// `titleOrder`'s and `territorial`'s `mayMatch(word, forms:)`, worked out once per word.
    private mutating func orderVerdict(_ word: String, _ forms: [String]) -> Bool {
        if let known = orderVerdicts[word] { return known }
        let verdict = titleOrder?.mayMatch(word, forms: forms) ?? false
        orderVerdicts[word] = verdict
        return verdict
    }
    private mutating func territorialVerdict(_ word: String, _ forms: [String]) -> Bool {
        if let known = territorialVerdicts[word] { return known }
        let verdict = territorial?.carry.mayMatch(word, forms: forms) ?? false
        territorialVerdicts[word] = verdict
        return verdict
    }

    /// Whether the carry may reach the answer kept under `key`: a word of its search, or for a
    /// browse its filters (`MemoCarry.affectsBrowse`); what reaches only some countries' catalogs
    /// (`MemoCarry.territorial`) is checked for the answers in those (the country read from the
    /// key; one it cannot read counts as reached).
    mutating func reaches(_ entry: CatalogEngine.AnswerMemo.Entry, _ key: String) -> Bool {
        if entry.words.isEmpty ? carry.affectsBrowse(entry.filters) : reaches(search: entry.words, entry.forms, filters: entry.filters) { return true }
        // A search in title order (its filters say; none kept: it may be) matching a book whose title key moved.
        if titleOrder != nil, !entry.words.isEmpty, entry.filters?.titleOrder ?? true,
           zip(entry.words, entry.forms).contains(where: { orderVerdict($0, $1) }) { return true }
        guard territorial != nil, let country = CatalogEngine.keptCountry(key),
              country == CatalogEngine.unknownCountry || territorial?.countries.contains(country) == true else { return false }
        if entry.words.isEmpty { return territorial?.carry.affectsBrowse(entry.filters) ?? false }
        return zip(entry.words, entry.forms).contains { territorialVerdict($0, $1) }
    }

    /// Whether the carry may reach the words' expansions kept under `key` (one word, or several
    /// split at spaces; made with `synonyms`): only the lexemes coming into or leaving the
    /// catalog change one (`MemoCarry.WordReach.vocabulary`).
    mutating func reaches(expansionsOf key: String, _ expansions: [SearchExpansion], synonyms: Synonyms) -> Bool {
        if expansions.count == 1 && !key.utf8.contains(UInt8(ascii: " ")) { return reach(key, expansions[0].forms).vocabulary }
        let words = key.split(separator: " ").map(String.init)
        return words.indices.contains { i in
            reach(words[i], expansions.count == words.count ? expansions[i].forms : SearchExpansion.forms(of: words[i], synonyms: synonyms)).vocabulary
        }
    }

    /// The answer key a page's meta is kept under (its key less its locales, after \u{3}).
    /// (Read as contiguous bytes where it can be: this runs for every kept page at a change.)
    static func answerKey(ofMeta key: String) -> String {
        let end = key.utf8.withContiguousStorageIfAvailable { $0.firstIndex(of: 3) } ?? key.utf8.firstIndex(of: 3).map { key.utf8.distance(from: key.utf8.startIndex, to: $0) }
        guard let end else { return key }
        return String(Substring(key.utf8.prefix(end)))
    }

    /// Whether a page's meta stays with its answer (`entry`, nil: not kept): it stays when its
    /// answer stayed, offered no correction (which depends on another answer) and shows no book
    /// whose title, author, language or translations changed (its highlights).
    func metaStays(with entry: CatalogEngine.AnswerMemo.Entry?, answerReached: Bool) -> Bool {
        guard let entry, !answerReached else { return false }
        return entry.answer.total >= SearchMeta.fewResults && !carry.reachesPage(entry.answer.ids)
    }
}
