import Core

/// A list answer's facets counted by its books when they are few: each matched book's categories
/// and ages read where the index keeps them, instead of a popcount per category and age band over
/// every word of the id range. A search at a million books spreads a few thousand matches over
/// all 15,625 words: 35 such passes were most of its answer.
extension CatalogIndex {
    /// The category counts (in `categories`' order) of `noCategory` and the age bands' of `noAge`
    /// (each: the matches without that filter), read book by book — nil when a pass per category
    /// and band over the id range costs less, or when a category id passes 32 bits (a book keeps
    /// its categories in 32: the sets decide).
    func facetsByBooks(_ noCategory: Bitset, _ noAge: Bitset) -> (categories: [Int], ages: [Int])? {
        // A book read costs about as much as 24 words' popcount (its categories' place, five ages).
        let budget = (categories.count + Self.ageBands.count) * noCategory.words.count / 24
        let categoryBooks = noCategory.count
        guard categoryBooks <= budget else { return nil }
        let ageBooks = noAge.words == noCategory.words ? categoryBooks : noAge.count
        guard categoryBooks + ageBooks <= budget else { return nil }
        guard byCategory.keys.allSatisfy({ Int32(exactly: $0) != nil }) else { return nil }
        // Where each category's count goes (one without a set counts none, as its pass would).
        var place: [Int32: Int] = [:]
        place.reserveCapacity(categories.count)
        for (i, category) in categories.enumerated() where byCategory[category.id] != nil { place[Int32(category.id)] = i }
        var categoryCounts = [Int](repeating: 0, count: categories.count)
        bookCategories.storage.withUnsafeBufferPointer { stored in
            noCategory.forEach { id in
                let range = bookCategories.range(id)
                for at in range {
                    // A category listed twice counts once (the set holds the book once).
                    guard let i = place[stored[at]], !stored[range.lowerBound..<at].contains(stored[at]) else { continue }
                    categoryCounts[i] += 1
                }
                return true
            }
        }
        var ageCounts = [Int](repeating: 0, count: Self.ageBands.count)
        let bands = Self.ageBands.map { byAge[$0.age] }
        noAge.forEach { id in
            for (i, band) in bands.enumerated() where band.contains(id) { ageCounts[i] += 1 }
            return true
        }
        return (categoryCounts, ageCounts)
    }
}
