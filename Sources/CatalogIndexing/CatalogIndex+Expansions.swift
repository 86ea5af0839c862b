import Core

/// A search's words against this index's vocabulary: their expansions (typos, word forms,
/// synonyms, sound-alikes) and whether an active book holds any of their alternatives.
extension CatalogIndex {
    /// The expansions of the query's words against this index's vocabulary, each with its
    /// sound-alikes when nothing else it could match is in an active book.
    public func expansions(_ words: [String], synonyms: Synonyms) -> [SearchExpansion] {
        words.map { word in
            let expansion = SearchExpansion(word, vocabulary: typos, synonyms: synonyms)
            return expansion.sounds.isEmpty || findsSome(expansion) ? expansion : expansion.withSounds()
        }
    }

    /// Whether some active book holds one of the expansion's alternatives — without a set: the
    /// index holds active books only, and typo alternatives and stem tokens come from its own
    /// counted vocabulary, so each is in some book; a prefix or a whole word is looked up.
    func findsSome(_ expansion: SearchExpansion) -> Bool {
        for alternative in expansion.alternatives {
            switch alternative.kind {
            case .typo: return true
            case .stem where alternative.isStem, .synonym where alternative.isStem: return true
            default:
                if alternative.prefix {
                    let prefix = Array(alternative.text.utf8)
                    var a = 0, b = sortedLexemes.count
                    while a < b {
                        let m = (a + b) / 2
                        if lexemeBytes[Int(sortedLexemes[m])].lexicographicallyPrecedes(prefix) { a = m + 1 } else { b = m }
                    }
                    while a < sortedLexemes.count, lexemeBytes[Int(sortedLexemes[a])].starts(with: prefix) {
                        if lexemes[Int(sortedLexemes[a])].count > 0 { return true }
                        a += 1
                    }
                } else if let lexeme = lexemeID(alternative.text), lexemes[Int(lexeme)].count > 0 {
                    return true
                }
            }
        }
        return false
    }
}
