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

    /// A kind's index in `kinds` — by an exhaustive switch, so a new kind cannot be left out.
    static func rank(of kind: SearchExpansion.Kind) -> Int {
        switch kind {
        case .exact: 0
        case .prefix: 1
        case .stem: 2
        case .synonym: 3
        case .typo: 4
        case .phonetic: 5
        }
    }

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
        var text = text
        if text.withUTF8(isASCII) { return asciiRanges(in: text, language: language, stemmed: stemmed, query: query) }
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

    /// `ranges(in:…)` for an ASCII text, over its bytes (a UTF-16 offset is the byte's there): the
    /// same words (runs of letters and digits), folded by lower-casing into one scratch buffer,
    /// and a word no query word, alternative or stem could begin (`Query.mayBegin`) passed over.
    static func asciiRanges(in text: String, language: String, stemmed: Bool, query: Query) -> [Highlight] {
        var text = text
        return text.withUTF8 { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(bytes.count, 1)) { scratch in
                var found: [Highlight] = []
                var i = 0
                let n = bytes.count
                while i < n {
                    while i < n && !isWordByte(bytes[i]) { i += 1 }
                    guard i < n else { break }
                    let start = i
                    guard query.mayBegin(lowered(bytes[i])) else {
                        while i < n && isWordByte(bytes[i]) { i += 1 }
                        continue
                    }
                    var length = 0
                    while i < n && isWordByte(bytes[i]) { scratch[length] = lowered(bytes[i]); length += 1; i += 1 }
                    let word = UnsafeBufferPointer(rebasing: scratch[0..<length])
                    if let kind = query.best(word, folded: { String(decoding: word, as: UTF8.self) }, language: language, stemmed: stemmed) {
                        found.append(Highlight(start: start, length: i - start, kind: kind))
                    }
                }
                return found
            }
        }
    }

    /// Whether every byte is ASCII: one OR of them all, which the compiler vectorizes (`allSatisfy`
    /// over a string's UTF-8 view went byte by byte through its iterator: half of a page's matching).
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var or: UInt8 = 0
        for byte in bytes { or |= byte }
        return or < 0x80
    }

    /// An ASCII letter or digit: what a word of an ASCII text is made of.
    @inline(__always) static func isWordByte(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte | 0x20 >= 97 && byte | 0x20 <= 122)
    }

    @inline(__always) static func lowered(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }

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

    /// The Latin path's words: the folded bytes of the word being read, where it started, and
    /// the ranges of the words the query matches. A word whose first byte begins nothing the
    /// query could match (`Query.mayBegin`) is only passed over: no byte kept, nothing compared.
    struct FoldedWords {
        let query: Query, language: String, stemmed: Bool
        private(set) var found: [Highlight] = []
        private var word: [UInt8] = []
        private var start = 0
        /// A word is being read, and whether it is passed over.
        private var reading = false, passing = false

        init(query: Query, language: String, stemmed: Bool) {
            self.query = query; self.language = language; self.stemmed = stemmed
            word.reserveCapacity(32)
        }

        /// Adds an ASCII letter or digit (lower-cased) at `offset`; false for any other byte.
        mutating func ascii(_ byte: UInt8, at offset: Int) -> Bool {
            guard isWordByte(byte) else { return false }
            let folded = lowered(byte)
            if !reading { begin(folded, at: offset) }
            if !passing { word.append(folded) }
            return true
        }

        /// Adds a letter folded to `bytes` at `offset` (a letter folded to nothing is not there).
        mutating func append(_ bytes: [UInt8], at offset: Int) {
            guard let first = bytes.first else { return }
            if !reading { begin(first, at: offset) }
            if !passing { word.append(contentsOf: bytes) }
        }

        private mutating func begin(_ first: UInt8, at offset: Int) {
            reading = true; start = offset
            passing = !query.mayBegin(first)
        }

        /// Ends the word being read (if any) at `offset`, keeping its range when the query matches it.
        mutating func end(at offset: Int) {
            guard reading else { return }
            reading = false
            guard !passing else { return }
            let kind = word.withUnsafeBufferPointer { [query, language, stemmed] bytes in
                query.best(bytes, folded: { String(decoding: bytes, as: UTF8.self) }, language: language, stemmed: stemmed)
            }
            if let kind { found.append(Highlight(start: start, length: offset - start, kind: kind)) }
            word.removeAll(keepingCapacity: true)
        }
    }
}
