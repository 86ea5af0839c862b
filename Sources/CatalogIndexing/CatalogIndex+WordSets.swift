import Core

/// The sets of a search's words, built once per answer (`answer(_:expansions:within:)`) and read
/// by the relevance order — only where the answer can be: first the books holding every word
/// (one catalog-wide set per word), then the finer sets over the blocks of 64 books those leave.
extension CatalogIndex {
    /// The books of `base` holding every search word, and what the relevance order reads of
    /// each word: six sets over any run of `blocks` (`fineSets`, `width` 64-bit words each, the
    /// k-th word standing for books `blocks[k] * 64 ..< +64`): where the word matches (with all
    /// its alternatives) in a title, in a title or author; at level 1 or better (no
    /// sound-alike), 2 or better (no typo), 3 (the word itself); and as a whole word.
    struct WordSets {
        enum Kind: Int, CaseIterable { case title, titleOrAuthor, level1, level2, level3, whole }
        /// Search words.
        let count: Int
        /// `base` ∩ every word's matches (in any field).
        let matched: Bitset
        /// The blocks (indices of `matched`'s 64-bit words) holding its members, ascending.
        let blocks: [Int]
        /// Each word's lexemes.
        var words: [WordLexemes] = []
        /// Where common words' catalog-wide sets are kept (`narrowed`).
        var cache: WordSetCache.Reader?
        /// How many words have a whole-word set (the word itself is a lexeme): no book is found
        /// as a whole word by more of them.
        var wholeWords: Int { words.count(where: { $0.whole != nil }) }

        /// Where word `word`'s set `kind` starts in a `fineSets` buffer of `width` words per set.
        static func offset(_ word: Int, _ kind: Kind, width: Int) -> Int { (word * Kind.allCases.count + kind.rawValue) * width }
    }

    /// The lexemes one search word matches, each once with the best level it is reached at
    /// (a prefix and a typo often reach the same lexeme), and the word itself as a lexeme.
    struct WordLexemes {
        var lexemes: [(id: Int, level: Int)] = []
        var whole: Int?
    }

    /// Each expansion's lexemes: its alternatives looked up (a prefix: every lexeme it starts).
    func wordLexemes(_ expansions: [SearchExpansion]) -> [WordLexemes] {
        expansions.map { expansion in
            // Every (lexeme, level) reached, then sorted and each lexeme kept once at its best
            // level (a short prefix reaches hundreds: no dictionary per word).
            var reached: [(id: Int, level: Int)] = []
            for alternative in expansion.alternatives {
                if alternative.prefix {
                    forEachLexeme(startingWith: Array(alternative.text.utf8)) { reached.append((id: $0, level: alternative.level)) }
                } else if let lexeme = lexemeID(alternative.text) {
                    reached.append((id: Int(lexeme), level: alternative.level))
                }
            }
            reached.sort { $0.id != $1.id ? $0.id < $1.id : $0.level > $1.level }
            var lexemes: [(id: Int, level: Int)] = []
            lexemes.reserveCapacity(reached.count)
            for lexeme in reached where lexemes.last?.id != lexeme.id { lexemes.append(lexeme) }
            return WordLexemes(lexemes: lexemes, whole: lexemeID(expansion.word).map(Int.init))
        }
    }

    /// The books of `base` holding every word of `expansions` (each with any of its alternatives,
    /// in any field). One catalog-wide set per word, ANDed in.
    func matching(_ expansions: [SearchExpansion], within base: Bitset) -> Bitset {
        matching(wordLexemes(expansions), within: base)
    }

    /// A common word's set comes from `cache` (made there the first time) only when it is
    /// reached: a word after the rarest ones left no book is neither read nor kept. `fields`:
    /// where a word counts (`CatalogBook.title` …; all three: anywhere); `tier`: its kept sets
    /// are a relevance tier's (`narrowedPage`), kept in the cache's `tiers`. `occupied`: blocks
    /// holding every member of `base`, ascending, when the caller knows them (`followed`).
    func matching(_ words: [WordLexemes], cache: WordSetCache.Reader? = nil, within base: Bitset, occupied: [Int]? = nil,
                  fields: UInt8 = 7, tier: Bool = false) -> Bitset {
        followed(words, cache: cache, within: base, occupied: occupied, fields: fields, tier: tier).set
    }

    /// `matching`, and the blocks (64-bit words of the id range) holding its members, ascending,
    /// when they were followed (nil: not known). Once few blocks are left (the rarest word's books
    /// read from its lists, `seed`, or `occupied` given), each further word is read over those
    /// blocks only (`narrow`): no pass over the whole catalog per word.
    func followed(_ words: [WordLexemes], cache: WordSetCache.Reader? = nil, within base: Bitset, occupied: [Int]? = nil,
                  fields: UInt8 = 7, tier: Bool = false) -> (set: Bitset, blocks: [Int]?) {
        var matched = base
        guard !words.isEmpty else { return (matched, nil) }
        var any: [UInt64] = []
        // The rarest word first (fewest books over its lexemes), and no further once no book is
        // left: a search that finds nothing often stops before its common words are read.
        // (The sizes first: a closure reading `self` in the sort copied the whole index each time.)
        var sizes = [Int](repeating: 0, count: words.count)
        for i in words.indices { sizes[i] = books(words[i]) }
        let order = words.indices.sorted { sizes[$0] < sizes[$1] }
        var blocks = occupied
        for (step, i) in order.enumerated() {
            let entry = cache.flatMap { keptSets(words[i], $0, fields: fields, tier: tier) }
            if let known = blocks, known.count * Self.fewBlocks <= base.words.count {
                blocks = narrow(&matched, to: known, words[i], entry, fields: fields, fresh: step == 0)
            } else if step == 0, blocks == nil, entry == nil, let seeded = seed(words[i], within: base, fields: fields) {
                (matched, blocks) = seeded
            } else if let entry {
                // The first step makes the set anew (`base` is shared: ANDed in place, it was copied first).
                if step == 0 { matched = base.intersection(entry.any) } else { matched.formIntersection(entry.any) }
                blocks = nil   // (many: found again from the set when needed, in one pass)
            } else {
                blocks = nil
                if any.isEmpty { any = [UInt64](repeating: 0, count: active.words.count) }
                else { any.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
                any.withUnsafeMutableBufferPointer { buffer in
                    for lexeme in words[i].lexemes { lexemes[lexeme.id].accumulateAll(into: buffer, fields: fields) }
                }
                any.withUnsafeBufferPointer { if step == 0 { matched = base.intersection($0) } else { matched.formIntersection($0) } }
            }
            if step + 1 < order.count && (blocks?.isEmpty ?? matched.isEmpty) { break }
        }
        return (matched, blocks)
    }

    /// An upper bound of the books holding `word`: its lexemes' counts added up.
    func books(_ word: WordLexemes) -> Int { word.lexemes.reduce(0) { $0 + lexemes[$1.id].count } }

    /// The words' sets (`WordSets`) for `expansions` within `base`: each word's alternatives ORed
    /// from the lexemes' book lists (a prefix from every lexeme it starts) into one catalog-wide
    /// set, ANDed — the books holding every word. A common word's set comes from `cache`
    /// (`WordSetCache`), kept there the first time.
    func wordSets(_ expansions: [SearchExpansion], within base: Bitset, cache: WordSetCache.Reader? = nil) -> WordSets {
        let words = wordLexemes(expansions)
        let (matched, followed) = followed(words, cache: cache, within: base)
        let blocks = words.isEmpty ? [] : followed ?? matched.occupiedWords(atMost: .max) ?? []
        return WordSets(count: words.count, matched: matched, blocks: blocks, words: words, cache: cache)
    }

    /// The six sets of every word over `sets.blocks[range]` (`WordSets.offset` with
    /// `range.count` words per set), and the whole word — read only over the ids those blocks
    /// span, so a page found in the first blocks does not read the rest.
    func fineSets(_ sets: WordSets, _ range: Range<Int>) -> [UInt64] {
        let kinds = WordSets.Kind.allCases.count, width = range.count
        var storage = [UInt64](repeating: 0, count: sets.count * kinds * width)
        guard width > 0 else { return storage }
        let first = sets.blocks[range.lowerBound]
        // The compact position of each block of the span (-1: not one of the range's).
        var slots = [Int32](repeating: -1, count: sets.blocks[range.upperBound - 1] - first + 1)
        for (k, w) in sets.blocks[range].enumerated() { slots[w - first] = Int32(k) }
        sets.blocks.withUnsafeBufferPointer { all in
            let blocks = UnsafeBufferPointer(rebasing: all[range])
            slots.withUnsafeBufferPointer { slots in
                storage.withUnsafeMutableBufferPointer { buffer in
                    for (i, word) in sets.words.enumerated() {
                        let start = WordSets.offset(i, .title, width: width), six = UnsafeMutableBufferPointer(rebasing: buffer[start..<start + kinds * width])
                        fill(word, into: six, blocks: LexemeBooks.Blocks(indices: blocks, slots: slots, first: first))
                    }
                }
            }
        }
        return storage
    }

    /// A word's six sets over `blocks`, in `WordSets.Kind` order: title, title or author and the
    /// three levels from its lexemes, then the word itself as a whole word.
    private func fill(_ word: WordLexemes, into six: UnsafeMutableBufferPointer<UInt64>, blocks: LexemeBooks.Blocks) {
        let width = blocks.indices.count
        let five = UnsafeMutableBufferPointer(rebasing: six[0..<5 * width])
        for lexeme in word.lexemes { lexemes[lexeme.id].accumulate(into: five, blocks: blocks, levels: lexeme.level) }
        if let lexeme = word.whole {
            lexemes[lexeme].accumulateAll(into: UnsafeMutableBufferPointer(rebasing: six[5 * width..<6 * width]), blocks: blocks)
        }
    }

    /// A common word's catalog-wide set (where it is in any field, or in `fields`) from `cache`
    /// (a relevance tier's: from its `tiers`), made and kept there when absent; nil for a rare word.
    func keptSets(_ word: WordLexemes, _ cache: WordSetCache.Reader, fields: UInt8 = 7, tier: Bool = false) -> WordSetCache.Entry? {
        guard books(word) >= WordSetCache.threshold(capacity: active.capacity) else { return nil }
        let key = WordSetCache.Key(lexemes: word.lexemes.map(\.id), fields: fields)
        let store = tier ? cache.cache.tiers ?? cache.cache : cache.cache   // (a relevance tier's sets kept apart)
        if let entry = store.entry(key, version: cache.version) { return entry }
        var any = [UInt64](repeating: 0, count: active.words.count)
        any.withUnsafeMutableBufferPointer { buffer in
            for lexeme in word.lexemes { lexemes[lexeme.id].accumulateAll(into: buffer, fields: fields) }
        }
        let entry = WordSetCache.Entry(any: Bitset(words: any))
        store.keep(entry, key, version: cache.version)
        return entry
    }

    /// Calls `body` with every lexeme starting with `prefix` (one range of the sorted lexemes).
    func forEachLexeme(startingWith prefix: [UInt8], _ body: (Int) -> Void) {
        var a = 0, b = sortedLexemes.count
        while a < b {
            let m = (a + b) / 2
            if lexemeBytes[Int(sortedLexemes[m])].lexicographicallyPrecedes(prefix) { a = m + 1 } else { b = m }
        }
        var i = a
        while i < sortedLexemes.count {
            let lexeme = Int(sortedLexemes[i])
            guard lexemeBytes[lexeme].starts(with: prefix) else { break }
            body(lexeme)
            i += 1
        }
    }
}
