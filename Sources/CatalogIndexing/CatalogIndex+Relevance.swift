import Core

/// The relevance order of a search's matches (`answer`'s default order when it has words).
extension CatalogIndex {
    /// Relevance: where every word matches (all in titles, else all in titles or authors, else
    /// anywhere), then how well (every word literally, else none worse than a word form, else
    /// none worse than a typo, else some only by sound), descending; then the number of words
    /// found as whole words descending, then id. SQL ranks by the same keys (`CatalogQueries`).
    ///
    /// Computed 64 books at a time with word-wise masks, no per-book sort at any size. A near
    /// page (up to `collectedPageLimit` books deep) is collected in one pass; a deeper one counts
    /// the books of every (tier, score) key first, then walks only the keys the page falls in, in
    /// id order, stopping when the page is full.
    static let collectedPageLimit = 240

    /// How many blocks a near page is first looked for in (`relevancePage`).
    static let firstBlocks = 64

    /// A near page collected over successive runs of blocks: each key's first books, the keys
    /// past which no book can enter the page, and whether the best key a book can have is full.
    struct NearPage {
        var collected: [[Int]]
        var cutoff: Int
        var settled = false
        init(keys: Int) { collected = [[Int]](repeating: [], count: keys); cutoff = keys }
    }

    func relevancePage(_ matches: Bitset, sets: WordSets, page: PageRequest, narrowing: Bool = true) -> [Int] {
        var narrowing = narrowing
        return matches.words.withUnsafeBufferPointer { matchWords -> [Int] in
            var near = NearPage(keys: 12 * (sets.count + 1))
            guard page.offset + page.perPage <= Self.collectedPageLimit else {
                let range = 0..<sets.blocks.count
                return fineSets(sets, range).withUnsafeBufferPointer { relevancePage(matchWords, sets: sets, range: range, buffer: $0, page: page, near: &near) }
            }
            // A near page is collected over runs of the blocks — 64, then four times as many each
            // time — their finer sets built one run at a time: a common word's page is usually
            // settled in the first run (its best key full), and the rest of its blocks are then
            // neither built nor read.
            var start = 0, size = Self.firstBlocks
            while start < sets.blocks.count && !near.settled {
                let range = start..<min(sets.blocks.count, start + size)
                _ = fineSets(sets, range).withUnsafeBufferPointer { relevancePage(matchWords, sets: sets, range: range, buffer: $0, page: page, near: &near) }
                start = range.upperBound
                size *= 4
                // Not settled in the first blocks, many left: made from the words' catalog-wide
                // sets (`narrowedPage`). When it cannot be (fewer matches than the page's end),
                // the runs go on from here: the first run is not built again.
                if narrowing && !near.settled && sets.blocks.count - start > Self.narrowedPast {
                    if let narrowed = narrowedPage(matches, sets, page: page) { return narrowed }
                    narrowing = false
                }
            }
            return Array(near.collected.prefix(near.cutoff).joined().dropFirst(page.offset).prefix(page.perPage))
        }
    }

    /// How many blocks must be left after a near page's first run for it to be made from the
    /// words' catalog-wide sets (`narrowedPage`: a few passes over the whole id range).
    static let narrowedPast = 256

    /// Over `sets.blocks[range]` (`buffer`: their `fineSets`): a near page's books collected into
    /// `near` (the page itself is then made by the caller), or a deeper page, over every block.
    private func relevancePage(_ matchWords: UnsafeBufferPointer<UInt64>, sets: WordSets, range: Range<Int>, buffer: UnsafeBufferPointer<UInt64>,
                               page: PageRequest, near: inout NearPage) -> [Int] {
        let n = sets.count, width = range.count
        func offsets(_ kind: WordSets.Kind) -> [Int] { (0..<n).map { WordSets.offset($0, kind, width: width) } }
        let titles = offsets(.title), titlesOrAuthors = offsets(.titleOrAuthor)
        let level1 = offsets(.level1), level2 = offsets(.level2), level3 = offsets(.level3), wholes = offsets(.whole)
        // Tiers: 3 fields (title, title or author, any) × 4 levels (3…0), best first.
        let tierCount = 12
        // Scratch for `masks`, as raw buffers: a captured `var` array is boxed, and its every
        // access in this loop checked for uniqueness.
        let equal = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: n + 1), out = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: tierCount)
        defer { equal.deallocate(); out.deallocate() }
        let tierBits = UnsafeBufferPointer(out)
        /// Block `w` (the sets' `k`-th)'s books of each tier → `out`; whole-word counts → `equal`.
        func masks(_ k: Int, _ w: Int) {
            let m = matchWords[w]
            var t = m, ta = m, l1 = m, l2 = m, l3 = m
            for i in 0..<n {
                t &= buffer[titles[i] + k]
                ta &= buffer[titlesOrAuthors[i] + k]
                l1 &= buffer[level1[i] + k]
                l2 &= buffer[level2[i] + k]
                l3 &= buffer[level3[i] + k]
            }
            // Fields × levels, without an array per block (this runs for every 64 books, twice).
            let f0 = t, f1 = ta & ~t, f2 = m & ~ta
            let v0 = l3, v1 = l2 & ~l3, v2 = l1 & ~l2, v3 = m & ~l1
            out[0] = f0 & v0; out[1] = f0 & v1; out[2] = f0 & v2; out[3] = f0 & v3
            out[4] = f1 & v0; out[5] = f1 & v1; out[6] = f1 & v2; out[7] = f1 & v3
            out[8] = f2 & v0; out[9] = f2 & v1; out[10] = f2 & v2; out[11] = f2 & v3
            for s in 1...n { equal[s] = 0 }
            equal[0] = m
            for whole in wholes {
                let h = buffer[whole + k]
                var s = n
                while s > 0 { equal[s] = (equal[s] & ~h) | (equal[s - 1] & h); s -= 1 }
                equal[0] &= ~h
            }
        }
        // (block position among the sets' blocks, block index in the id range) of the matches.
        let blocks = sets.blocks[range].enumerated().filter { $0.element < matchWords.count && matchWords[$0.element] != 0 }
        let end = page.offset + page.perPage
        if end <= Self.collectedPageLimit {
            // A near page: each run adds to each key's first `end` books, and stops looking at keys
            // once the better ones hold `end` books.
            // The best key a book can have (title, the best level every word reaches, as many
            // whole words as have a whole-word set): once it holds `end` books, no later book
            // ranks above them. A word's level is at best its best lexeme's: a mistyped word
            // reaches its books by typos alone (level 1), and its page is settled at the best
            // key of level 1 rather than never (every block of a common word's matches built).
            let reachable = sets.words.map { $0.lexemes.reduce(0) { max($0, $1.level) } }.min() ?? 3
            let best = (3 - min(max(reachable, 0), 3)) * (n + 1) + n - min(sets.wholeWords, n)
            for (k, w) in blocks {
                masks(k, w)
                var grew = false
                for t in 0..<tierCount where tierBits[t] != 0 && t * (n + 1) < near.cutoff {
                    for s in stride(from: n, through: 0, by: -1) {
                        let key = t * (n + 1) + n - s
                        guard key < near.cutoff else { break }
                        var bits = tierBits[t] & equal[s]
                        while bits != 0 && near.collected[key].count < end {
                            near.collected[key].append(w << 6 | bits.trailingZeroBitCount)
                            bits &= bits &- 1
                            grew = true
                        }
                    }
                }
                guard grew else { continue }
                if near.collected[best].count >= end { near.settled = true; break }
                var held = 0
                for key in 0..<near.cutoff {
                    held += near.collected[key].count
                    if held >= end { near.cutoff = key + 1; break }
                }
            }
            return []
        }
        var counts = [Int](repeating: 0, count: tierCount * (n + 1))   // tier index * (n + 1) + (n - score)
        for (k, w) in blocks {
            masks(k, w)
            for t in 0..<tierCount where tierBits[t] != 0 {
                for s in 0...n { counts[t * (n + 1) + n - s] &+= (tierBits[t] & equal[s]).nonzeroBitCount }
            }
        }
        var result: [Int] = []
        result.reserveCapacity(page.perPage)
        var skip = page.offset
        for key in counts.indices where counts[key] > 0 {
            if skip >= counts[key] { skip -= counts[key]; continue }
            let t = key / (n + 1), score = n - key % (n + 1)
            for (k, w) in blocks {
                masks(k, w)
                var bits = tierBits[t] & equal[score]
                guard bits != 0 else { continue }
                let found = bits.nonzeroBitCount
                if skip >= found { skip -= found; continue }
                while bits != 0 {
                    let bit = bits.trailingZeroBitCount
                    bits &= bits &- 1
                    if skip > 0 { skip -= 1; continue }
                    result.append(w << 6 | bit)
                    if result.count == page.perPage { return result }
                }
            }
            skip = 0
        }
        return result
    }
}
