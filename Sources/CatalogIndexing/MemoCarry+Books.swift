import Core

/// A search reached only through a book that may be among its matches. A search's answer reads
/// the catalog through its words' expansions (which lexemes each word reaches: the typo
/// vocabulary, the lexemes any active book holds) and through the books holding a lexeme of
/// every word. So when the lexemes coming into or leaving the catalog (`vocabulary`) reach none
/// of its words, a changed book changes it only if it may hold all of them on one side of its
/// change (before or after), is in its scope and meets its filters there (`Footprint.reaches`:
/// the publisher, and the age or the category — each facet counts without the other), and the
/// change altered a lexeme one of its words may match (a description edited elsewhere leaves
/// the book's match and rank as they were). Relevance reads no statistic of other books: a book
/// outside the matches on both sides moves nothing.
extension MemoCarry {
    /// The most changed books checked one by one: two bits each (before, after) in a `UInt64`.
    /// A larger change (a bulk import) checks every search against all its lexemes at once.
    public static let booksCheckedOneByOne = 32

    /// One side of a changed book (nil in `ChangedBook`: not in the catalog on that side).
    public struct Side: Sendable {
        let lexicon: CarryLexicon
        let footprint: Footprint
        init(lexemes: [String], footprint: Footprint) { lexicon = CarryLexicon(lexemes); self.footprint = footprint }
    }

    /// A changed book: its lexemes and filters before and after, and the lexemes the change
    /// added or removed (nil: all of them — it came, went, or its filters changed).
    public struct ChangedBook: Sendable {
        let altered: CarryLexicon?
        let before: Side?, after: Side?
        init(altered: [String]?, before: Side?, after: Side?) {
            self.altered = altered.map(CarryLexicon.init); self.before = before; self.after = after
        }
    }

    /// What one search word may reach of this change: whether it may match a lexeme coming into
    /// or leaving the catalog (its expansion may change: the answer goes — without the books one
    /// by one, whether it may match any lexeme of the change), and the changed books of which it
    /// may match a lexeme the change altered (bits 2k and 2k + 1 for book k).
    public struct WordReach: Sendable {
        public var vocabulary: Bool
        public var altered: UInt64
    }

    /// `word`'s reach (`WordReach`), `forms` its forms and stem tokens.
    public func reach(_ word: String, forms: [String]) -> WordReach {
        guard let vocabulary, let changed else { return WordReach(vocabulary: mayMatch(word, forms: forms), altered: 0) }
        // Every altered lexeme is one of the change's.
        guard mayMatch(word, forms: forms) else { return WordReach(vocabulary: false, altered: 0) }
        var altered: UInt64 = 0
        for (k, book) in changed.enumerated() where book.altered.map({ $0.mayMatch(word, forms: forms) }) ?? true { altered |= 3 << (2 * k) }
        return WordReach(vocabulary: vocabulary.mayMatch(word, forms: forms), altered: altered)
    }

    /// The sides of the changed books `word` may match (bit 2k: book k before, 2k + 1: after).
    public func sides(_ word: String, forms: [String]) -> UInt64 {
        var sides: UInt64 = 0
        for (k, book) in (changed ?? []).enumerated() {
            if let before = book.before, before.lexicon.mayMatch(word, forms: forms) { sides |= 1 << (2 * k) }
            if let after = book.after, after.lexicon.mayMatch(word, forms: forms) { sides |= 2 << (2 * k) }
        }
        return sides
    }

    /// Whether a search may have changed whose words' reaches have no `vocabulary`, and `sides`:
    /// their `altered` ORed (one word may match an altered lexeme of the book) and every word's
    /// `sides(_:forms:)` ANDed (the book may match every word on that side) — one such side in
    /// the search's scope and meeting its `filters` (nil: any) there.
    public func reaches(sides: UInt64, filters: BrowseFilters?) -> Bool {
        guard let changed else { return false }
        var bits = sides
        while bits != 0 {
            let bit = bits.trailingZeroBitCount
            bits &= bits &- 1
            guard bit / 2 < changed.count, let side = bit % 2 == 0 ? changed[bit / 2].before : changed[bit / 2].after else { continue }
            guard let filters else { return true }
            if side.footprint.reaches(filters) { return true }   // (a side is never of order alone)
        }
        return false
    }
}
