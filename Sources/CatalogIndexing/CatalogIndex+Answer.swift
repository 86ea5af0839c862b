import Core
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

    /// `offline`: scheduled books not live now (`offline(at:)`), left out.
    public func answer(_ parameters: CatalogParameters, scope: CatalogScope? = nil, offline: Bitset? = nil, synonyms: Synonyms = Synonyms()) -> Answer {
        answer(parameters, expansions: expansions(parameters.words, synonyms: synonyms), scope: scope, offline: offline)
    }

    public func answer(_ parameters: CatalogParameters, expansions: [SearchExpansion], scope: CatalogScope? = nil, offline: Bitset? = nil,
                       cache: WordSetCache.Reader? = nil) -> Answer {
        answer(parameters, expansions: expansions, within: books(in: scope, offline: offline), cache: cache)
    }

    /// The books an answer starts from: the active ones `scope` leaves visible, without `offline`
    /// (a set a caller may keep per scope and index state: `answer(_:expansions:within:)`).
    public func books(in scope: CatalogScope?, offline: Bitset?) -> Bitset {
        var base = scope.map { narrows($0) ? visible($0) : active } ?? active
        if let offline { base.subtract(offline) }
        return base
    }

    /// The answer among `base` (`books(in:offline:)`); common words' sets from `cache` (`WordSetCache`).
    public func answer(_ parameters: CatalogParameters, expansions: [SearchExpansion], within base: Bitset, cache: WordSetCache.Reader? = nil) -> Answer {
        let sets = wordSets(expansions, within: base, cache: cache)
        let base = sets.matched
        // The filters, each also left out once for its own facet.
        var noCategory = base, noAge = base
        var categorySet: Bitset?
        if let category = parameters.category {
            if category.unicodeScalars.contains("\u{0}") { categorySet = Bitset() }
            else { categorySet = categoryID(for: category).flatMap { byCategory[$0] } ?? Bitset() }
        }
        // (Each made anew in one pass: ANDed in place, a set shared with `base` was copied first.)
        if let publisher = parameters.publisher {
            noCategory = base.intersection(byPublisher[publisher] ?? Bitset()); noAge = noCategory
        }
        if let age = parameters.age { noCategory = noCategory.intersection(byAge[age]) }
        if let categorySet { noAge = noAge.intersection(categorySet) }
        let matches = parameters.age.map { noAge.intersection(byAge[$0]) } ?? noAge

        // A search's matches are usually few: its counts read only the words holding them (their
        // rows asked for ahead, `FacetTable.ahead`), up to two fifths of the catalog's — from
        // memory a pass over every word costs as much there, cached it costs more at every share up to 60 %
        // (docs/performance.md, round 20).
        let occupied = sets.count > 0 && sets.blocks.count * 5 <= base.words.count * 2 ? sets.blocks : nil
        // Each filtered set counted against every facet in one pass over the facet table, its own
        // size with them (the total, without an age filter: then `matches` is `noAge`).
        let counts = facets.counts(noAge, at: occupied)   // (the age bands' columns come first)
        let withoutCategory = parameters.category == nil && parameters.age == nil ? counts : facets.counts(noCategory, at: occupied)
        let categoryCounts = categories.map { (id: $0.id, count: facets.categoryColumns[$0.id].map { withoutCategory[$0] } ?? 0) }
        let ageBandCounts = Array(counts[0..<Self.ageBands.count])
        let total = parameters.age == nil ? counts[counts.count - 1] : occupied.map { matches.intersectionCount(matches, at: $0) } ?? matches.count
        let page = parameters.page
        var ids: [Int] = []
        if page.offset < total {
            switch parameters.sort {
            case .relevance where sets.count > 0: ids = relevancePage(matches, sets: sets, page: page)
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
}
