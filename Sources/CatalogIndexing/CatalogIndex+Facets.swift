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
        // Where each category's count goes, by id (one without a set counts none, as its pass
        // would): a table when the ids are small, as they are (a dictionary lookup per book cost more).
        let listed = categories.enumerated().filter { byCategory[$0.element.id] != nil }
        let table = (listed.map(\.element.id).max() ?? 0) < 1 << 16 && listed.allSatisfy { $0.element.id >= 0 }
        var byID = [Int](repeating: -1, count: table ? (listed.map(\.element.id).max() ?? 0) + 1 : 0)
        var place: [Int32: Int] = [:]
        for (i, category) in listed { if table { byID[category.id] = i } else { place[Int32(category.id)] = i } }
        var categoryCounts = [Int](repeating: 0, count: categories.count)
        bookCategories.storage.withUnsafeBufferPointer { stored in
            byID.withUnsafeBufferPointer { byID in
                noCategory.forEach { id in
                    let range = bookCategories.range(id)
                    for at in range {
                        let category = stored[at]
                        let i = table ? (category >= 0 && Int(category) < byID.count ? byID[Int(category)] : -1) : place[category] ?? -1
                        // A category listed twice counts once (the set holds the book once).
                        guard i >= 0, !stored[range.lowerBound..<at].contains(category) else { continue }
                        categoryCounts[i] += 1
                    }
                    return true
                }
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
