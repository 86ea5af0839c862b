@testable import Core
import Testing

/// The byte-wise paths a catalog request takes for ASCII text, each checked against the general
/// path it stands for (Foundation's or character-wise) over many random inputs.
@Suite("Fast paths agree with the general ones")
struct FastPathTests {
    @Test("query strings: the byte-wise percent-decoding gives what Foundation's gives (5,000 random values, malformed and non-UTF-8 escapes among them)")
    func percentDecoding() {
        var rng = SplitMix(seed: 45)
        let pieces = ["a", "Z", "+", "%", "%2", "%20", "%2B", "%2b", "%C3%A9", "%C3", "%A9", "%FF", "%zz", "%00", "é", "🐉", "=", "x y", "%E2%82%AC", "9"]
        var decodedSome = 0
        for _ in 0..<5_000 {
            let text = (0..<rng.next(7)).map { _ in pieces[rng.next(pieces.count)] }.joined()
            let reference = QueryParameters.foundationDecode(text)
            #expect(QueryParameters.decode(text) == reference, "\(text)")
            if reference != text { decodedSome += 1 }
        }
        #expect(decodedSome > 1_500)
        #expect(QueryParameters(query: "q=dr%C3%A9+gon&age=4").pairs.map(\.value) == ["dré gon", "4"])
    }

    @Test("highlights: the prepared query, byte-wise for ASCII and character-wise otherwise, finds exactly what the reference matching finds (3,000 random titles and searches × 3 languages)")
    func highlightPathsAgree() {
        var rng = SplitMix(seed: 47)
        let vocabulary = TypoVocabulary(["dragon", "dragons", "goodnight", "moon", "owl", "owls", "bear", "bears", "sleepy", "running", "runs", "42", "tiger",
                                         "cheval", "chevaux", "ete", "nino", "ninos", "garcon", "oiseau"])
        let pieces = ["Dragon", "dragons", "GOODNIGHT", "moon", "Owl", "owls'", "bear", "Bears!", "sleepy", "running", "runs", "42", "x1", "tigers",
                      "Chevaux", "cheval", "Été", "été", "NIÑO", "niños", "Garçon", "oiseaux", "Æsop", "straße", "e\u{301}te", "🐉", "İstanbul",
                      "the", "a", "of", "-", ", ", ". ", "  ", "'", "(", ")", "\t", "\r\n", "_", "&", "Кот", "котик"]
        let queries = ["drgon", "dragon", "good", "moon", "owl", "bears", "sleep", "run", "42", "tig", "ber", "goodnigth", "x",
                       "cheval", "chevaux", "ete", "nino", "garcon", "oiseau", "aesop", "strasse", "кот"]
        var compared = 0, highlighted = 0, accented = 0, latinTexts = 0
        for _ in 0..<3_000 {
            var text = ""
            for _ in 0..<rng.next(8) + 1 {
                text += pieces[rng.next(pieces.count)]
                if rng.next(3) > 0 { text += " " }
            }
            let words = (0..<rng.next(3) + 1).map { _ in queries[rng.next(queries.count)] }
            let expansions = words.map { SearchExpansion($0, vocabulary: vocabulary) }
            let query = Highlighter.Query(expansions)
            for language in ["en", "fr", "es"] {
                let stemmed = expansions.contains { $0.alternatives.contains { $0.isStem && $0.text.hasPrefix("~" + language + ":") } }
                #expect(query.stemmed(language) == stemmed)
                let reference = Highlighter.referenceRanges(in: text, language: language, expansions: expansions)
                var bytes = text
                #expect(bytes.withUTF8(Highlighter.isASCII) == text.utf8.allSatisfy { $0 < 0x80 }, "\(text)")
                if text.utf8.allSatisfy({ $0 < 0x80 }) {
                    #expect(Highlighter.asciiRanges(in: text, language: language, stemmed: stemmed, query: query) == reference, "\(text) / \(words) / \(language)")
                } else {
                    accented += 1
                    if let latin = Highlighter.latinRanges(in: text, language: language, stemmed: stemmed, query: query) {
                        #expect(latin == reference, "\(text) / \(words) / \(language)")
                        latinTexts += 1
                    }
                }
                #expect(Highlighter.characterRanges(in: text, language: language, stemmed: stemmed, query: query) == reference, "\(text) / \(words) / \(language)")
                #expect(Highlighter.ranges(in: text, language: language, expansions: expansions) == reference)
                compared += 1
                if !reference.isEmpty { highlighted += 1 }
            }
        }
        #expect(compared == 9_000)
        #expect(highlighted > 1_500 && accented > 2_000 && latinTexts > 1_000, "\(highlighted) highlighted, \(accented) accented, \(latinTexts) Latin")   // the cases exercise matches and accented text, not only misses
        // The prepared query ranks kinds as the reference does.
        #expect(Highlighter.kinds.indices.allSatisfy { Highlighter.rank(of: Highlighter.kinds[$0]) == $0 && Highlighter.rank[Highlighter.kinds[$0]] == $0 })
    }

    @Test("folding: accented Latin letters folded one by one give what Foundation's folding of the whole word gives (5,000 random words)")
    func latinFolding() {
        var rng = SplitMix(seed: 48)
        let latin = (0xC0...0x17F).compactMap { Unicode.Scalar($0).map { String(Character($0)) } }
        let alphabet = latin + Array("abcXYZ019 -'").map(String.init) + ["\u{301}", "🐉", "ǅ", "ﬁ"]
        var folded = 0
        for _ in 0..<5_000 {
            let text = (0..<rng.next(12) + 1).map { _ in alphabet[rng.next(alphabet.count)] }.joined()
            let reference = SearchText.foldingFoundation(text)
            #expect(SearchText.fold(text) == reference, "\(text)")
            if let fast = SearchText.latinFold(text) { #expect(fast == reference, "\(text)"); folded += 1 }
        }
        #expect(folded > 2_000)   // most words take the table's path
        for scalar in latin { #expect(SearchText.latinFold(scalar).map { $0 == SearchText.foldingFoundation(scalar) } ?? true, "\(scalar)") }
    }

    @Test("query words: the ASCII fold and split give what Foundation's folding and the character-wise split give (5,000 random queries)")
    func asciiQueryWords() {
        var rng = SplitMix(seed: 46)
        let alphabet = Array("abcXYZ019 -_.,'!?\"/\t&é") .map(String.init)
        for _ in 0..<5_000 {
            let text = (0..<rng.next(20)).map { _ in alphabet[rng.next(alphabet.count - 1)] }.joined()   // ASCII only (é left out)
            #expect(SearchText.fold(text) == SearchText.foldingFoundation(text), "\(text)")
            var seen = Set<String>(), reference: [String] = []
            for piece in SearchText.foldingFoundation(text).split(whereSeparator: { !($0.isLetter || $0.isNumber) }) where seen.insert(String(piece)).inserted {
                if reference.count < SearchText.maxWords { reference.append(String(piece)) }
            }
            #expect(SearchText.words(text) == reference, "\(text)")
        }
        #expect(SearchText.words("Élan VITAL, élan") == ["elan", "vital"])   // not ASCII: Foundation's path
    }

    @Test("kept keys: a request's key, written into one buffer (with what follows it), is the key its parts joined give (3,000 random requests: words, sorts, pages, ages, publishers, categories with separators in them)")
    func cacheKeys() {
        var rng = SplitMix(seed: 61)
        let words = ["owl", "Dragon", "été", "a b", "\u{1}", "x:3", "", "42"]
        for _ in 0..<3_000 {
            let text = rng.next(4) == 0 ? nil : (0..<rng.next(3) + 1).map { _ in words[rng.next(words.count)] }.joined(separator: " ")
            let category = rng.next(3) == 0 ? nil : ["bedtime", "c=1", "a\u{1}b", ""][rng.next(4)]
            let parameters = CatalogParameters(text: text, age: rng.next(3) == 0 ? rng.next(19) : nil, publisher: rng.next(4) == 0 ? rng.next(1_000_000) + 1 : nil,
                                               category: category, page: PageRequest(page: rng.next(50) + 1, perPage: rng.next(100) + 1),
                                               sort: rng.next(3) == 0 ? nil : CatalogParameters.Sort.allCases[rng.next(CatalogParameters.Sort.allCases.count)])
            let joined = parameters.words.joined(separator: " ")
            var parts = ["w=\(joined.utf8.count):" + joined, "s=" + parameters.sort.rawValue, "p=\(parameters.page.page)", "n=\(parameters.page.perPage)"]
            if let age = parameters.age { parts.append("a=\(age)") }
            if let publisher = parameters.publisher { parts.append("u=\(publisher)") }
            if let category = parameters.category { parts.append("c=\(category.utf8.count):" + category) }
            #expect(Array(parameters.cacheKey.utf8) == Array(parts.joined(separator: "\u{1}").utf8))   // (bytes: == on strings is canonical)
            #expect(Array(parameters.cacheKey(then: "", "k\u{2}a8c3", "é").utf8) == Array((parts.joined(separator: "\u{1}") + "k\u{2}a8c3é").utf8))
        }
    }

    @Test("word forms: an expansion's forms (worked out with its stems) are the unfiltered `forms(of:)` a change is checked against (3,000 random words, with synonyms and irregular plurals)")
    func expansionFormsAgree() {
        var rng = SplitMix(seed: 53)
        let synonyms = Synonyms([.init(words: "dragon, wyrm, drake", oneWay: false), .init(words: "kitty => cat", oneWay: true)])
        let vocabulary = TypoVocabulary(["dragon", "dragons", "cat", "cats", "mice", "children", "running", "~en:run", "~fr:cheval"])
        let pieces = ["dragon", "wyrm", "kitty", "mouse", "child", "run", "ning", "s", "es", "ies", "cheval", "aux", "niño", "x", "é"]
        var withForms = 0
        for _ in 0..<3_000 {
            let word = (0..<rng.next(3) + 1).map { _ in pieces[rng.next(pieces.count)] }.joined()
            let expansion = SearchExpansion(word, vocabulary: vocabulary, synonyms: synonyms)
            #expect(expansion.forms == SearchExpansion.forms(of: word, synonyms: synonyms), "\(word)")
            if expansion.forms.count > WordForms.languages.count { withForms += 1 }
        }
        #expect(withForms > 100, "\(withForms) words had irregular forms or synonyms")
    }

    @Test("a word's stem tokens from the one memo equal its token in each language, asked first and again (5,000 random words, some past the memo's word length)")
    func tokensFromTheMemo() {
        var rng = SplitMix(seed: 57)
        let pieces = ["pupp", "ies", "chev", "aux", "mouse", "mice", "ing", "é", "ß", "lijk", "ungen", "x"]
        var long = 0
        for _ in 0..<5_000 {
            let word = (0..<rng.next(rng.next(10) == 0 ? 20 : 4) + 1).map { _ in pieces[rng.next(pieces.count)] }.joined()
            let each = WordForms.languages.compactMap { WordForms.token(word, language: $0.code) }
            #expect(each.count == WordForms.languages.count)
            #expect(WordForms.tokens(word) == each && WordForms.tokens(word) == each, "\(word)")
            if word.utf8.count > 40 { long += 1 }
        }
        #expect(long > 50, "\(long) words past the memo's length")
    }

    @Test("stems: every Snowball stemmer keeps the first letter of a word that begins with an ASCII one (20,000 random words × 7 languages) — the highlights stem only words that could match")
    func stemsKeepTheFirstLetter() {
        var rng = SplitMix(seed: 49)
        let ascii = Array("abcdefghijklmnopqrstuvwxyz0123456789").map(String.init), vowels = ["a", "e", "i", "o", "u", "y"]
        let accented = ["ß", "ä", "ö", "ü", "é", "è", "ê", "à", "ç", "ñ", "ã", "õ", "í", "ó", "ú", "œ"]
        let suffixes = ["", "ies", "ing", "ement", "aux", "ungen", "ssen", "zione", "ción", "ções", "ed", "s", "ly", "heid", "lijk"]
        var stemmed = 0, changed = 0
        for language in WordForms.languages.map(\.code) {
            for word in ["dying", "lying", "skies", "gelopen", "aepfel", "uebel", "yeux", "quando", "ijsbeer"] + (0..<20_000).map({ _ in
                ascii[rng.next(ascii.count)] + (0..<rng.next(10)).map { _ in
                    let letters = [ascii, vowels, accented][rng.next(10) < 4 ? 0 : rng.next(10) < 8 ? 1 : 2]
                    return letters[rng.next(letters.count)]
                }.joined() + suffixes[rng.next(suffixes.count)]
            }) {
                guard let stem = WordForms.stem(word, language: language) else { Issue.record("no \(language) stemmer"); continue }
                #expect(stem.utf8.first == word.utf8.first, "\(language): \(word) → \(stem)")
                stemmed += 1
                if stem != word { changed += 1 }
            }
        }
        #expect(stemmed == 7 * 20_009 && changed > 30_000, "\(changed) of \(stemmed) changed")   // the stemmers did work on these words
    }

    @Test("offsets count UTF-16 units of the text as stored; accented text takes the character-wise path")
    func offsets() {
        let expansions = [SearchExpansion("ete", vocabulary: TypoVocabulary(["été", "ete"]))]
        let ascii = Highlighter.ranges(in: "An ete story", language: "en", expansions: expansions)
        #expect(ascii.map(\.start) == [3] && ascii.map(\.length) == [3])
        let accented = Highlighter.ranges(in: "Un été 🐉 ete", language: "fr", expansions: expansions)
        #expect(accented.map(\.start).last == 10)   // "Un été " is 7 units, the dragon 2, then a space
    }
}

/// A small deterministic generator (the test's cases are the same on every run).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

