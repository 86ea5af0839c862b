/// Where a result's title or author matched the query: ranges in UTF-16 code units of the text as
/// stored (what JavaScript strings, NSString and Android index by), each with the kind of match.
/// Offsets, not markup, so every client renders them safely.
public struct Highlight: Sendable, Equatable {
    public let start: Int
    public let length: Int
    public let kind: SearchExpansion.Kind
}

public enum Highlighter {
    /// Better first: a word matched several ways reports the best.
    static let rank: [SearchExpansion.Kind: Int] = [.exact: 0, .prefix: 1, .stem: 2, .synonym: 3, .typo: 4, .phonetic: 5]
    static let kinds: [SearchExpansion.Kind] = [.exact, .prefix, .stem, .synonym, .typo, .phonetic]

    /// The words of `text` (runs of letters and digits, as the query splits them) that one of
    /// the expansions matches; stem tokens are compared in the book's `language`.
    public static func ranges(in text: String, language: String, expansions: [SearchExpansion]) -> [Highlight] {
        ranges(in: text, language: language, query: Query(expansions))
    }

    /// `ranges(in:language:expansions:)` with the expansions prepared once (`Query`: a page's
    /// titles and authors share one).
    public static func ranges(in text: String, language: String, query: Query) -> [Highlight] {
        guard !query.isEmpty else { return [] }
        // Stemming a word of the text is needed only when some alternative is a stem in its language.
        let stemmed = query.stemmed(language)
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return asciiRanges(in: text, language: language, stemmed: stemmed, query: query) }
        return latinRanges(in: text, language: language, stemmed: stemmed, query: query)
            ?? characterRanges(in: text, language: language, stemmed: stemmed, query: query)
    }

    /// `ranges(in:…)` character by character (any text; `asciiRanges` gives the same for ASCII).
    static func characterRanges(in text: String, language: String, stemmed: Bool, query: Query) -> [Highlight] {
        var result: [Highlight] = []
        var offset = 0, start = 0, word = ""
        func finish() {
            if !word.isEmpty, let kind = best(word, language: language, stemmed: stemmed, query) {
                result.append(Highlight(start: start, length: offset - start, kind: kind))
            }
            word = ""
        }
        for character in text {
            let width = character.utf16.count
            if character.isLetter || character.isNumber {
                if word.isEmpty { start = offset }
                word.append(character)
            } else {
                finish()
            }
            offset += width
        }
        finish()
        return result
    }

    static func best(_ token: String, language: String, stemmed: Bool, _ query: Query) -> SearchExpansion.Kind? {
        // ASCII words fold by lower-casing (no Foundation call); others as query words fold.
        let folded = token.utf8.allSatisfy { $0 < 0x80 } ? String(decoding: token.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
            : SearchText.fold(token)
        return Array(folded.utf8).withUnsafeBufferPointer { query.best($0, folded: { folded }, language: language, stemmed: stemmed) }
    }

    /// `ranges(in:…)` for an ASCII text, byte by byte (a UTF-16 offset is the byte's there): the
    /// same words (runs of letters and digits), folded by lower-casing, without a string per word.
    static func asciiRanges(in text: String, language: String, stemmed: Bool, query: Query) -> [Highlight] {
        var words = FoldedWords(query: query, language: language, stemmed: stemmed)
        var offset = 0
        for byte in text.utf8 {
            if !words.ascii(byte, at: offset) { words.end(at: offset) }
            offset += 1
        }
        words.end(at: offset)
        return words.found
    }

    /// `ranges(in:…)` for a text of ASCII and accented Latin letters (`SearchText.latin`: each
    /// one scalar, one UTF-16 unit and one character, a letter that folds to ASCII), scalar by
    /// scalar, without a string per word; nil for any other text.
    static func latinRanges(in text: String, language: String, stemmed: Bool, query: Query) -> [Highlight]? {
        var words = FoldedWords(query: query, language: language, stemmed: stemmed)
        var offset = 0
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x80 {
                if !words.ascii(UInt8(value), at: offset) { words.end(at: offset) }
            } else if let folded = SearchText.latin[value] {
                words.append(folded, at: offset)
            } else {
                return nil
            }
            offset += 1
        }
        words.end(at: offset)
        return words.found
    }

    /// The byte-wise paths' words: the folded bytes of the word being read, where it started, and
    /// the ranges of the words the query matches.
    struct FoldedWords {
        let query: Query, language: String, stemmed: Bool
        private(set) var found: [Highlight] = []
        private var word: [UInt8] = []
        private var start = 0

        init(query: Query, language: String, stemmed: Bool) {
            self.query = query; self.language = language; self.stemmed = stemmed
            word.reserveCapacity(32)
        }

        /// Adds an ASCII letter or digit (lower-cased) at `offset`; false for any other byte.
        mutating func ascii(_ byte: UInt8, at offset: Int) -> Bool {
            guard (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) else { return false }
            if word.isEmpty { start = offset }
            word.append(byte >= 65 && byte <= 90 ? byte + 32 : byte)
            return true
        }

        /// Adds a letter folded to `bytes` at `offset`.
        mutating func append(_ bytes: [UInt8], at offset: Int) {
            if word.isEmpty { start = offset }
            word.append(contentsOf: bytes)
        }

        /// Ends the word being read (if any) at `offset`, keeping its range when the query matches it.
        mutating func end(at offset: Int) {
            guard !word.isEmpty else { return }
            let kind = word.withUnsafeBufferPointer { [query, language, stemmed] bytes in
                query.best(bytes, folded: { String(decoding: bytes, as: UTF8.self) }, language: language, stemmed: stemmed)
            }
            if let kind { found.append(Highlight(start: start, length: offset - start, kind: kind)) }
            word.removeAll(keepingCapacity: true)
        }
    }
}
