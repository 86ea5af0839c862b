import Core

extension CatalogIndex {
    public struct Suggestions: Sendable, Equatable {
        /// Completions of the last word, with how many books of the catalog asked have each.
        public var words: [(text: String, books: Int)]
        /// The best matches' ids, in relevance order.
        public var titles: [Int]

        public static func == (a: Suggestions, b: Suggestions) -> Bool {
            a.titles == b.titles && a.words.map(\.text) == b.words.map(\.text) && a.words.map(\.books) == b.words.map(\.books)
        }
    }

    /// Completions for as-you-type (`/catalog/suggest`), in `scope` without `offline`:
    /// - words: title or author words starting with the last query word (when it has at least
    ///   `Suggest.wordMinLength` letters), kept when some book of the scope has it besides the
    ///   other words, most books first (then byte order) — so a hidden title lends no word;
    /// - titles: the first `limit` books of the query in relevance order.
    public func suggest(_ expansions: [SearchExpansion], scope: CatalogScope?, offline: Bitset?, words wordLimit: Int, titles titleLimit: Int) -> Suggestions {
        guard let last = expansions.last else { return Suggestions(words: [], titles: []) }
        var parameters = CatalogParameters(text: expansions.map(\.word).joined(separator: " "), page: PageRequest(page: 1, perPage: titleLimit))
        parameters.sort = .relevance
        let titles = answer(parameters, expansions: expansions, scope: scope, offline: offline).ids
        var words: [(String, Int)] = []
        if last.word.count >= SuggestRules.wordMinLength {
            let base = matching(Array(expansions.dropLast()), within: books(in: scope, offline: offline))
            let prefix = Array(last.word.utf8)
            var a = 0, b = sortedLexemes.count
            while a < b {
                let m = (a + b) / 2
                if lexemeBytes[Int(sortedLexemes[m])].lexicographicallyPrecedes(prefix) { a = m + 1 } else { b = m }
            }
            while a < sortedLexemes.count {
                let lexeme = Int(sortedLexemes[a])
                guard lexemeBytes[lexeme].starts(with: prefix) else { break }
                let n = lexemes[lexeme].titleOrAuthorCount(in: base)
                if n > 0 { words.append((lexemeText(UInt32(lexeme)), n)) }
                a += 1
            }
            // Most books first; the sort is stable, so ties stay in byte order.
            words = Array(words.enumerated().sorted { $0.element.1 != $1.element.1 ? $0.element.1 > $1.element.1 : $0.offset < $1.offset }.map(\.element).prefix(wordLimit))
        }
        return Suggestions(words: words, titles: titles)
    }
}

/// The limits of `/catalog/suggest`.
public enum SuggestRules {
    /// Words are completed from this many letters; shorter, only titles are suggested.
    public static let wordMinLength = 3
    public static let maxSuggestions = 8
    public static let maxWords = 4
}
