import Core
import Testing

@Suite("Typo vocabulary")
struct TypoVocabularyTests {
    @Test("no cap: every one-edit neighbour is found, the last in vocabulary order too (the old scan stopped at 24)")
    func noCap() {
        // 25 words one substitution (at the first letter) from "qbcdef", and 20,000 unrelated ones.
        var words = "abcdefghijklmnoprstuvwxyz".map { "\($0)bcdef" }
        for n in 0..<20_000 { words.append("word\(n)") }
        let alternatives = TypoVocabulary(words).alternatives(for: "qbcdef")
        #expect(alternatives.count == 25)
        #expect(alternatives.contains("zbcdef") && alternatives.contains("abcdef"))
    }

    @Test("edits at the start, in the middle and at the end, each kind, 5, 6 and 10 letters")
    func everyPosition() {
        let vocabulary = TypoVocabulary(["gifur", "deburi", "caterpilla", "unrelated"])
        let cases = ["qgifur", "ifur", "gqifur", "gifu", "igfur", "gifru", "xifur", "gixur",   // 5 letters
                     "ddeburi", "eburi", "debxuri", "dbeuri", "debur", "deburix", "xeburi",    // 6 letters
                     "acterpilla", "caterpila", "caterpillaq", "catrepilla", "caterpilal"]      // 10 letters
        for typed in cases where typed.count >= SearchText.typoMinLength {
            let found = vocabulary.alternatives(for: typed)
            #expect(found.contains { prefix in ["gifur", "deburi", "caterpilla"].contains { $0.hasPrefix(prefix) } }, "\(typed) → \(found)")
            #expect(!found.contains { "unrelated".hasPrefix($0) }, "\(typed)")
        }
    }

    @Test("counted: a word leaves the vocabulary with its last use")
    func counted() {
        var vocabulary = TypoVocabulary(["dragon", "dragon"])
        #expect(vocabulary.alternatives(for: "drgon") == ["dragon"])
        vocabulary.remove("dragon")
        #expect(vocabulary.alternatives(for: "drgon") == ["dragon"])
        vocabulary.remove("dragon")
        #expect(vocabulary.alternatives(for: "drgon").isEmpty)
    }

    @Test("the walk finds exactly the shortest term prefixes one edit away, as a brute force over every prefix finds them (1,000 random words over 50 random vocabularies)")
    func walkAgreesWithBruteForce() {
        var rng = SplitMix(seed: 49)
        let letters = Array("abcde").map { UInt32($0.unicodeScalars.first!.value) }
        func word(_ length: Int) -> [UInt32] { (0..<length).map { _ in letters[rng.next(letters.count)] } }
        func text(_ scalars: [UInt32]) -> String { String(String.UnicodeScalarView(scalars.compactMap(Unicode.Scalar.init))) }
        var nonEmpty = 0
        for _ in 0..<50 {
            let terms = (0..<rng.next(300) + 20).map { _ in word(rng.next(5) + 4) }
            let vocabulary = TypoVocabulary(terms.map(text))
            let prefixes = Set(terms.flatMap { term in (0...term.count).map { Array(term[..<$0]) } })
            for _ in 0..<20 {
                let q = word(rng.next(4) + 5)
                let candidates = prefixes.filter { $0 != q && !$0.starts(with: q) && Self.oneEdit(q, $0) }
                let shortest = candidates.filter { c in !candidates.contains { $0.count < c.count && c.starts(with: $0) } }
                let expected = shortest.map(text).sorted()
                #expect(vocabulary.alternatives(for: text(q)).sorted() == expected, "\(text(q))")
                if !expected.isEmpty { nonEmpty += 1 }
            }
        }
        #expect(nonEmpty > 300)
    }

    @Test("a vocabulary changed word by word walks as one built at once (`insertAll`) (5,000 random inserts and removes, non-ASCII letters too)")
    func changesAgreeWithBuilt() {
        var rng = SplitMix(seed: 53)
        let letters = Array("abcdé").map { UInt32($0.unicodeScalars.first!.value) }
        func word() -> [UInt32] { (0..<rng.next(5) + 4).map { _ in letters[rng.next(letters.count)] } }
        func text(_ scalars: [UInt32]) -> String { String(String.UnicodeScalarView(scalars.compactMap(Unicode.Scalar.init))) }
        var vocabulary = TypoVocabulary(), uses: [[UInt32]: Int] = [:]
        var removed = 0, compared = 0
        for step in 0..<5_000 {
            let known = uses.keys.sorted { $0.lexicographicallyPrecedes($1) }   // (sorted: the same terms removed in every run)
            if rng.next(3) == 0 && !known.isEmpty {
                let term = known[rng.next(known.count)]
                vocabulary.remove(text(term)); uses[term] = uses[term]! > 1 ? uses[term]! - 1 : nil
                removed += 1
            } else {
                let term = word()
                vocabulary.insert(text(term)); uses[term, default: 0] += 1
            }
            guard step % 500 == 0 || step == 4_999 else { continue }
            var once = TypoVocabulary()   // built as the engine builds it: one sort
            once.insertAll(uses.sorted { $0.key.lexicographicallyPrecedes($1.key) }.flatMap { term, n in Array(repeating: text(term), count: n) })
            #expect(vocabulary.count == once.count && vocabulary.count == uses.count)
            for _ in 0..<20 {
                let q = text(word())
                #expect(vocabulary.alternatives(for: q) == once.alternatives(for: q), "\(q)")
                compared += 1
            }
        }
        #expect(removed > 1_000 && compared == 220)
    }

    /// Whether `b` is one insertion, deletion, substitution or swap of neighbours from `a`.
    static func oneEdit(_ a: [UInt32], _ b: [UInt32]) -> Bool {
        if a.count == b.count {
            let diff = (0..<a.count).filter { a[$0] != b[$0] }
            if diff.count == 1 { return true }
            return diff.count == 2 && diff[1] == diff[0] + 1 && a[diff[0]] == b[diff[1]] && a[diff[1]] == b[diff[0]]
        }
        let (long, short) = a.count > b.count ? (a, b) : (b, a)
        guard long.count == short.count + 1 else { return false }
        return (0..<long.count).contains { i in Array(long[..<i] + long[(i + 1)...]) == short }
    }
}
