import Core

/// A search's words matched over the blocks its rarest word leaves (`followed`): the rarest
/// word's books are read from its lexemes' lists into the result (`seed`), and each further word
/// only over the blocks still holding books (`narrow`). Before, each word was ORed into a set
/// as large as the catalog and ANDed in over the whole of it, then the result was read through
/// for its blocks: passes over the catalog's size per word, for a few hundred books at a million.
extension CatalogIndex {
    /// Past one block in this many, a word is ANDed in over the whole catalog (`followed`): a
    /// pass reads every word in line, a block followed costs a lookup of its own.
    static let fewBlocks = 4

    /// The books of `word` (in one of `fields`) that `base` holds, read from its lexemes' lists,
    /// and the blocks they fall in, ascending; nil when a lexeme is a dense set or the lists
    /// hold more than two books a block (a short prefix's hundreds of lexemes): then ORed in
    /// line, a pass costs less than a test per book.
    func seed(_ word: WordLexemes, within base: Bitset, fields: UInt8) -> (set: Bitset, blocks: [Int])? {
        let n = base.words.count
        guard books(word) <= 2 * n, word.lexemes.allSatisfy({ lexemes[$0.id].dense == nil }) else { return nil }
        var out = [UInt64](repeating: 0, count: n)
        // Bit w: block w holds a book (its members are the blocks in order: no sort of the blocks met).
        var summary = [UInt64](repeating: 0, count: (n + 63) >> 6)
        base.words.withUnsafeBufferPointer { base in
            out.withUnsafeMutableBufferPointer { out in
                summary.withUnsafeMutableBufferPointer { summary in
                    for lexeme in word.lexemes { lexemes[lexeme.id].orListed(within: base, into: out, summary: summary, fields: fields) }
                }
            }
        }
        return (Bitset(words: out), Bitset(words: summary).members)
    }

    /// `matched` ∩ `word`'s books (in one of `fields`; from `entry` when a common word's set is
    /// kept), read over `known` only — `matched` holds no book elsewhere. `fresh`: `matched` is
    /// the shared base, made anew rather than written. The blocks left holding books, ascending.
    func narrow(_ matched: inout Bitset, to known: [Int], _ word: WordLexemes, _ entry: WordSetCache.Entry?,
                fields: UInt8, fresh: Bool) -> [Int] {
        guard let first = known.first, let last = known.last else {
            if fresh { matched = Bitset(capacity: matched.capacity) }
            return []
        }
        // The word's books at each known block (`compact[k]`: block `known[k]`).
        var compact = [UInt64](repeating: 0, count: known.count)
        if let entry {
            entry.any.words.withUnsafeBufferPointer { any in
                for (k, w) in known.enumerated() where w < any.count { compact[k] = any[w] }
            }
        } else {
            var slots = [Int32](repeating: -1, count: last - first + 1)
            for (k, w) in known.enumerated() { slots[w - first] = Int32(k) }
            known.withUnsafeBufferPointer { indices in
                slots.withUnsafeBufferPointer { slots in
                    compact.withUnsafeMutableBufferPointer { compact in
                        let blocks = LexemeBooks.Blocks(indices: indices, slots: slots, first: first)
                        for lexeme in word.lexemes { lexemes[lexeme.id].accumulateAll(into: compact, blocks: blocks, fields: fields) }
                    }
                }
            }
        }
        if fresh {
            let (set, left) = matched.intersection(compact, at: known)
            matched = set
            return left
        }
        return matched.formIntersection(compact, at: known)
    }
}

extension LexemeBooks {
    /// ORs the listed books in one of `fields` that `base` holds into `out` (as many words as
    /// `base`), marking each one's block in `summary` (nothing for a dense lexeme: `seed`).
    func orListed(within base: UnsafeBufferPointer<UInt64>, into out: UnsafeMutableBufferPointer<UInt64>,
                  summary: UnsafeMutableBufferPointer<UInt64>, fields: UInt8) {
        let fields = UInt32(fields & 7)
        list.withUnsafeBufferPointer { entries in
            for entry in entries where entry & fields != 0 {
                let id = Int(entry >> 3), w = id >> 6
                let bit = UInt64(1) << UInt64(id & 63)
                guard w < base.count, base[w] & bit != 0 else { continue }
                out[w] |= bit
                summary[w >> 6] |= UInt64(1) << UInt64(w & 63)
            }
        }
    }
}
