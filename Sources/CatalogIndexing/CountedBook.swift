import Core

/// A book as a browse's counts and page read it, on one side of a change (`MemoCarry.patched`):
/// whether it is active, the ages, categories and publishers whose sets hold it, what a scope
/// reads of it, its territory rules, and its place in the two orders — read from the index's own
/// sets, so a browse patched by it agrees with one computed from them.
public struct CountedBook: Sendable {
    /// A book's place in the title and newest orders (`CatalogIndex.lessTitle`, `lessNewest`).
    public struct OrderKey: Sendable, Equatable {
        let id: Int
        let created: Int64
        let title: [UInt8]

        /// Whether `self` comes before `other` in the newest order (`newest`) or the title order.
        func precedes(_ other: OrderKey, newest: Bool) -> Bool {
            if newest { return created != other.created ? created > other.created : id > other.id }
            for (x, y) in zip(title, other.title) where x != y { return x < y }
            return title.count != other.title.count ? title.count < other.title.count : id < other.id
        }
    }

    let id: Int
    let active: Bool
    /// Bit `a` set: the book is in `byAge[a]` (0...18).
    let ages: UInt32
    /// The categories and publishers whose sets hold it (scopes block by those sets too).
    let categories: [Int]
    let publishers: [Int]
    /// Its rights windows' territory rules (none: in every country's catalog).
    let rules: [TerritoryRule]
    let order: OrderKey

    /// Whether the book is in the books a browse in `scope` starts from (`CatalogIndex.books(in:offline:)`;
    /// nil: the whole catalog) — as `visible(_:)` reads the sets.
    func inBase(_ scope: CatalogScope?) -> Bool {
        guard active else { return false }
        guard let scope else { return true }
        if let country = scope.country, !rules.isEmpty, !rules.contains(where: { $0.applies(to: country) }) { return false }
        if let maxAge = scope.maxAge, maxAge < 18, ages & ((1 << UInt32(max(0, maxAge) + 1)) - 1) == 0 { return false }
        if scope.allowed != nil { return false }   // never kept (`CatalogScope.memoKey`)
        if scope.blockedCategories.contains(where: categories.contains) || scope.blockedPublishers.contains(where: publishers.contains) { return false }
        return !scope.blockedBooks.contains(id)
    }

    /// What a browse with `filters` in `scope` counts of the book: whether it is among its books
    /// and publisher, and meets its age and its category (each left out once for its facet).
    func reading(_ filters: MemoCarry.BrowseFilters, scope: CatalogScope?) -> (counted: Bool, age: Bool, category: Bool) {
        let counted = inBase(scope) && (filters.publisher.map(publishers.contains) ?? true)
        return (counted, filters.age.map { $0 >= 0 && $0 <= 18 && ages & (1 << UInt32($0)) != 0 } ?? true, filters.category.map(categories.contains) ?? true)
    }
}

extension CatalogIndex {
    /// `id` as the index holds it now (inactive when it holds no such book); nil when it is
    /// scheduled (a browse's books then depend on the moment: not patched).
    func counted(_ id: Int) -> CountedBook? {
        guard schedule[id] == nil else { return nil }
        guard active.contains(id), id < ageMin.count else {
            return CountedBook(id: id, active: false, ages: 0, categories: [], publishers: [], rules: [],
                               order: .init(id: id, created: 0, title: []))
        }
        var ages: UInt32 = 0
        for age in 0...18 where byAge[age].contains(id) { ages |= 1 << UInt32(age) }
        // The sets holding it, found from the ids it keeps in 32 bits when every id of the sets
        // fits in them (each then names one set); else every set is asked (two ids 2³² apart
        // read back the same: found by an outside review).
        func holding(_ sets: [Int: Bitset], _ kept: [Int]) -> [Int] {
            guard sets.keys.allSatisfy({ Int32(exactly: $0) != nil }) else { return sets.compactMap { $0.value.contains(id) ? $0.key : nil } }
            return Array(Set(kept.filter { sets[$0]?.contains(id) ?? false }))
        }
        let windows = rights[id]
        return CountedBook(id: id, active: true, ages: ages,
                           categories: holding(byCategory, bookCategories[id].map(Int.init)),
                           publishers: holding(byPublisher, [Int(publisher[id])]),
                           rules: stride(from: windows.startIndex + 2, to: windows.endIndex, by: 3).map { territoryRules[Int(windows[$0])] },
                           order: orderKey(of: id))
    }

    /// `id`'s place in the orders (`CountedBook.OrderKey`).
    public func orderKey(of id: Int) -> CountedBook.OrderKey {
        CountedBook.OrderKey(id: id, created: createdAt[id], title: Array(titleKeys[id]))
    }

    /// What a kept browse to `parameters` in `scope` with `answer` needs to be patched through
    /// a change instead of computed again (`MemoCarry.patched`).
    public func browseCounting(_ parameters: CatalogParameters, scope: CatalogScope?, _ answer: Answer) -> MemoCarry.BrowseCounting? {
        guard parameters.words.isEmpty else { return nil }
        return MemoCarry.BrowseCounting(scope: scope, newest: parameters.sort == .newest, perPage: parameters.page.perPage,
                                        last: answer.ids.last.map(orderKey(of:)))
    }
}
