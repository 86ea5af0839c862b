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
    /// precaution: once the matches fill the page, tier 11 — all of them — does too.) `matches`
    /// lies within `sets.matched` (a filter's books at most): every book of it holds every word.
    func narrowedPage(_ matches: Bitset, _ sets: WordSets, page: PageRequest) -> [Int]? {
        let end = page.offset + page.perPage
        func fills(_ set: Bitset) -> Bool { set.intersectionCount(set, at: sets.blocks) >= end }   // (within the matches' blocks)
        // Fewer matches than the page's end (a filter left few in many blocks): nothing to narrow.
        guard fills(matches) else { return nil }
        var levels = InlineArray<4, Bitset?>(repeating: nil), title: Bitset?, titleOrAuthor: Bitset?   // (Lₖ at k)
        // Lₖ is matched from the words' lexemes of level k or better: it is the matches themselves
        // when no word reached a lexeme below k (L₁ without a sound-alike; L₃ too for a prefix typed
        // right that reached no form or typo), and Lⱼ when each word keeps the same lexemes at j
        // (none between): no set matched twice.
        func level(_ k: Int) -> Bitset {
            if let set = levels[k] { return set }
            func reached(_ j: Int) -> [Int] { sets.words.map { $0.lexemes.count(where: { $0.level >= j }) } }
            let held = reached(k)
            let set = held == sets.words.map(\.lexemes.count) ? matches
                : levels.indices.first(where: { levels[$0] != nil && reached($0) == held }).flatMap { levels[$0] }
                ?? matching(sets.words.map { WordLexemes(lexemes: $0.lexemes.filter { $0.level >= k }) }, cache: sets.cache, within: matches,
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
        // Tier t's books as (x ∪ y) ∩ z (T ⊆ TA, so T ∪ (TA ∩ L) is (T ∪ L) ∩ TA; every set lies within M).
        func parts(_ t: Int) -> [Bitset] {
            switch t {
            case 0...2: [inTitle(), inTitle(), level(3 - t)]
            case 3: [inTitle(), inTitle(), matches]
            case 4...6: [inTitle(), level(7 - t), inTitleOrAuthor()]
            case 7: [inTitleOrAuthor(), inTitleOrAuthor(), matches]
            case 8...10: [inTitleOrAuthor(), level(11 - t), matches]
            default: [matches, matches, matches]
            }
        }
        // The matches holding each whole word (within the tier: read there by the passes below).
        let wholes = sets.words.compactMap(\.whole).map {
            matching([WordLexemes(lexemes: [(id: $0, level: 3)])], cache: sets.cache, within: matches, occupied: sets.blocks, tier: true)
        }
        let all = parts(max(filled - 1, 0)) + parts(filled) + wholes
        // (Static, the closure capturing no `self`: a capture of the index copied the whole of it, a retain a field.)
        let blocks = sets.blocks, before = filled > 0
        guard let split = Bitset.withWords(all, { Self.tierKey($0, before: before, blocks: blocks, end: end) }) else { return nil }
        // The books before the page's key are fewer than the page: ranked as any page; then the key's books by id.
        var ids = split.held == 0 ? [] : relevancePage(split.before, sets: WordSets(count: sets.count, matched: split.before, blocks: split.blocks,
                                                                                     words: sets.words, cache: sets.cache),
                                                       page: PageRequest(page: 1, perPage: split.held), narrowing: false)
        ids += split.key
        return Array(ids.dropFirst(page.offset).prefix(page.perPage))
    }

    /// The tier the page's end falls in (the books of tiers through it less those of the tiers
    /// before, `sets[3...5]` and `sets[0...2]` as (x ∪ y) ∩ z, `before` false: no tier before),
    /// split by how many whole words (`sets[6...]`) its books hold: the key the page's end falls
    /// in, the books ranked before it and their blocks, and the key's books in id order as many
    /// as the page takes. Two passes over the matches' `blocks`: the first counts the books of the
    /// tiers before and of each of the tier's keys, the second writes the books before the page's
    /// key and takes the key's books, stopping once both are all found (over many blocks,
    /// `tierKeyInLine`). (Until round 23 the tiers and each whole-word run were sets of the
    /// catalog's size, written, unioned and counted.)
    private static func tierKey(_ sets: [UnsafeBufferPointer<UInt64>], before: Bool, blocks: [Int], end: Int) -> (before: Bitset, blocks: [Int], held: Int, key: [Int])? {
        let (bx, by, bz, tx, ty, tz) = (sets[0], sets[1], sets[2], sets[3], sets[4], sets[5])
        let hs = Array(sets.dropFirst(6)), n = hs.count, limit = bx.count, mask: UInt64 = before ? ~0 : 0
        // Matches over many blocks, at most two whole words: every word read in line (`tierKeyInLine`).
        if n <= 2 && blocks.count * Self.fewBlocks > limit { return tierKeyInLine(sets, mask: mask, end: end) }
        // `equal[s]`: the tier's books at block w holding exactly s whole words (`masks` in `relevancePage`).
        let equal = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: n + 1)
        defer { equal.deallocate() }
        @inline(__always) func split(_ w: Int) -> UInt64 {
            let earlier = (bx[w] | by[w]) & bz[w] & mask
            equal[0] = (tx[w] | ty[w]) & tz[w] & ~earlier
            for s in stride(from: 1, through: n, by: 1) { equal[s] = 0 }
            for (j, h) in hs.enumerated() {
                let h = h[w]
                var s = j + 1
                while s > 0 { equal[s] = (equal[s] & ~h) | (equal[s - 1] & h); s -= 1 }
                equal[0] &= ~h
            }
            return earlier
        }
        var counts = [Int](repeating: 0, count: n + 1), earlier = 0
        for w in blocks {
            guard w < limit else { break }
            earlier &+= split(w).nonzeroBitCount
            for s in 0...n { counts[s] &+= equal[s].nonzeroBitCount }
        }
        guard let (key, held) = pageKey(counts, earlier: earlier, end: end) else { return nil }
        var words = held == 0 ? [] : [UInt64](repeating: 0, count: limit), occupied: [Int] = [], ids: [Int] = []
        var placed = 0
        ids.reserveCapacity(end - held)
        for w in blocks {
            guard w < limit, placed < held || ids.count < end - held else { break }
            var first = split(w)
            for s in stride(from: key + 1, through: n, by: 1) { first |= equal[s] }
            if first != 0 { words[w] = first; occupied.append(w); placed &+= first.nonzeroBitCount }
            var bits = equal[key]
            while bits != 0 && ids.count < end - held { ids.append(w << 6 | bits.trailingZeroBitCount); bits &= bits &- 1 }
        }
        return (Bitset(words: words), occupied, held, ids)
    }

    /// From the most whole words down (`counts[s]`: the tier's books with exactly s of them), the
    /// first key that fills the page's `end` with the books before it, and how many those are.
    private static func pageKey(_ counts: [Int], earlier: Int, end: Int) -> (key: Int, held: Int)? {
        var held = earlier
        for key in counts.indices.reversed() {
            if held + counts[key] >= end { return (key, held) }
            held += counts[key]
        }
        return nil
    }

    /// `tierKey` over matches in many blocks, with at most two whole words: every word of the sets
    /// read in line — no block looked up, no loop per key (so vectorized) — the tier's books with
    /// one whole word or more and with both (W₁ ⊇ W₂) counted at once; then, when books rank
    /// before the key, their set written whole and its blocks found; then the key's books taken
    /// from the first word on, stopping once the page has them.
    private static func tierKeyInLine(_ sets: [UnsafeBufferPointer<UInt64>], mask: UInt64, end: Int) -> (before: Bitset, blocks: [Int], held: Int, key: [Int])? {
        let (bx, by, bz, tx, ty, tz) = (sets[0], sets[1], sets[2], sets[3], sets[4], sets[5])
        let n = sets.count - 6, limit = bx.count
        // The whole words' sets (one: read twice; none: read, masked out).
        let ha = n > 0 ? sets[6] : tx, hb = n > 1 ? sets[7] : ha
        let one: UInt64 = n > 0 ? ~0 : 0, two: UInt64 = n > 1 ? ~0 : 0
        /// Word w of the tiers before (b) and of the tier less them (t).
        @inline(__always) func tiers(_ w: Int) -> (b: UInt64, t: UInt64) {
            let b = (bx[w] | by[w]) & bz[w] & mask
            return (b, (tx[w] | ty[w]) & tz[w] & ~b)
        }
        var earlier = 0, all = 0, atLeastOne = 0, both = 0
        for w in 0..<limit {
            let (b, t) = tiers(w)
            earlier &+= b.nonzeroBitCount
            all &+= t.nonzeroBitCount
            atLeastOne &+= (t & (ha[w] | hb[w]) & one).nonzeroBitCount
            both &+= (t & ha[w] & hb[w] & two).nonzeroBitCount
        }
        let counts = Array([all - atLeastOne, atLeastOne - both, both].prefix(n + 1))   // (exactly s whole words)
        guard let (key, held) = pageKey(counts, earlier: earlier, end: end) else { return nil }
        // The books with at least s whole words, as masks chosen once for s = key and key + 1.
        func selector(_ s: Int) -> (any: UInt64, one: UInt64, two: UInt64) { (s == 0 ? ~0 : 0, s == 1 ? one : 0, s == 2 ? two : 0) }
        let from = selector(key), above = selector(key + 1)
        @inline(__always) func atLeast(_ s: (any: UInt64, one: UInt64, two: UInt64), _ a: UInt64, _ c: UInt64) -> UInt64 { s.any | ((a | c) & s.one) | (a & c & s.two) }
        var words: [UInt64] = [], occupied: [Int] = [], ids: [Int] = []
        if held > 0 {
            words = [UInt64](unsafeUninitializedCapacity: limit) { out, count in
                for w in 0..<limit {
                    let (b, t) = tiers(w)
                    out[w] = b | (t & atLeast(above, ha[w], hb[w]))
                }
                count = limit
            }
            occupied = Bitset(words: words).occupiedWords(atMost: .max) ?? []
        }
        ids.reserveCapacity(end - held)
        for w in 0..<limit {
            guard ids.count < end - held else { break }
            var bits = tiers(w).t & atLeast(from, ha[w], hb[w]) & ~atLeast(above, ha[w], hb[w])
            while bits != 0 && ids.count < end - held { ids.append(w << 6 | bits.trailingZeroBitCount); bits &= bits &- 1 }
        }
        return (Bitset(words: words), occupied, held, ids)
    }
}

extension Bitset {
    /// Calls `body` with the words of each of `sets`, in order.
    static func withWords<R>(_ sets: [Bitset], _ body: ([UnsafeBufferPointer<UInt64>]) -> R) -> R {
        var buffers: [UnsafeBufferPointer<UInt64>] = []
        buffers.reserveCapacity(sets.count)
        func next(_ i: Int) -> R {
            guard i < sets.count else { return body(buffers) }
            return sets[i].words.withUnsafeBufferPointer { buffers.append($0); return next(i + 1) }
        }
        return next(0)
    }
}
