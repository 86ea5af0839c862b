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
}
