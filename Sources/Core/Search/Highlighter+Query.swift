/// A search's expansions prepared for matching many words: the query words and each
/// alternative as bytes with its rank, the stem tokens apart (a word of a text is stemmed only
/// when one of them could still improve its match).
extension Highlighter {
    /// A class: each text of a page is matched against one (a struct of five arrays was copied,
    /// retained and released per text).
    public final class Query: Sendable {
        struct Alternative: Sendable { let bytes: [UInt8]; let prefix: Bool; let rank: Int }
        /// A stem token `~language:stem`, split at its colon.
        struct Stem: Sendable { let bytes: [UInt8]; let language: ArraySlice<UInt8>; let stem: ArraySlice<UInt8>; let rank: Int }
        let words: [[UInt8]]
        let alternatives: [Alternative]
        let stems: [Stem]
        /// The best rank a stem token can give (`Int.max`: none).
        let bestStemRank: Int
        /// The languages of the stem tokens (`~xx:…`: what stands between `~` and the colon).
        let stemLanguages: [String]
        /// The ASCII bytes a word the query matches can begin with (bit `b` of the 128): the first
        /// byte of each query word, alternative and token's stem (`mayBegin`).
        let firstBytes: (UInt64, UInt64)

        public init(_ expansions: [SearchExpansion]) {
            words = expansions.map { Array($0.word.utf8) }
            var alternatives: [Alternative] = [], stems: [Stem] = []
            for alternative in expansions.flatMap(\.alternatives) {
                let rank = Highlighter.rank(of: alternative.kind)
                if alternative.isStem {
                    let bytes = Array(alternative.text.utf8), colon = bytes.firstIndex(of: 58) ?? bytes.endIndex
                    stems.append(Stem(bytes: bytes, language: bytes[1..<colon], stem: bytes[min(colon + 1, bytes.endIndex)...], rank: rank))
                } else {
                    alternatives.append(Alternative(bytes: Array(alternative.text.utf8), prefix: alternative.prefix, rank: rank))
                }
            }
            self.alternatives = alternatives
            self.stems = stems
            bestStemRank = stems.map(\.rank).min() ?? .max
            var languages: [String] = []
            for stem in stems where stem.language.endIndex < stem.bytes.endIndex && !languages.contains(where: { $0.utf8.elementsEqual(stem.language) }) {
                languages.append(String(decoding: stem.language, as: UTF8.self))
            }
            stemLanguages = languages
            firstBytes = Self.firstBytes(words + alternatives.map(\.bytes) + stems.map { Array($0.stem) })
        }

        /// The bits of `firstBytes` for words starting as `starts` do — every bit when one of them
        /// is empty or does not start with an ASCII byte (a prefix "" begins any word).
        static func firstBytes(_ starts: [[UInt8]]) -> (UInt64, UInt64) {
            var low: UInt64 = 0, high: UInt64 = 0
            for bytes in starts {
                guard let first = bytes.first, first < 0x80 else { return (.max, .max) }
                if first < 64 { low |= 1 << UInt64(first) } else { high |= 1 << UInt64(first - 64) }
            }
            return (low, high)
        }

        /// Whether a folded word beginning with `byte` can match at all (`best` non-nil): each of
        /// its comparisons needs the word's first byte to be the first of a query word, an
        /// alternative or a token's stem (a stem keeps a word's first ASCII letter: `mayStem`).
        /// Most words of a title begin otherwise, and are then neither kept nor compared.
        @inline(__always) func mayBegin(_ byte: UInt8) -> Bool {
            byte >= 0x80 || (byte < 64 ? firstBytes.0 >> UInt64(byte) : firstBytes.1 >> UInt64(byte - 64)) & 1 != 0
        }

        public var isEmpty: Bool { words.isEmpty }

        /// Whether some stem token is in `language` (`~xx:…`): only then is a text's word stemmed.
        /// (A stem token holds one colon: the stem of a folded word has none.)
        func stemmed(_ language: String) -> Bool {
            stemLanguages.contains(language)   // (two small strings: compared whole, not byte by byte)
        }

        /// The best kind of match of a folded word (`bytes`; `folded()` the same as a string, made
        /// only when a stem must be compared): a query word itself is `exact`, else the best rank
        /// among the alternatives it equals (or, a prefix, starts with) and the stem tokens equal
        /// to its stem in `language`.
        func best(_ bytes: UnsafeBufferPointer<UInt8>, folded: () -> String, language: String, stemmed: Bool) -> SearchExpansion.Kind? {
            for word in words where Self.equal(bytes, word) { return .exact }
            var found = Int.max
            for alternative in alternatives where alternative.rank < found {
                if alternative.prefix ? Self.starts(bytes, with: alternative.bytes) : Self.equal(bytes, alternative.bytes) {
                    found = alternative.rank
                }
            }
            // The word's stem compared with each token's part after `~language:` (no token string made).
            if stemmed && bestStemRank < found && mayStem(to: bytes, below: found), let stem = WordForms.stem(folded(), language: language) {
                for token in stems where token.rank < found && token.stem.elementsEqual(stem.utf8) && token.language.elementsEqual(language.utf8) {
                    found = token.rank
                }
            }
            return found == .max ? nil : Highlighter.kinds[found]
        }

        /// Whether the word's stem could equal some stem token of a rank below `found`: a Snowball
        /// stem keeps the first letter of a word that begins with an ASCII one ("dying" → "die";
        /// `FastPathTests` checks it for every stemmer over random words), so a word whose first
        /// byte begins no token's stem is not stemmed at all — most words of a title.
        func mayStem(to bytes: UnsafeBufferPointer<UInt8>, below found: Int) -> Bool {
            guard let first = bytes.first, first < 0x80 else { return true }
            return stems.contains { $0.rank < found && ($0.stem.first ?? first) == first }
        }

        static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ other: [UInt8]) -> Bool {
            bytes.count == other.count && starts(bytes, with: other)
        }

        static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with prefix: [UInt8]) -> Bool {
            guard bytes.count >= prefix.count else { return false }
            for i in 0..<prefix.count where bytes[i] != prefix[i] { return false }
            return true
        }
    }
}

/// The matching the prepared `Query` stands for, kept as it was written first (expansion by
/// expansion, alternative by alternative): `FastPathTests` proves the two agree.
extension Highlighter {
    static func referenceRanges(in text: String, language: String, expansions: [SearchExpansion]) -> [Highlight] {
        guard !expansions.isEmpty else { return [] }
        let stemmed = expansions.contains { $0.alternatives.contains { $0.isStem && $0.text.hasPrefix("~" + language + ":") } }
        var result: [Highlight] = []
        var offset = 0, start = 0, word = ""
        func finish() {
            if !word.isEmpty, let kind = referenceBest(word, language: language, stemmed: stemmed, expansions) {
                result.append(Highlight(start: start, length: offset - start, kind: kind))
            }
            word = ""
        }
        for character in text {
            if character.isLetter || character.isNumber {
                if word.isEmpty { start = offset }
                word.append(character)
            } else {
                finish()
            }
            offset += character.utf16.count
        }
        finish()
        return result
    }

    static func referenceBest(_ token: String, language: String, stemmed: Bool, _ expansions: [SearchExpansion]) -> SearchExpansion.Kind? {
        let folded = SearchText.foldingFoundation(token)
        var stemToken: String??
        var found: SearchExpansion.Kind?
        func consider(_ kind: SearchExpansion.Kind) {
            if found == nil || rank[kind]! < rank[found!]! { found = kind }
        }
        for expansion in expansions {
            if folded == expansion.word { consider(.exact); continue }
            for alternative in expansion.alternatives {
                if alternative.isStem {
                    guard stemmed else { continue }
                    if stemToken == nil { stemToken = .some(WordForms.token(folded, language: language)) }
                    if stemToken! == alternative.text { consider(alternative.kind) }
                } else if alternative.prefix ? folded.utf8.starts(with: alternative.text.utf8) : folded.utf8.elementsEqual(alternative.text.utf8) {
                    consider(alternative.kind)
                }
            }
        }
        return found
    }
}
