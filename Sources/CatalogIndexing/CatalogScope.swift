import Core
/// What a child's family controls leave of the catalog: books no older than `maxAge` (by their
/// age_min), only `allowed` ones when approved-only (the child's library), none of the blocked
/// books, publishers or categories. Applied to the matches before counts, facets and pages, so
/// a scoped answer is exact in all three.
public struct CatalogScope: Sendable, Equatable {
    public var maxAge: Int?
    /// approved_only: the book ids the child may see (their library); nil = no such limit.
    public var allowed: [Int]?
    public var blockedCategories: [Int]
    public var blockedPublishers: [Int]
    public var blockedBooks: [Int]
    /// The caller's country: books licensed only elsewhere are not in its catalog (nil: any).
    public var country: String?
    /// The locales the family reads in, in order (docs/localization.md); never narrows the catalog.
    public var locales: [String] = []

    public init(maxAge: Int? = nil, allowed: [Int]? = nil, blockedCategories: [Int] = [], blockedPublishers: [Int] = [], blockedBooks: [Int] = [],
                country: String? = nil) {
        self.country = country
        self.maxAge = maxAge
        self.allowed = allowed
        self.blockedCategories = blockedCategories
        self.blockedPublishers = blockedPublishers
        self.blockedBooks = blockedBooks
    }

    /// Names the scope among kept answers (every control and the country); nil for an
    /// approved-only scope — a child's own library, one of its kind, not worth keeping.
    public var memoKey: String? {
        guard allowed == nil else { return nil }
        // (In one byte buffer: it is read for every scoped page, twice.)
        var key: [UInt8] = []
        key.reserveCapacity(24 + 8 * (blockedCategories.count + blockedPublishers.count + blockedBooks.count))
        func add(_ text: String) { key.append(contentsOf: text.utf8) }
        func list(_ ids: [Int]) {
            for (i, id) in (ids.count > 1 ? ids.sorted() : ids).enumerated() {
                if i > 0 { key.append(UInt8(ascii: ",")) }
                add(String(id))
            }
        }
        add("\u{2}a"); add(String(maxAge ?? 18))
        add("c"); list(blockedCategories)
        add("p"); list(blockedPublishers)
        add("b"); list(blockedBooks)
        add("k"); add(country ?? "")
        return String(decoding: key, as: UTF8.self)
    }

    /// No family control narrows the catalog (the country may, depending on the rights).
    public var isEmpty: Bool {
        (maxAge ?? 18) >= 18 && allowed == nil && blockedCategories.isEmpty && blockedPublishers.isEmpty && blockedBooks.isEmpty
    }
}

extension CatalogIndex {
    /// Whether `scope` leaves out any book: a family control, or a country some books are not
    /// licensed in.
    public func narrows(_ scope: CatalogScope) -> Bool {
        !scope.isEmpty || unlicensed(in: scope.country) != nil
    }

    /// The books of `scope` among all indexed ones (a set to intersect with).
    func visible(_ scope: CatalogScope) -> Bitset {
        var set = active
        if let unlicensed = unlicensed(in: scope.country) { set.subtract(unlicensed) }
        if let maxAge = scope.maxAge, maxAge < 18 {
            // age_min ≤ maxAge ⇔ the book covers some age in 0...maxAge (age_min ≤ age_max).
            var young = Bitset(capacity: active.capacity)
            for age in 0...max(0, maxAge) { young.formUnion(byAge[age]) }
            set.formIntersection(young)
        }
        if let allowed = scope.allowed {
            var only = Bitset(capacity: active.capacity)
            for id in allowed where id >= 0 && id < active.capacity { only.insert(id) }
            set.formIntersection(only)
        }
        for category in scope.blockedCategories { if let blocked = byCategory[category] { set.subtract(blocked) } }
        for publisher in scope.blockedPublishers { if let blocked = byPublisher[publisher] { set.subtract(blocked) } }
        for id in scope.blockedBooks { set.remove(id) }
        return set
    }

    /// Scheduled books out of the catalog at `now`, the last schedule instant passed at or before
    /// it (Int64.min: none) and the next instant that changes (Int64.max: none ahead). The set
    /// is the same at every instant from `since` until `until`. Nil set: every active book is live.
    public func offline(at now: Int64) -> (books: Bitset?, since: Int64, until: Int64) {
        var out = Bitset(capacity: 0), last = Int64.min, next = Int64.max, any = false
        for (id, window) in schedule {
            if now < window.from { out.insert(id); any = true; next = min(next, window.from); continue }
            last = max(last, window.from)
            if now >= window.until { out.insert(id); any = true; last = max(last, window.until) }
            else if window.until != Int64.max { next = min(next, window.until) }
        }
        return (any ? out : nil, last, next)
    }

    /// Whether an active book is live at `now` (its schedule allows it).
    public func isLive(_ id: Int, at now: Int64) -> Bool {
        guard let window = schedule[id] else { return true }
        return window.from <= now && now < window.until
    }

    /// Whether `id` is an active book `scope` leaves visible.
    public func isVisible(_ id: Int, in scope: CatalogScope) -> Bool {
        guard active.contains(id), isLicensed(id, in: scope.country) else { return false }
        if scope.isEmpty { return true }
        if let maxAge = scope.maxAge, Int(ageMin[id]) > maxAge { return false }
        if let allowed = scope.allowed, !allowed.contains(id) { return false }
        if scope.blockedBooks.contains(id) || scope.blockedPublishers.contains(Int(publisher[id])) { return false }
        return !scope.blockedCategories.contains { byCategory[$0]?.contains(id) ?? false }
    }
}
