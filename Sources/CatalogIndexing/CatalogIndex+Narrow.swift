import Core

/// A near relevance page whose best keys are sparse — a common word seldom found as typed in a
/// title ("bears": 42,000 books at a million, most titles holding "bear") — did not settle in its
/// first blocks and built the finer sets of every block of its matches. Relevance keys run
/// field first, then level, then whole words, then id (`relevancePage`), and every first run of
/// keys is a set made from the words' catalog-wide sets: every word in the title (T), in the
/// title or author (TA), at level k or better in any field (Lₖ), as a whole word (W). The first
/// run holding the page's end books ends in one key; the books before it are fewer than the page
/// and ranked as before, and that key's books follow in id order — no other block is read.
extension CatalogIndex {
    /// The page of `matches` so made; nil when they are fewer than the page's end (the caller's
    /// runs of blocks then go on where they were, `relevancePage`). (Its two later nils are a
    /// precaution: once the matches fill the page, tier 11 — all of them — does too.)
    func narrowedPage(_ matches: Bitset, _ sets: WordSets, page: PageRequest) -> [Int]? {
        let end = page.offset + page.perPage
        func fills(_ set: Bitset) -> Bool { set.intersectionCount(set, at: sets.blocks) >= end }   // (within the matches' blocks)
        // Fewer matches than the page's end (a filter left few in many blocks): nothing to narrow.
        guard fills(matches) else { return nil }
        var levels = InlineArray<4, Bitset?>(repeating: nil), title: Bitset?, titleOrAuthor: Bitset?   // (Lₖ at k)
        func level(_ k: Int) -> Bitset {
            if let set = levels[k] { return set }
            let set = matching(sets.words.map { WordLexemes(lexemes: $0.lexemes.filter { $0.level >= k }) }, cache: sets.cache, within: matches,
                               occupied: sets.blocks, tier: true)
            levels[k] = set
            return set
        }
        func inTitle() -> Bitset {
            title ?? { title = matching(sets.words, cache: sets.cache, within: matches, occupied: sets.blocks, fields: CatalogBook.title, tier: true); return title! }()
        }
        func inTitleOrAuthor() -> Bitset {
            titleOrAuthor ?? {
                titleOrAuthor = matching(sets.words, cache: sets.cache, within: matches, occupied: sets.blocks, fields: CatalogBook.title | CatalogBook.author, tier: true)
                return titleOrAuthor!
            }()
        }
        func union(_ a: Bitset, _ b: Bitset) -> Bitset { var set = a; set.formUnion(b); return set }
        /// The books of tiers 0…t: T ∩ L₃, L₂, L₁, T; T ∪ (TA ∩ L₃, L₂, L₁), TA; TA ∪ L₃, L₂, L₁; all.
        func tiers(through t: Int) -> Bitset {
            switch t {
            case 0...2: inTitle().intersection(level(3 - t))
            case 3: inTitle()
            case 4...6: union(inTitle(), inTitleOrAuthor().intersection(level(7 - t)))
            case 7: inTitleOrAuthor()
            case 8...10: union(inTitleOrAuthor(), level(11 - t))
            default: matches
            }
        }
        // The tier the page's end falls in found by counts alone (T ⊆ TA, so |T ∪ (TA ∩ L)| is
        // |T| + |TA ∩ L| − |T ∩ L|): at a million books each tier built on the way was a set of
        // the catalog's size written, to be counted once.
        // Each count made once: the steps share |T|, |TA|, |T ∩ Lₖ| and |TA ∩ Lₖ| (the sets named 0 T,
        // 1 TA, 1 + k Lₖ, 5 the matches).
        let dense = sets.blocks.count * 4 > matches.words.count   // (then counted over every word: vectorized)
        var counted = InlineArray<48, Int>(repeating: -1)   // (a × 8 + b; −1 not yet counted: no hashing)
        func count(_ a: Int, _ b: Int) -> Int {
            if counted[a * 8 + b] >= 0 { return counted[a * 8 + b] }
            func set(_ i: Int) -> Bitset { i == 0 ? inTitle() : i == 1 ? inTitleOrAuthor() : i == 5 ? matches : level(i - 1) }
            let x = set(a), y = set(b)
            let n = dense ? x.intersectionCount(y) : x.intersectionCount(y, at: sets.blocks)
            counted[a * 8 + b] = n
            return n
        }
        func held(through t: Int) -> Int {
            switch t {
            case 0...2: count(0, 4 - t)
            case 3: count(0, 0)
            case 4...6: count(0, 0) + count(1, 8 - t) - count(0, 8 - t)
            case 7: count(1, 1)
            case 8...10: count(1, 1) + count(12 - t, 12 - t) - count(1, 12 - t)
            default: count(5, 5)
            }
        }
        guard let filled = (0..<12).first(where: { held(through: $0) >= end }) else { return nil }
        var before = filled == 0 ? Bitset(capacity: matches.capacity) : tiers(through: filled - 1), tier = tiers(through: filled)
        tier.subtract(before)
        // Within the tier, by whole words: the books with at least s of them (`atLeast[s]`),
        // counted word by word.
        let wholes = sets.words.compactMap(\.whole)
        var atLeast = [tier] + [Bitset](repeating: Bitset(capacity: matches.capacity), count: wholes.count)
        for (j, whole) in wholes.enumerated() {
            let found = matching([WordLexemes(lexemes: [(id: whole, level: 3)])], cache: sets.cache, within: tier, occupied: sets.blocks, tier: true)
            for s in stride(from: j + 1, through: 1, by: -1) { atLeast[s].formUnion(atLeast[s - 1].intersection(found)) }
        }
        for s in stride(from: wholes.count, through: 0, by: -1) {
            let through = union(before, atLeast[s])
            guard fills(through) else { before = through; continue }
            // `before` is fewer than the page: ranked as any page; then the key's books by id.
            let held = before.intersectionCount(before, at: sets.blocks)
            var ids = held == 0 ? [] : relevancePage(before, sets: WordSets(count: sets.count, matched: before, blocks: before.occupiedWords(atMost: .max) ?? [],
                                                                         words: sets.words, cache: sets.cache),
                                                     page: PageRequest(page: 1, perPage: held), narrowing: false)
            var key = atLeast[s]
            key.subtract(before)
            key.forEach { id in ids.append(id); return ids.count < end }
            return Array(ids.dropFirst(page.offset).prefix(page.perPage))
        }
        return nil
    }
}
