import Core
/// Which remembered answers a change of some books leaves exactly as they were.
///
/// A search answer can change only through the changed books: their own membership, or the
/// typo vocabulary their lexemes add or remove — and a vocabulary word that alters a query's
/// expansion is one edit from a prefix of that query's word. So an answer stays valid when no word
/// of its query could match any lexeme of a changed book, before or after the change. "Could
/// match" over-approximates the index's rule (prefix; one edit anywhere for words of
/// `SearchText.typoMinLength` letters or more), so it never keeps an answer that changed.
/// Answers without search words (browsing) are dropped when a book came or went or a changed
/// book's filters or sort keys changed (`browsing`); a change that only alters words (a
/// description) leaves them.
///
/// `CatalogIndex.carry(changing:removing:)` builds the carry from what each book's change
/// actually alters: nothing for a book whose indexed record is the same (a cover, a video, a
/// touch), only the words added or removed when its filters, sort keys and shown title stay.
///
/// Word forms, synonyms and sound-alikes widen "could match": a changed book holding one of the
/// word's forms or stem tokens (`SearchExpansion.forms(of:)`, kept with the answer), or a word
/// with the same Metaphone code, affects it too.
public struct MemoCarry: Sendable {
    private let prefixes: Set<String>
    private let whole: Set<String>
    private let sounds: Set<String>
    private let letters: [(mask: UInt64, counts: [Unicode.Scalar: Int])]
    /// Whether answers without search words (browsing) may have changed.
    public let browsing: Bool
    /// What reaches only the answers in some countries' catalogs (books whose territory rules
    /// alone changed): those countries, and what to check the answers in them against besides.
    public var territorial: (countries: Set<String>, carry: MemoCarry)? { territorialPart.first }
    private let territorialPart: [(countries: Set<String>, carry: MemoCarry)]   // (an array: a struct cannot hold itself)
    /// The lexemes the carry checks words against (everywhere: the common words' sets over the
    /// whole catalog follow them).
    public var lexemes: Set<String> { whole }
    /// Nothing an answer reads changed (every changed book's record is the same where it counts).
    public var changesNothing: Bool { whole.isEmpty && !browsing && territorial == nil }

    /// `lexemes`: every lexeme of the changed books, old and new (or only those a change added or
    /// removed, when nothing else about the book changed); `browsing`: whether a book's filters
    /// or sort keys changed; `territorial`: what reaches only some countries' catalogs.
    public init(lexemes: some Sequence<String>, browsing: Bool = true, territorial: (countries: Set<String>, carry: MemoCarry)? = nil) {
        self.browsing = browsing
        territorialPart = territorial.map { [$0] } ?? []
        var prefixes = Set<String>()
        var letters: [(UInt64, [Unicode.Scalar: Int])] = []
        for lexeme in Set(lexemes) {
            let scalars = Array(lexeme.unicodeScalars)
            for end in 1...max(scalars.count, 1) where end <= scalars.count {
                prefixes.insert(String(String.UnicodeScalarView(scalars[..<end])))
            }
            letters.append((Self.mask(scalars), Dictionary(scalars.map { ($0, 1) }, uniquingKeysWith: +)))
        }
        self.prefixes = prefixes
        self.letters = letters
        whole = Set(lexemes)
        sounds = Set(whole.compactMap { TypoVocabulary.sound($0) })
    }

    /// `mayMatch(word)`, or one of `forms` (the word's forms and stem tokens) is a changed
    /// book's lexeme, or a changed book has a word that sounds like it.
    public func mayMatch(_ word: String, forms: [String]) -> Bool {
        if mayMatch(word) || forms.contains(where: whole.contains) { return true }
        guard word.count >= SearchExpansion.soundMinLength, let sound = TypoVocabulary.sound(word) else { return false }
        return sounds.contains(sound)
    }

    /// Whether an answer to a query with these search words may have changed — in `country`'s
    /// catalog (nil: an answer no country narrows, the whole catalog).
    public func affects(words: [String], synonyms: Synonyms = Synonyms(), country: String? = nil) -> Bool {
        if words.isEmpty ? browsing : words.contains(where: { mayMatch($0, forms: SearchExpansion.forms(of: $0, synonyms: synonyms)) }) { return true }
        guard let territorial, reaches(country) else { return false }
        return territorial.carry.affects(words: words, synonyms: synonyms)
    }

    /// Whether the countries of `territorial` include `country` (nil: no country's catalog).
    public func reaches(_ country: String?) -> Bool {
        guard let country, let territorial else { return false }
        return territorial.countries.contains(country)
    }

    /// Could `word` match one of the lexemes: as a prefix, or (typo-length words) within one edit
    /// of a prefix — then all but at most one of its letters occur in the lexeme.
    public func mayMatch(_ word: String) -> Bool {
        if prefixes.contains(word) { return true }
        let scalars = Array(word.unicodeScalars)
        guard scalars.count >= SearchText.typoMinLength else { return false }
        let wordMask = Self.mask(scalars)
        let need = scalars.count - 1
        for (mask, counts) in letters where (wordMask & ~mask).nonzeroBitCount <= 1 {
            var available = counts, common = 0
            for scalar in scalars where (available[scalar] ?? 0) > 0 {
                available[scalar]! -= 1
                common += 1
            }
            if common >= need { return true }
        }
        return false
    }

    private static func mask(_ scalars: [Unicode.Scalar]) -> UInt64 {
        scalars.reduce(0) { $0 | (1 << UInt64($1.value % 64)) }
    }
}
