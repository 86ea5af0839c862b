import Core

/// The sets of a search's words, built once per answer (`answer(_:expansions:scope:offline:)`) and
/// read by the relevance order.
extension CatalogIndex {
    /// The sets of the search words, in one buffer: per word, seven sets of `width` 64-bit words
    /// each — where it matches (with all its alternatives) in any field, in a title, in a title
    /// or author; where it matches at level 1 or better (no sound-alike), 2 or better (no typo),
    /// 3 (the word itself); and as a whole word.
    struct WordSets {
        enum Kind: Int, CaseIterable { case any, title, titleOrAuthor, level1, level2, level3, whole }
        /// Search words.
        let count: Int
        /// 64-bit words per set.
        let width: Int
        var buffer: [UInt64]

        /// Where word `word`'s set `kind` starts in `buffer`.
        func offset(_ word: Int, _ kind: Kind) -> Int { (word * Kind.allCases.count + kind.rawValue) * width }
    }

    /// The words' sets (`WordSets`) for `expansions`: each word's alternatives ORed from the lexemes'
    /// book lists (a prefix from every lexeme it starts), and the word itself as a whole word.
    func wordSets(_ expansions: [SearchExpansion]) -> WordSets {
        let width = active.words.count, kinds = WordSets.Kind.allCases.count
        let layout = WordSets(count: expansions.count, width: width, buffer: [])
        var storage = [UInt64](repeating: 0, count: expansions.count * kinds * width)
        storage.withUnsafeMutableBufferPointer { buffer in
            for (i, expansion) in expansions.enumerated() {
                // any, title, title or author, levels 1–3: the alternatives OR into these six.
                let six = UnsafeMutableBufferPointer(rebasing: buffer[layout.offset(i, .any)..<layout.offset(i, .whole)])
                for alternative in expansion.alternatives {
                    if alternative.prefix {
                        scan(prefix: Array(alternative.text.utf8), into: six, width: width, levels: alternative.level)
                    } else if let lexeme = lexemeID(alternative.text) {
                        lexemes[Int(lexeme)].accumulate(into: six, words: width, levels: alternative.level)
                    }
                }
                if let lexeme = lexemeID(expansion.word) {
                    let whole = layout.offset(i, .whole)
                    lexemes[Int(lexeme)].accumulateAll(into: UnsafeMutableBufferPointer(rebasing: buffer[whole..<whole + width]))
                }
            }
        }
        return WordSets(count: expansions.count, width: width, buffer: storage)
    }

    /// ORs in every lexeme starting with `prefix` (one range of the sorted lexemes).
    private func scan(prefix: [UInt8], into sets: UnsafeMutableBufferPointer<UInt64>, width: Int, levels: Int) {
        var a = 0, b = sortedLexemes.count
        while a < b {
            let m = (a + b) / 2
            if lexemeBytes[Int(sortedLexemes[m])].lexicographicallyPrecedes(prefix) { a = m + 1 } else { b = m }
        }
        var i = a
        while i < sortedLexemes.count {
            let lexeme = Int(sortedLexemes[i])
            guard lexemeBytes[lexeme].starts(with: prefix) else { break }
            lexemes[lexeme].accumulate(into: sets, words: width, levels: levels)
            i += 1
        }
    }
}
