extension LexemeBooks {
    /// How many books of `set` have this lexeme in their title or author.
    func titleOrAuthorCount(in set: Bitset) -> Int {
        if let dense {
            var n = 0
            set.words.withUnsafeBufferPointer { s in
                dense.title.words.withUnsafeBufferPointer { t in
                    dense.author.words.withUnsafeBufferPointer { a in
                        for w in 0..<s.count where s[w] != 0 {
                            n += (s[w] & ((w < t.count ? t[w] : 0) | (w < a.count ? a[w] : 0))).nonzeroBitCount
                        }
                    }
                }
            }
            return n
        }
        var n = 0
        for entry in list where entry & 3 != 0 && set.contains(Int(entry >> 3)) { n += 1 }
        return n
    }
}
