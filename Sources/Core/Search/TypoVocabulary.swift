/// The words typos are corrected against (title and author words of four letters or more), kept
/// sorted so that it is also a trie: the terms sharing a prefix are one contiguous range.
///
/// `alternatives(for:)` walks that implicit trie with one edit to spend (substitution, insertion,
/// deletion, transposition of neighbours) and returns every prefix of a term within one edit of
/// the query word — at any position, with no cap — reduced to the shortest ones (a prefix
/// matches everything its extensions match). Words are compared by Unicode scalar, and the terms
/// are counted, so a word leaves when the last book using it does.
///
/// It also holds the stem tokens of those words (`~en:puppi`, see `WordForms`), apart from the
/// trie, and the words by their Metaphone code, for a child's spelling (`SearchExpansion`).
public struct TypoVocabulary: Sendable {
    public static let minTermLength = 4
    private var terms: [[UInt32]] = []
    private var counts: [[UInt32]: Int] = [:]
    private var stemTokens: [String: Int] = [:]
    private var sounds: [String: Set<String>] = [:]

    public init(_ words: [String] = []) {
        for word in words { insert(word) }
    }

    public var count: Int { terms.count }

    /// Adds one use of `word` (ignored when shorter than `minTermLength`).
    public mutating func insert(_ word: String) {
        if word.hasPrefix("~") { stemTokens[word, default: 0] += 1; return }
        let scalars = word.unicodeScalars.map(\.value)
        guard scalars.count >= Self.minTermLength else { return }
        if let n = counts[scalars] { counts[scalars] = n + 1; return }
        counts[scalars] = 1
        terms.insert(scalars, at: lowerBound(scalars))
        addSound(word)
    }

    private mutating func addSound(_ word: String) {
        guard let code = Self.sound(word) else { return }
        sounds[code, default: []].insert(word)
    }

    /// The Metaphone code of a word of ASCII letters (nil otherwise: the code would skip letters).
    public static func sound(_ word: String) -> String? {
        guard word.utf8.allSatisfy({ $0 >= 97 && $0 <= 122 }) else { return nil }
        let code = Metaphone.code(word)
        return code.isEmpty ? nil : code
    }

    /// Whether a book's stem vector holds `token` (`~en:puppi`).
    public func hasStemToken(_ token: String) -> Bool { stemTokens[token] != nil }

    /// Whether some term starts with `prefix`.
    public func hasTerm(startingWith prefix: String) -> Bool {
        let scalars = prefix.unicodeScalars.map(\.value)
        let i = lowerBound(scalars)
        return i < terms.count && terms[i].starts(with: scalars)
    }

    /// The shortest term starting with `prefix` (the first in order among equals).
    public func shortestTerm(startingWith prefix: String) -> String? {
        let scalars = prefix.unicodeScalars.map(\.value)
        var i = lowerBound(scalars), best: [UInt32]?
        while i < terms.count && terms[i].starts(with: scalars) {
            if best == nil || terms[i].count < best!.count { best = terms[i] }
            i += 1
        }
        return best.map { String(String.UnicodeScalarView($0.compactMap(Unicode.Scalar.init))) }
    }

    /// The terms that sound like `word` (its Metaphone code), sorted.
    public func soundingLike(_ word: String) -> [String] {
        guard let code = Self.sound(word) else { return [] }
        return (sounds[code] ?? []).sorted()
    }

    /// Builds from many words at once (one sort instead of many inserts).
    public mutating func insertAll(_ words: some Sequence<String>) {
        for word in words {
            if word.hasPrefix("~") { stemTokens[word, default: 0] += 1; continue }
            let scalars = word.unicodeScalars.map(\.value)
            guard scalars.count >= Self.minTermLength else { continue }
            if counts[scalars] == nil { addSound(word) }
            counts[scalars, default: 0] += 1
        }
        terms = counts.keys.sorted(by: Self.less)
    }

    /// Removes one use of `word`.
    public mutating func remove(_ word: String) {
        if word.hasPrefix("~") {
            if let n = stemTokens[word] { stemTokens[word] = n > 1 ? n - 1 : nil }
            return
        }
        let scalars = word.unicodeScalars.map(\.value)
        guard let n = counts[scalars] else { return }
        if n > 1 { counts[scalars] = n - 1; return }
        counts[scalars] = nil
        if let code = Self.sound(word) {
            sounds[code]?.remove(word)
            if sounds[code]?.isEmpty == true { sounds[code] = nil }
        }
        let index = lowerBound(scalars)
        if index < terms.count && terms[index] == scalars { terms.remove(at: index) }
    }

    public func contains(_ word: String) -> Bool {
        word.hasPrefix("~") ? stemTokens[word] != nil : counts[word.unicodeScalars.map(\.value)] != nil
    }

    /// The shortest prefixes of terms that are one edit from `word` (for words of at least
    /// `SearchText.typoMinLength` letters), without those `word` itself already covers.
    public func alternatives(for word: String) -> [String] {
        let q = word.unicodeScalars.map(\.value)
        guard q.count >= SearchText.typoMinLength else { return [] }
        var found = Set<[UInt32]>()
        var prefix: [UInt32] = []
        terms.withUnsafeBufferPointer { terms in walk(terms, q, 0, edited: false, &prefix, 0, terms.count, &found) }
        // Keep the shortest: drop any found prefix that extends another, or that extends q.
        let sorted = found.sorted(by: Self.less)
        var result: [[UInt32]] = []
        for candidate in sorted where candidate != q && !candidate.starts(with: q) {
            if let last = result.last, candidate.starts(with: last) { continue }
            result.append(candidate)
        }
        return result.map { String(String.UnicodeScalarView($0.compactMap(Unicode.Scalar.init))) }
    }

    /// Depth-first over the terms in `lo..<hi`, which all start with `prefix`; `i` letters of
    /// `q` are consumed. Until the edit is spent a range narrows by one letter at a time (the
    /// letter at `prefix.count`), so no search compares whole prefixes; after it, one search
    /// looks for the rest of `q` (`continues`).
    private func walk(_ terms: UnsafeBufferPointer<[UInt32]>, _ q: [UInt32], _ i: Int, edited: Bool, _ prefix: inout [UInt32], _ lo: Int, _ hi: Int,
                      _ found: inout Set<[UInt32]>) {
        guard lo < hi else { return }
        let depth = prefix.count
        // The edit is spent: the rest of q must follow as it is — one search for the whole rest,
        // not a range per letter (each of which listed every letter that follows there).
        if edited {
            if Self.continues(terms, depth: depth, with: q[i...], lo, hi) { found.insert(prefix + q[i...]) }
            return
        }
        guard i < q.count else { return }
        // Deletion: q has a letter the term does not.
        walk(terms, q, i + 1, edited: true, &prefix, lo, hi, &found)
        // Transposition of q[i] and q[i+1].
        if i + 1 < q.count && q[i] != q[i + 1] {
            let (a, b) = Self.letterRange(terms, depth: depth, letter: q[i + 1], lo, hi)
            let (c, d) = Self.letterRange(terms, depth: depth + 1, letter: q[i], a, b)
            prefix.append(q[i + 1]); prefix.append(q[i])
            walk(terms, q, i + 2, edited: true, &prefix, c, d, &found)
            prefix.removeLast(2)
        }
        // Every letter that follows `prefix` in some term.
        var start = lo
        while start < hi && terms[start].count == depth { start += 1 }   // the prefix itself, sorted first
        while start < hi {
            let letter = terms[start][depth]
            let end = Self.letterEnd(terms, depth: depth, letter: letter, start, hi)
            prefix.append(letter)
            // The same letter as q's, or a substitution (the edit spent).
            walk(terms, q, i + 1, edited: letter != q[i], &prefix, start, end, &found)
            walk(terms, q, i, edited: true, &prefix, start, end, &found)          // insertion
            prefix.removeLast()
            start = end
        }
    }

    /// Whether some term of `lo..<hi` (all sharing their first `depth` letters) goes on with `rest`.
    private static func continues(_ terms: UnsafeBufferPointer<[UInt32]>, depth: Int, with rest: ArraySlice<UInt32>, _ lo: Int, _ hi: Int) -> Bool {
        var a = lo, b = hi
        while a < b {   // the first whose letters from `depth` on are not below `rest`
            let m = (a + b) / 2
            if terms[m][depth...].lexicographicallyPrecedes(rest) { a = m + 1 } else { b = m }
        }
        return a < hi && terms[a][depth...].starts(with: rest)
    }

    /// The terms of `lo..<hi` (all sharing their first `depth` letters) whose next letter is `letter`.
    private static func letterRange(_ terms: UnsafeBufferPointer<[UInt32]>, depth: Int, letter: UInt32, _ lo: Int, _ hi: Int) -> (Int, Int) {
        var a = lo
        while a < hi && terms[a].count == depth { a += 1 }   // the shared prefix itself, sorted first
        var b = hi
        while a < b {   // first whose letter at `depth` is not below `letter`
            let m = (a + b) / 2
            if terms[m][depth] < letter { a = m + 1 } else { b = m }
        }
        return (a, letterEnd(terms, depth: depth, letter: letter, a, hi))
    }

    /// The first index of `lo..<hi` whose letter at `depth` is past `letter` (all before are not).
    private static func letterEnd(_ terms: UnsafeBufferPointer<[UInt32]>, depth: Int, letter: UInt32, _ lo: Int, _ hi: Int) -> Int {
        var a = lo, b = hi
        while a < b {
            let m = (a + b) / 2
            if terms[m][depth] <= letter { a = m + 1 } else { b = m }
        }
        return a
    }

    private func lowerBound(_ term: [UInt32]) -> Int {
        var a = 0, b = terms.count
        while a < b {
            let m = (a + b) / 2
            if Self.less(terms[m], term) { a = m + 1 } else { b = m }
        }
        return a
    }

    static func less(_ a: [UInt32], _ b: [UInt32]) -> Bool { a.lexicographicallyPrecedes(b) }
}

extension TypoVocabulary {
    /// The terms in order with their use counts (the catalog engine's snapshot).
    /// Stem tokens follow the terms in the same arrays.
    public func encode(to writer: SnapshotWriter) throws {
        let tokens = stemTokens.keys.sorted().map { ($0.unicodeScalars.map(\.value), stemTokens[$0]!) }
        let all = terms.map { ($0, counts[$0] ?? 0) } + tokens
        try writer.array(all.map { UInt32($0.0.count) })
        try writer.array(all.flatMap { $0.0 })
        try writer.array(all.map { $0.1 })
    }

    public init(snapshot reader: inout SnapshotReader) throws {
        let lengths = try reader.array(of: UInt32.self), scalars = try reader.array(of: UInt32.self), uses = try reader.array(of: Int.self)
        guard lengths.count == uses.count, lengths.reduce(0, { $0 + Int($1) }) == scalars.count else {
            throw SnapshotReader.Failure.corrupt("typo vocabulary")
        }
        self.init()
        var start = 0
        terms.reserveCapacity(lengths.count)
        counts.reserveCapacity(lengths.count)
        for (length, n) in zip(lengths, uses) {
            let term = Array(scalars[start..<start + Int(length)])
            start += Int(length)
            if term.first == 126 {   // "~": a stem token
                stemTokens[String(String.UnicodeScalarView(term.compactMap(Unicode.Scalar.init)))] = n
                continue
            }
            // The walk's ranges need the terms sorted and distinct: a snapshot that breaks it is refused.
            if let last = terms.last, !Self.less(last, term) { throw SnapshotReader.Failure.corrupt("typo vocabulary order") }
            terms.append(term)
            counts[term] = n
            addSound(String(String.UnicodeScalarView(term.compactMap(Unicode.Scalar.init))))
        }
    }
}
