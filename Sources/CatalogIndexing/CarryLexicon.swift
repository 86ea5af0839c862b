import Core

/// Some lexemes, asked whether a search word could match one of them (`MemoCarry`): "could match"
/// is the index's rule or wider — the word is a prefix of the lexeme; for words of
/// `SearchText.typoMinLength` letters or more, one edit (a letter changed, added, dropped, or two
/// neighbours swapped) from a prefix of it; one of the word's forms or stem tokens is the lexeme;
/// or the lexeme has the word's Metaphone code.
struct CarryLexicon: Sendable {
    private let prefixes: Set<String>
    let whole: Set<String>
    private let sounds: Set<String>
    private let letters: [(mask: UInt64, scalars: [Unicode.Scalar])]

    init(_ lexemes: some Sequence<String>) {
        whole = Set(lexemes)
        var prefixes = Set<String>()
        var letters: [(UInt64, [Unicode.Scalar])] = []
        for lexeme in whole {
            let scalars = Array(lexeme.unicodeScalars)
            for end in 1...max(scalars.count, 1) where end <= scalars.count {
                prefixes.insert(String(String.UnicodeScalarView(scalars[..<end])))
            }
            letters.append((Self.mask(scalars), scalars))
        }
        self.prefixes = prefixes
        self.letters = letters
        sounds = Set(whole.compactMap { TypoVocabulary.sound($0) })
    }

    /// `mayMatch(word)`, or one of `forms` (the word's forms and stem tokens) is one of the
    /// lexemes, or one sounds like the word.
    func mayMatch(_ word: String, forms: [String]) -> Bool {
        if mayMatch(word) || forms.contains(where: whole.contains) { return true }
        guard word.count >= SearchExpansion.soundMinLength, let sound = TypoVocabulary.sound(word) else { return false }
        return sounds.contains(sound)
    }

    /// As a prefix, or (typo-length words) within one edit of a prefix (`withinOneEdit`) —
    /// checked only against lexemes holding all but at most one of its letters.
    func mayMatch(_ word: String) -> Bool {
        if prefixes.contains(word) { return true }
        let scalars = Array(word.unicodeScalars)
        guard scalars.count >= SearchText.typoMinLength else { return false }
        let wordMask = Self.mask(scalars)
        return letters.contains { lexeme in
            (wordMask & ~lexeme.mask).nonzeroBitCount <= 1 && Self.withinOneEdit(scalars, ofAPrefixOf: lexeme.scalars)
        }
    }

    /// Whether some prefix of `lexeme` is at most one edit from `word` (the typo walk's edits:
    /// one letter substituted, inserted or deleted, or two neighbours transposed —
    /// `TypoVocabulary.alternatives(for:)`). Aligned at the first letter where they differ:
    /// before it the two agree, so one edit anywhere there is the same as one edit at it.
    static func withinOneEdit(_ word: [Unicode.Scalar], ofAPrefixOf lexeme: [Unicode.Scalar]) -> Bool {
        var i = 0
        while i < word.count && i < lexeme.count && word[i] == lexeme[i] { i += 1 }
        if i == word.count { return true }
        /// `word[from...]` is a prefix of `lexeme[at...]`.
        func rest(_ from: Int, _ at: Int) -> Bool {
            let n = word.count - from
            guard n >= 0, lexeme.count - at >= n else { return false }
            for k in 0..<n where word[from + k] != lexeme[at + k] { return false }
            return true
        }
        if rest(i + 1, i) { return true }   // a letter too many in the word
        guard i < lexeme.count else { return false }
        if rest(i + 1, i + 1) || rest(i, i + 1) { return true }   // a letter substituted; one missing
        return i + 1 < word.count && i + 1 < lexeme.count && word[i] == lexeme[i + 1] && word[i + 1] == lexeme[i] && rest(i + 2, i + 2)
    }

    private static func mask(_ scalars: [Unicode.Scalar]) -> UInt64 {
        scalars.reduce(0) { $0 | (1 << UInt64($1.value % 64)) }
    }
}
