import Core

/// A kept browse patched through a change instead of dropped: a book that came, went or moved
/// between categories or ages changes a browse's total and facets by one each, and its page only
/// when the book is, or comes, at or before the page's end. Every take-down and category change
/// reached the browses of its ages or categories in every scope — a child's tablet, asking each
/// of its five scopes' browses a fifth as often as a parent does, computed most of them again.
extension MemoCarry {
    /// What a kept browse needs besides its filters to be patched (`CatalogIndex.browseCounting`):
    /// the scope it is asked in, its order, its page's size and the page's last book's place.
    public struct BrowseCounting: Sendable {
        let scope: CatalogScope?
        let newest: Bool
        let perPage: Int
        let last: CountedBook.OrderKey?
        public init(scope: CatalogScope?, newest: Bool, perPage: Int, last: CountedBook.OrderKey?) {
            self.scope = scope; self.newest = newest; self.perPage = perPage; self.last = last
        }
    }

    /// The changed books on both sides of the change, and the index's categories after it:
    /// filled in once the change is applied (`CatalogIndex.counting(_:)`); nil: no browse is patched.
    public struct CountedChange: Sendable {
        let books: [(before: CountedBook, after: CountedBook)]
        let categories: [Int]
    }

    /// The browse `answer` (with `filters` and `counting`) after this change, its counts moved
    /// by the changed books' ±1 — nil when it cannot be patched (a scheduled book, no counted
    /// sides, the categories changed, or its page may show another book).
    public func patched(_ answer: CatalogIndex.Answer, filters: BrowseFilters, counting: BrowseCounting) -> CatalogIndex.Answer? {
        guard let counted, answer.categoryCounts.count == counted.categories.count,
              zip(answer.categoryCounts, counted.categories).allSatisfy({ $0.id == $1 }) else { return nil }
        var out = answer
        // (Whether the page's last book is one of the changed: worked out once, not per book.)
        let lastChanged = counting.last.map { last in counted.books.contains { $0.before.id == last.id } } ?? true
        for (before, after) in counted.books {
            let was = before.reading(filters, scope: counting.scope), now = after.reading(filters, scope: counting.scope)
            let matched = was.counted && was.age && was.category, matches = now.counted && now.age && now.category
            // The page: the same unless the book comes, goes or moves at or before its end.
            if matched || matches, !(matched && matches && before.order == after.order) {
                guard out.ids.count == counting.perPage, let last = counting.last, last.id == out.ids.last, !lastChanged,
                      !(matched && before.order.precedes(last, newest: counting.newest)),
                      !(matches && after.order.precedes(last, newest: counting.newest)) else { return nil }
            }
            out.total += (matches ? 1 : 0) - (matched ? 1 : 0)
            // The category counts read the books meeting all but the category; the age bands' all but the age.
            for i in out.categoryCounts.indices {
                let id = out.categoryCounts[i].id
                out.categoryCounts[i].count += (now.counted && now.age && after.categories.contains(id) ? 1 : 0)
                    - (was.counted && was.age && before.categories.contains(id) ? 1 : 0)
            }
            for (i, band) in CatalogIndex.ageBands.enumerated() {
                out.ageBandCounts[i] += (now.counted && now.category && after.ages & (1 << UInt32(band.age)) != 0 ? 1 : 0)
                    - (was.counted && was.category && before.ages & (1 << UInt32(band.age)) != 0 ? 1 : 0)
            }
        }
        return out
    }
}

extension CatalogIndex {
    /// `carry` (made before the change) with its changed books read again now that the change
    /// is applied: browses it reaches can then be patched (`MemoCarry.patched`).
    public func counting(_ carry: MemoCarry) -> MemoCarry {
        var carry = carry
        guard let before = carry.countedBefore else { return carry }
        var books: [(before: CountedBook, after: CountedBook)] = []
        for side in before {
            guard let after = counted(side.id) else { return carry }
            books.append((side, after))
        }
        carry.counted = MemoCarry.CountedChange(books: books, categories: categories.map(\.id))
        return carry
    }

    /// The changed books as they are before the change (`CatalogIndex.carry`); nil when one is scheduled.
    func countedBefore(_ ids: [Int]) -> [CountedBook]? {
        var sides: [CountedBook] = []
        for id in Set(ids) {
            guard let side = counted(id) else { return nil }
            sides.append(side)
        }
        return sides
    }
}
