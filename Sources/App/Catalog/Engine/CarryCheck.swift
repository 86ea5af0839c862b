import CatalogIndexing
import Core

/// Whether a change's carry (`MemoCarry`) may reach a kept entry — the one rule for the carry
/// that removes what it reaches (`finishCarry`, every kept entry it may reach) and for a request answered
/// while it runs (the entry it asks for, vetted on the spot and served when not reached: the
/// ~25 ms a carry takes computed every answer at the new version).
/// Verdicts are worked out once per word and its forms (and once more for what reaches only some countries).
struct CarryCheck {
    let carry: MemoCarry
    /// The carry's parts, read once: `carry.territorial` and `carry.titleOrder` copy a whole
    /// carry each time (~20 retains), and the check runs for every kept answer — a fifth of the
    /// server's time at ten writes a second went to finishing carries, a third of that retains.
    private let territorial: (countries: Set<String>, carry: MemoCarry)?, titleOrder: MemoCarry?
    private var wordReaches = PerWord<MemoCarry.WordReach>(), wordSides = PerWord<UInt64>(), territorialVerdicts = PerWord<Bool>(), orderVerdicts = PerWord<Bool>()

    /// What a check worked out per word, with the forms it was worked out for: answers kept with
    /// other synonyms (a request's may differ from the memo's for a moment) give a word other
    /// forms — "bunny" may reach a "rabbit" book in one answer and not in the next — and a verdict
    /// is reused only for the same forms (worked out again, and kept, for others).
    struct PerWord<Value> {
        private var known: [String: (forms: [String], value: Value)] = [:]
        mutating func value(_ word: String, _ forms: [String], _ make: () -> Value) -> Value {
            if let kept = known[word], kept.forms == forms { return kept.value }
            let value = make()
            known[word] = (forms, value)
            return value
        }
    }

    /// Set by `finishCarry`, the one task that writes a word group's verdicts: a stamp no other
    /// check has had, and which of a group's two slots is this check's (nil: nothing kept in groups).
    var cache: (stamp: Int, slot: Int)?

    init(_ carry: MemoCarry) { self.carry = carry; territorial = carry.territorial; titleOrder = carry.titleOrder }

    /// What of the carry a kept search's words may reach, whatever its filters and country: a
    /// word's expansion (`vocabulary`), the sides of the changed books that may match every word
    /// (`sides`, `MemoCarry.reaches(sides:filters:)`), a book whose title key moved (`order`),
    /// what reaches only some countries' catalogs (`territorial`). `stamp`: the check that found it.
    struct WordVerdict {
        var stamp = 0
        var vocabulary = false, order = false, territorial = false
        var sides: UInt64 = 0
    }

    /// The verdict for a group's words, from the group when this check kept it there.
    mutating func verdict(_ group: WordGroup) -> WordVerdict {
        guard let cache, !group.words.isEmpty else { return verdict(group.words, group.forms) }
        let kept = cache.slot == 0 ? group.verdicts.0 : group.verdicts.1
        if kept.stamp == cache.stamp { return kept }
        var verdict = verdict(group.words, group.forms)
        verdict.stamp = cache.stamp
        if cache.slot == 0 { group.verdicts.0 = verdict } else { group.verdicts.1 = verdict }
        return verdict
    }

    /// Whether the carry may reach an answer kept with `group`'s words (`reaches`): when not,
    /// none of them is read (`AnswerMemo.carry`).
    mutating func mayReach(_ group: WordGroup) -> Bool {
        let verdict = verdict(group)
        return verdict.vocabulary || verdict.sides != 0 || verdict.order || verdict.territorial
    }

    /// The verdict for these words (and forms), each word's parts worked out once per check.
    mutating func verdict(_ words: [String], _ forms: [[String]]) -> WordVerdict {
        var verdict = WordVerdict()
        guard !words.isEmpty else { return verdict }
        var altered: UInt64 = 0
        for (word, forms) in zip(words, forms) {
            let reach = reach(word, forms)
            verdict.vocabulary = verdict.vocabulary || reach.vocabulary
            altered |= reach.altered
        }
        if !verdict.vocabulary && altered != 0 {
            verdict.sides = altered
            for (word, forms) in zip(words, forms) where verdict.sides != 0 { verdict.sides &= sides(word, forms) }
        }
        if titleOrder != nil { verdict.order = zip(words, forms).contains { orderVerdict($0, $1) } }
        if territorial != nil { verdict.territorial = zip(words, forms).contains { territorialVerdict($0, $1) } }
        return verdict
    }

    /// `carry.sides(word, forms:)`, worked out once per word and forms.
    private mutating func sides(_ word: String, _ forms: [String]) -> UInt64 {
        wordSides.value(word, forms) { carry.sides(word, forms: forms) }
    }

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
    /// (`MemoCarry.reach`), worked out once per word and forms.
    mutating func reach(_ word: String, _ forms: [String]) -> MemoCarry.WordReach {
        wordReaches.value(word, forms) { carry.reach(word, forms: forms) }
    }

    /// `titleOrder`'s and `territorial`'s `mayMatch(word, forms:)`, worked out once per word and forms.
    private mutating func orderVerdict(_ word: String, _ forms: [String]) -> Bool {
        orderVerdicts.value(word, forms) { titleOrder?.mayMatch(word, forms: forms) ?? false }
    }
    private mutating func territorialVerdict(_ word: String, _ forms: [String]) -> Bool {
        territorialVerdicts.value(word, forms) { territorial?.carry.mayMatch(word, forms: forms) ?? false }
    }

    /// Whether the carry may reach the answer kept under `key`: a word of its search, or for a
    /// browse its filters (`MemoCarry.affectsBrowse`); what reaches only some countries' catalogs
    /// (`MemoCarry.territorial`) is checked for the answers in those (the country read from the
    /// key; one it cannot read counts as reached).
    /// (The key is read only for a change of territory rules: `finishCarry` leaves the keys of
    /// the answers that stay untouched.)
    mutating func reaches(_ entry: CatalogEngine.AnswerMemo.Entry, _ key: @autoclosure () -> String) -> Bool {
        let group = entry.group
        let browse = group.words.isEmpty
        let verdict = browse ? WordVerdict() : verdict(group)
        if browse ? carry.affectsBrowse(entry.filters) : verdict.vocabulary || verdict.sides != 0 && carry.reaches(sides: verdict.sides, filters: entry.filters) {
            return true
        }
        // A search in title order (its filters say; none kept: it may be) matching a book whose title key moved.
        if verdict.order, entry.filters?.titleOrder ?? true { return true }
        guard let territorial, let country = CatalogEngine.keptCountry(key()),
              country == CatalogEngine.unknownCountry || territorial.countries.contains(country) else { return false }
        return browse ? territorial.carry.affectsBrowse(entry.filters) : verdict.territorial
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
        return Self.metaStays(with: entry, through: carry)
    }

    /// Whether a page's meta stays with its answer, kept and not reached (`metaStays(with:answerReached:)`), through `carry`.
    static func metaStays(with entry: CatalogEngine.AnswerMemo.Entry, through carry: MemoCarry) -> Bool {
        entry.answer.total >= SearchMeta.fewResults && !carry.reachesPage(entry.answer.ids)
    }
}
