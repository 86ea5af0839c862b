extension CatalogIndex {
    public struct Answer: Sendable, Equatable {
        public var total: Int
        public var ids: [Int]
        /// Per category, in catalog order: matches if that category were the filter.
        public var categoryCounts: [(id: Int, count: Int)]
        /// Per age band of the picker: matches if that band's age were the filter.
        public var ageBandCounts: [Int]

        public init(total: Int, ids: [Int], categoryCounts: [(id: Int, count: Int)], ageBandCounts: [Int]) {
            self.total = total; self.ids = ids; self.categoryCounts = categoryCounts; self.ageBandCounts = ageBandCounts
        }

        public static func == (a: Answer, b: Answer) -> Bool {
            a.total == b.total && a.ids == b.ids && a.ageBandCounts == b.ageBandCounts
                && a.categoryCounts.map(\.id) == b.categoryCounts.map(\.id) && a.categoryCounts.map(\.count) == b.categoryCounts.map(\.count)
        }
    }

    /// The sets of one search word: where it matches (with its typo alternatives) anywhere, in a
    /// title, in a title or author; where it matches without a typo; where it is a whole word.
    struct WordSets {
        var any: Bitset, title: Bitset, titleOrAuthor: Bitset, exact: Bitset, whole: Bitset
    }

    func wordSets(_ word: String) -> WordSets {
        let words = active.words.count
        // any, title, title or author, exact: one buffer the lexemes OR into.
        var buffer = [UInt64](repeating: 0, count: 4 * words)
        buffer.withUnsafeMutableBufferPointer { sets in
            scan(prefix: Array(word.utf8), into: sets, words: words, exact: true)
            for alternative in typos.alternatives(for: word) {
                scan(prefix: Array(alternative.utf8), into: sets, words: words, exact: false)
            }
        }
        let whole = lexemeID(word).map { lexemes[Int($0)].all(capacity: active.capacity) } ?? Bitset()
        return WordSets(any: Bitset(words: Array(buffer[0..<words])), title: Bitset(words: Array(buffer[words..<2 * words])),
                        titleOrAuthor: Bitset(words: Array(buffer[2 * words..<3 * words])),
                        exact: Bitset(words: Array(buffer[3 * words..<4 * words])), whole: whole)
    }

    /// ORs in every lexeme starting with `prefix` (one range of the sorted lexemes).
    private func scan(prefix: [UInt8], into sets: UnsafeMutableBufferPointer<UInt64>, words: Int, exact: Bool) {
        var a = 0, b = sortedLexemes.count
        while a < b {
            let m = (a + b) / 2
            if lexemeBytes[Int(sortedLexemes[m])].lexicographicallyPrecedes(prefix) { a = m + 1 } else { b = m }
        }
        var i = a
        while i < sortedLexemes.count {
            let lexeme = Int(sortedLexemes[i])
            guard lexemeBytes[lexeme].starts(with: prefix) else { break }
            lexemes[lexeme].accumulate(into: sets, words: words, exact: exact)
            i += 1
        }
    }

    public func answer(_ parameters: CatalogParameters) -> Answer {
        let words = parameters.words.map(wordSets)
        var base = active
        for word in words { base.formIntersection(word.any) }
        // The filters, each also left out once for its own facet.
        var noCategory = base, noAge = base
        var categorySet: Bitset?
        if let category = parameters.category {
            if category.unicodeScalars.contains("\u{0}") { categorySet = Bitset() }
            else { categorySet = categoryID(for: category).flatMap { byCategory[$0] } ?? Bitset() }
        }
        if let publisher = parameters.publisher {
            let set = byPublisher[publisher] ?? Bitset()
            noCategory.formIntersection(set); noAge.formIntersection(set)
        }
        if let age = parameters.age { noCategory.formIntersection(byAge[age]) }
        if let categorySet { noAge.formIntersection(categorySet) }
        var matches = noAge
        if let age = parameters.age { matches.formIntersection(byAge[age]) }

        let total = matches.count
        let categoryCounts = categories.map { (id: $0.id, count: byCategory[$0.id].map(noCategory.intersectionCount) ?? 0) }
        let ageBandCounts = Self.ageBands.map { noAge.intersectionCount(byAge[$0.age]) }
        let page = parameters.page
        var ids: [Int] = []
        if page.offset < total {
            switch parameters.sort {
            case .relevance where !words.isEmpty: ids = relevancePage(matches, total: total, words: words, page: page)
            case .newest: ids = orderedPage(matches, total: total, order: newestOrder, page: page, by: lessNewest)
            default: ids = orderedPage(matches, total: total, order: titleOrder, page: page, by: lessTitle)
            }
        }
        return Answer(total: total, ids: ids, categoryCounts: categoryCounts, ageBandCounts: ageBandCounts)
    }

    /// A page in a stored order: many matches are found by walking the order; when the walk
    /// would pass many more books than there are matches, the first `end` matches are selected.
    private func orderedPage(_ matches: Bitset, total: Int, order: [Int32], page: PageRequest, by less: (Int, Int) -> Bool) -> [Int] {
        let end = min(page.offset + page.perPage, total)
        let walk = order.count / max(total, 1) * end
        if total <= 512 || walk > total * 16 {
            var best: [Int] = []   // the `end` first matches in order, sorted
            best.reserveCapacity(end + 1)
            matches.forEach { id in
                if best.count == end, let last = best.last, !less(id, last) { return true }
                var a = 0, b = best.count
                while a < b {
                    let m = (a + b) / 2
                    if less(best[m], id) { a = m + 1 } else { b = m }
                }
                best.insert(id, at: a)
                if best.count > end { best.removeLast() }
                return true
            }
            return Array(best[page.offset..<end])
        }
        var result: [Int] = []
        result.reserveCapacity(end - page.offset)
        var seen = 0
        for id in order {
            guard matches.contains(Int(id)) else { continue }
            if seen >= page.offset { result.append(Int(id)) }
            seen += 1
            if seen == end { break }
        }
        return result
    }

    /// Relevance: tier (all words in titles 4, in titles or authors 2, all without a typo 1)
    /// descending, then the number of words found as whole words descending, then id.
    ///
    /// Computed 64 books at a time with word-wise masks: one pass counts the books of every
    /// (tier, score) key, then only the keys the page falls in are walked, in id order, stopping
    /// when the page is full — no per-book sort at any size.
    private func relevancePage(_ matches: Bitset, total: Int, words: [WordSets], page: PageRequest) -> [Int] {
        let n = words.count
        let titles = words.map(\.title.words), titlesOrAuthors = words.map(\.titleOrAuthor.words)
        let exacts = words.map(\.exact.words), wholes = words.map(\.whole.words)
        // A title match is also a title-or-author match, so tiers 4 and 5 never occur.
        let tiers = [7, 6, 3, 2, 1, 0]
        var equal = [UInt64](repeating: 0, count: n + 1)
        /// Block `w`'s books of each tier (in `tiers` order) → `out`; whole-word counts → `equal`.
        func masks(_ w: Int, _ out: inout [UInt64]) {
            let m = matches.words[w]
            var t4 = m, t2 = m, t1 = m
            for i in 0..<n {
                t4 &= w < titles[i].count ? titles[i][w] : 0
                t2 &= w < titlesOrAuthors[i].count ? titlesOrAuthors[i][w] : 0
                t1 &= w < exacts[i].count ? exacts[i][w] : 0
            }
            out[0] = t4 & t1; out[1] = t4 & ~t1; out[2] = t2 & ~t4 & t1; out[3] = t2 & ~t4 & ~t1
            out[4] = ~t2 & t1 & m; out[5] = ~t2 & ~t1 & m
            for s in 1...n { equal[s] = 0 }
            equal[0] = m
            for whole in wholes {
                let h = w < whole.count ? whole[w] : 0
                var s = n
                while s > 0 { equal[s] = (equal[s] & ~h) | (equal[s - 1] & h); s -= 1 }
                equal[0] &= ~h
            }
        }
        let blocks = matches.words.indices.filter { matches.words[$0] != 0 }
        var tierBits = [UInt64](repeating: 0, count: tiers.count)
        var counts = [Int](repeating: 0, count: tiers.count * (n + 1))   // tier index * (n + 1) + (n - score)
        for w in blocks {
            masks(w, &tierBits)
            for t in 0..<tiers.count where tierBits[t] != 0 {
                for s in 0...n { counts[t * (n + 1) + n - s] &+= (tierBits[t] & equal[s]).nonzeroBitCount }
            }
        }
        var result: [Int] = []
        result.reserveCapacity(page.perPage)
        var skip = page.offset
        for key in counts.indices where counts[key] > 0 {
            if skip >= counts[key] { skip -= counts[key]; continue }
            let t = key / (n + 1), score = n - key % (n + 1)
            for w in blocks {
                masks(w, &tierBits)
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
