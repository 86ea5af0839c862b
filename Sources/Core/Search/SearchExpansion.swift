/// What one query word may match, best first — the one expansion both the catalog engine and its
/// SQL fallback search with, so they find the same books:
///
/// - **literal** (level 3): the word itself as a prefix (`goodn` → `goodnight`);
/// - **forms** (level 2): irregular plurals and staff synonyms as whole words, and the stem tokens
///   of the word and of those forms in each catalog language that some title or author holds
///   (`puppies` → `~en:puppi`, matched in `books.stem_vector`);
/// - **typo** (level 1): prefixes of title/author words one edit away (5+ letters);
/// - **sound** (level 0): only when none of the above is in any active book (`withSounds()`, each
///   search path checks its own catalog) — title/author words of 5+ letters with the same
///   Metaphone code (`elefunt` → `elephant`).
public struct SearchExpansion: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case exact, prefix, stem, synonym, typo, phonetic
    }

    public struct Alternative: Sendable, Hashable {
        /// A word, a prefix, or a stem token (`~en:puppi`).
        public let text: String
        public let prefix: Bool
        /// 3 literal, 2 a form, 1 a typo, 0 a sound: a book's rank uses its words' lowest.
        public let level: Int
        public let kind: Kind
        public var isStem: Bool { text.hasPrefix("~") }
    }

    public let word: String
    public private(set) var alternatives: [Alternative]
    /// Sound-alike words, used only when the other alternatives find nothing (`withSounds()`).
    public let sounds: [String]
    /// `forms(of:)`: the word's forms and stem tokens in every language, unfiltered — what a
    /// change of the catalog is checked against (made here, where the stems are worked out anyway).
    public let forms: [String]

    public static let soundMinLength = 5

    public init(_ word: String, vocabulary: TypoVocabulary, synonyms: Synonyms = Synonyms()) {
        self.word = word
        var result = [Alternative(text: word, prefix: true, level: 3, kind: .prefix)]
        var seen: Set<String> = [word]
        func add(_ text: String, prefix: Bool = false, level: Int, kind: Kind) {
            if seen.insert(text).inserted { result.append(Alternative(text: text, prefix: prefix, level: level, kind: kind)) }
        }
        let irregular = WordForms.irregular(word), related = synonyms.of(word)
        for form in irregular { add(form, level: 2, kind: .stem) }
        for form in related { add(form, level: 2, kind: .synonym) }
        var forms = irregular + related
        for (form, kind) in [(word, Kind.stem)] + irregular.map({ ($0, Kind.stem) }) + related.map({ ($0, Kind.synonym) }) {
            for token in WordForms.tokens(form) {
                forms.append(token)
                if vocabulary.hasStemToken(token) { add(token, level: 2, kind: kind) }
            }
        }
        self.forms = forms
        let typos = vocabulary.alternatives(for: word)
        for typo in typos { add(typo, prefix: true, level: 1, kind: .typo) }
        alternatives = result
        sounds = word.count >= Self.soundMinLength
            ? vocabulary.soundingLike(word).filter { $0.count >= Self.soundMinLength && !seen.contains($0) } : []
    }

    /// This expansion with its sound-alikes as level-0 alternatives: for a word whose other
    /// alternatives are in no active book.
    public func withSounds() -> SearchExpansion {
        var copy = self
        copy.alternatives += sounds.map { Alternative(text: $0, prefix: false, level: 0, kind: .phonetic) }
        return copy
    }

    /// "Did you mean": each word that finds no title or author word itself (nor a form of one)
    /// replaced by the shortest word its first typo alternative completes to, or its first
    /// sound-alike; nil when no word changes.
    public static func correction(_ expansions: [SearchExpansion], vocabulary: TypoVocabulary) -> [String]? {
        var changed = false
        let words = expansions.map { expansion -> String in
            if vocabulary.hasTerm(startingWith: expansion.word) || expansion.alternatives.contains(where: { $0.level == 2 }) { return expansion.word }
            if let typo = expansion.alternatives.first(where: { $0.kind == .typo }), let term = vocabulary.shortestTerm(startingWith: typo.text) {
                changed = true
                return term
            }
            if let sound = expansion.alternatives.first(where: { $0.kind == .phonetic }) {
                changed = true
                return sound.text
            }
            return expansion.word
        }
        return changed ? words : nil
    }

    /// Every whole word or stem token `word` could match as a form, whether or not a book holds
    /// it now: what a change to the catalog must be checked against (`MemoCarry`).
    /// (`SearchExpansion.forms` holds the same for an expanded word.)
    public static func forms(of word: String, synonyms: Synonyms) -> [String] {
        let others = WordForms.irregular(word) + synonyms.of(word)
        return others + ([word] + others).flatMap(WordForms.tokens)
    }
}
