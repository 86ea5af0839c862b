import Foundation

/// Search words and typo tolerance, matching what PostgreSQL stores in `books.search_vector`
/// (`to_tsvector('simple', unaccent(text))`: lower case, accents removed, split at punctuation).
public enum SearchText {
    public static let maxWords = 12
    /// Words this long or longer also match with one typo.
    public static let typoMinLength = 5
    /// At most this many typo alternatives per word, so a query cannot grow without bound.
    public static let maxAlternatives = 24

    /// Letters that unaccent rewrites but Unicode does not decompose.
    private static let foldings: [Character: String] = [
        "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i",
    ]

    /// Case- and accent-folded form of `text`.
    public static func fold(_ text: String) -> String {
        let folded = text.folding(options: [.diacriticInsensitive, .caseInsensitive, .widthInsensitive], locale: nil).lowercased()
        guard folded.contains(where: { foldings[$0] != nil }) else { return folded }
        return folded.map { foldings[$0] ?? String($0) }.joined()
    }

    /// The distinct words of a query, in order, folded; at most `maxWords`.
    public static func words(_ text: String) -> [String] {
        var seen = Set<String>()
        var result: [String] = []
        for piece in fold(text).split(whereSeparator: { !($0.isLetter || $0.isNumber) }) {
            let word = String(piece)
            if seen.insert(word).inserted { result.append(word) }
            if result.count == maxWords { break }
        }
        return result
    }

    /// Prefixes of `terms` that are one edit (substitution, insertion, deletion or transposition of
    /// neighbours) from `word`, for words of `typoMinLength` letters or more. A prefix already
    /// covered by `word` itself is left out; the shortest qualifying prefix of a term is kept.
    public static func typoPrefixes(of word: String, in lexicon: Lexicon) -> [String] {
        let q = Array(word.unicodeScalars)
        guard q.count >= typoMinLength else { return [] }
        var found = Set<String>()
        var result: [String] = []
        for term in lexicon.terms where term.count >= q.count - 1 {
            // One edit leaves one of the first two letters in place (or swaps them).
            guard term[0] == q[0] || term[1] == q[1] || (term[0] == q[1] && term[1] == q[0]) else { continue }
            for length in (q.count - 1)...(q.count + 1) where length <= term.count {
                let prefix = term[0..<length]
                if prefix.starts(with: q) { break }                      // plain prefix match already
                if isWithinOneEdit(q, prefix) {
                    var text = String.UnicodeScalarView()
                    text.append(contentsOf: prefix)
                    let candidate = String(text)
                    if found.insert(candidate).inserted { result.append(candidate) }
                    break
                }
            }
            if result.count >= maxAlternatives { break }
        }
        return result.sorted()
    }

    /// Optimal string alignment distance ≤ 1.
    public static func isWithinOneEdit(_ a: [Unicode.Scalar], _ b: ArraySlice<Unicode.Scalar>) -> Bool {
        let b = Array(b)
        if abs(a.count - b.count) > 1 { return false }
        var i = 0
        while i < a.count && i < b.count && a[i] == b[i] { i += 1 }
        if i == a.count && i == b.count { return true }                   // equal
        if a.count == b.count {
            if a[(i + 1)...] == b[(i + 1)...] { return true }             // substitution
            return i + 1 < a.count && a[i] == b[i + 1] && a[i + 1] == b[i] && a[(i + 2)...] == b[(i + 2)...]  // transposition
        }
        if a.count + 1 == b.count { return a[i...] == b[(i + 1)...] }     // insertion
        return a[(i + 1)...] == b[i...]                                   // deletion
    }

    /// A tsquery: every word (AND), each as a prefix or one of its typo alternatives (OR).
    /// `weights` ("A", "AB") restricts where the words may match.
    public static func tsquery(_ clauses: [[String]], weights: String = "") -> String {
        clauses.map { alternatives in
            let terms = alternatives.map { "'\(escape($0))':*\(weights)" }
            return terms.count == 1 ? terms[0] : "(" + terms.joined(separator: " | ") + ")"
        }.joined(separator: " & ")
    }

    static func escape(_ lexeme: String) -> String {
        lexeme.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''")
    }
}

/// The vocabulary of titles and authors, as scalar arrays for fast comparison.
public struct Lexicon: Sendable {
    public private(set) var terms: [[Unicode.Scalar]] = []
    public init(_ words: [String] = []) { append(words) }
    public mutating func append(_ words: [String]) {
        terms.append(contentsOf: words.map { Array($0.unicodeScalars) }.filter { $0.count >= 2 })
    }
}
