import CStemmer
import Foundation
import Synchronization

/// Word forms: Snowball stems per catalog language and the irregular English plurals Snowball
/// cannot know. A book's title and author words are stemmed in the book's language by PostgreSQL
/// (`books.stem_vector`, the same Snowball algorithms, migration 0027); a query word is stemmed
/// here in every language, so "puppies" finds an English "Puppy" and "chevaux" a French "Cheval".
public enum WordForms {
    /// Catalog language → Snowball algorithm (PostgreSQL's `<name>_stem` dictionary).
    public static let languages: [(code: String, algorithm: String)] = [
        ("en", "english"), ("fr", "french"), ("es", "spanish"), ("de", "german"),
        ("it", "italian"), ("pt", "portuguese"), ("nl", "dutch"),
    ]

    /// The stem token a book's stem vector holds for `word` in `language`: `~en:puppi`. The `~`
    /// keeps stems apart from words (a query word is letters and digits only).
    public static func token(_ word: String, language: String) -> String? {
        guard let stem = stem(word, language: language) else { return nil }
        return "~" + language + ":" + stem
    }

    /// `word`'s stem token in every catalog language that has a stemmer, in `languages`' order
    /// (`token(_:language:)` for each): what a query word's expansion and a change's forms ask
    /// for, from one memo instead of one lookup and one new string per language. Bounded as the
    /// stemmers' memos are: words of up to 40 bytes, 16,384 of them, then it starts over (~11 MB
    /// at most; many made-up words only make it compute again).
    public static func tokens(_ word: String) -> [String] {
        if let known = tokenMemo.withLock({ $0[word] }) { return known }
        // Each stemmer asked without its memo: this memo keeps the word's every stem at once, and
        // a query word new here is rarely in theirs (7 lookups and 7 insertions per new word were
        // a third of its expansion's stemming).
        let tokens = orderedStemmers.map { "~" + $0.code + ":" + $0.stemmer.stem(word, kept: false) }
        guard word.utf8.count <= Stemmer.memoWordBytes else { return tokens }   // (as the stemmers' memos)
        tokenMemo.withLock { memo in
            if memo.count >= Stemmer.memoLimit { memo.removeAll(keepingCapacity: true) }
            memo[word] = tokens
        }
        return tokens
    }

    private static let tokenMemo = Mutex<[String: [String]]>([:])

    /// `word` (folded) stemmed by `language`'s Snowball stemmer; nil for a language without one.
    public static func stem(_ word: String, language: String) -> String? {
        guard let stemmer = stemmers[language] else { return nil }
        return stemmer.stem(word)
    }

    /// The other forms of an irregular English noun (`mice` → `mouse`, `mouse` → `mice`).
    public static func irregular(_ word: String) -> [String] {
        guard let group = irregularGroups[word] else { return [] }
        return group.filter { $0 != word }
    }

    /// Plurals Snowball's English stemmer leaves apart, both directions (a small list shipped with
    /// the project: children's books are full of mice, geese and sheep).
    static let irregularList: [[String]] = [
        ["mouse", "mice"], ["goose", "geese"], ["child", "children"], ["foot", "feet"], ["tooth", "teeth"],
        ["man", "men"], ["woman", "women"], ["person", "people"], ["ox", "oxen"], ["louse", "lice"],
        ["wolf", "wolves"], ["leaf", "leaves"], ["knife", "knives"], ["wife", "wives"], ["life", "lives"],
        ["elf", "elves"], ["calf", "calves"], ["half", "halves"], ["loaf", "loaves"], ["thief", "thieves"],
        ["shelf", "shelves"], ["scarf", "scarves"], ["cactus", "cacti"], ["fungus", "fungi"],
        ["octopus", "octopuses", "octopi"], ["die", "dice"], ["fish", "fishes"], ["sheep"], ["deer"],
        ["moose"], ["dwarf", "dwarves"], ["hoof", "hooves"], ["potato", "potatoes"], ["tomato", "tomatoes"],
        ["hero", "heroes"], ["volcano", "volcanoes"], ["mosquito", "mosquitoes"], ["echo", "echoes"],
    ]

    static let irregularGroups: [String: [String]] = {
        var groups: [String: [String]] = [:]
        for group in irregularList where group.count > 1 { for word in group { groups[word] = group } }
        return groups
    }()

    private static let stemmers: [String: Stemmer] = Dictionary(uniqueKeysWithValues: orderedStemmers.map { ($0.code, $0.stemmer) })

    /// The languages that have a stemmer, in `languages`' order, each with it.
    private static let orderedStemmers: [(code: String, stemmer: Stemmer)] = languages.compactMap { language in
        Stemmer(algorithm: language.algorithm).map { (language.code, $0) }
    }

    /// One Snowball stemmer; libstemmer's are not thread-safe, so each is used under a lock.
    /// Its stems are kept (up to `memoLimit` words, then it starts over): a word is stemmed for
    /// its search's expansion, again for the forms a kept answer holds, and a title's words for
    /// every page that highlights them — each time the same stem.
    private final class Stemmer: @unchecked Sendable {
        private let stemmer: OpaquePointer
        private let lock = NSLock()
        private var memo: [String: String] = [:]
        static let memoLimit = 16_384, memoWordBytes = 40

        init?(algorithm: String) {
            guard let stemmer = sb_stemmer_new(algorithm, "UTF_8") else { return nil }
            self.stemmer = stemmer
        }

        deinit { sb_stemmer_delete(stemmer) }

        /// `word`'s stem; `kept: false` neither reads nor fills the memo.
        func stem(_ word: String, kept: Bool = true) -> String {
            lock.lock(); defer { lock.unlock() }
            if kept, let known = memo[word] { return known }
            let bytes = Array(word.utf8)
            guard let out = bytes.withUnsafeBufferPointer({ sb_stemmer_stem(stemmer, $0.baseAddress, Int32($0.count)) }) else { return word }
            let stem = String(decoding: UnsafeBufferPointer(start: out, count: Int(sb_stemmer_length(stemmer))), as: UTF8.self)
            // Only words of a title's length are kept: a query's made-up long words (up to
            // `maxQueryLength`, in every language) would otherwise fill the memo with kilobytes each.
            guard kept, bytes.count <= Self.memoWordBytes else { return stem }
            if memo.count >= Self.memoLimit { memo.removeAll(keepingCapacity: true) }
            memo[word] = stem
            return stem
        }
    }
}
