/// Synonyms staff manage (console → Search synonyms): a group (`bunny, rabbit, hare`: each finds
/// the others) or one way (`kitty → cat`: the first finds the rest, not back). Words are folded
/// like query words; a rule of multi-word phrases is read word by word. A query word finds a
/// rule's words through its forms too ("bunnies" as "bunny": same stem in some language).
public struct Synonyms: Sendable, Equatable {
    public struct Rule: Sendable, Equatable {
        public let words: [String]
        public let oneWay: Bool
        public init(words: String, oneWay: Bool) {
            self.words = SearchText.words(words)
            self.oneWay = oneWay
        }
    }

    /// Word → the words it also finds, each list sorted.
    public private(set) var targets: [String: [String]] = [:]
    /// Stem token (`~en:bunni`) of a source word → the words it finds.
    private var byStem: [String: [String]] = [:]

    public init(_ rules: [Rule] = []) {
        var map: [String: Set<String>] = [:]
        for rule in rules where rule.words.count > 1 {
            let sources = rule.oneWay ? [rule.words[0]] : rule.words
            for source in sources { map[source, default: []].formUnion(rule.words.filter { $0 != source }) }
        }
        targets = map.mapValues { $0.sorted() }
        var stems: [String: Set<String>] = [:]
        for (source, words) in map {
            for token in WordForms.tokens(source) { stems[token, default: []].formUnion(words) }
        }
        byStem = stems.mapValues { $0.sorted() }
    }

    /// The words `word` also finds: its own rules', and those of words with its stem.
    public func of(_ word: String) -> [String] {
        if targets.isEmpty { return [] }
        var found = Set(targets[word] ?? [])
        for token in WordForms.tokens(word) { found.formUnion(byStem[token] ?? []) }
        found.remove(word)
        return found.sorted()
    }
}
