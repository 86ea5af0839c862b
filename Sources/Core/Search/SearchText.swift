import Foundation

/// Search words and typo tolerance, matching what PostgreSQL stores in `books.search_vector`
/// (`to_tsvector('simple', unaccent(text))`: lower case, accents removed, split at punctuation).
public enum SearchText {
    public static let maxWords = 12
    /// Words this long or longer also match with one typo.
    public static let typoMinLength = 5

    /// Letters that unaccent rewrites but Unicode does not decompose.
    private static let foldings: [Character: String] = [
        "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i",
    ]

    /// Case- and accent-folded form of `text`.
    public static func fold(_ text: String) -> String {
        // ASCII folds by lower-casing alone (Foundation's folding is most of a query's parse).
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return String(decoding: text.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self) }
        return latinFold(text) ?? foldingFoundation(text)
    }

    /// Latin letters (U+00C0–U+017F) that Foundation's folding turns into ASCII, each as it
    /// folds alone (worked out once, by Foundation itself).
    static let latin: [UInt32: [UInt8]] = {
        var table: [UInt32: [UInt8]] = [:]
        for value in UInt32(0xC0)...0x17F {
            guard let scalar = Unicode.Scalar(value), Character(scalar).isLetter else { continue }   // the fast paths read these as letters
            let folded = foldingFoundation(String(Character(scalar)))
            if !folded.isEmpty, folded.utf8.allSatisfy({ $0 < 0x80 }) { table[value] = Array(folded.utf8) }
        }
        return table
    }()

    /// `fold` of a text of ASCII and accented Latin letters (`latin`) character by character —
    /// what Foundation's folding of the whole gives (`FastPathTests`); nil for any other text.
    static func latinFold(_ text: String) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x80 {
                out.append(value >= 65 && value <= 90 ? UInt8(value + 32) : UInt8(value))
            } else if let folded = latin[value] {
                out.append(contentsOf: folded)
            } else {
                return nil
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `fold` through Foundation's folding (any text; the same as the ASCII path for ASCII).
    static func foldingFoundation(_ text: String) -> String {
        let folded = text.folding(options: [.diacriticInsensitive, .caseInsensitive, .widthInsensitive], locale: nil).lowercased()
        guard folded.contains(where: { foldings[$0] != nil }) else { return folded }
        return folded.map { foldings[$0] ?? String($0) }.joined()
    }

    /// The distinct words of a query, in order, folded; at most `maxWords`.
    public static func words(_ text: String) -> [String] {
        var seen = Set<String>()
        var result: [String] = []
        let folded = fold(text)
        if folded.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII: letters and digits by byte, no grapheme breaking (the same words).
            for piece in folded.utf8.split(whereSeparator: { !(($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122)) }) {
                let word = String(decoding: piece, as: UTF8.self)
                if seen.insert(word).inserted { result.append(word) }
                if result.count == maxWords { break }
            }
            return result
        }
        for piece in folded.split(whereSeparator: { !($0.isLetter || $0.isNumber) }) {
            let word = String(piece)
            if seen.insert(word).inserted { result.append(word) }
            if result.count == maxWords { break }
        }
        return result
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

    public static func escape(_ lexeme: String) -> String {
        lexeme.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''")
    }
}

