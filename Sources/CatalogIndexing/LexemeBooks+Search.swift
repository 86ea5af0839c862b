/// Searches of a lexeme's sorted list (`id << 3 | weights` entries).
extension LexemeBooks {
    /// The first position from `start` whose entry is at least `value` (a sorted list): doubling
    /// steps from `start`, then halving — cheap when the answer is near.
    static func seek(_ entries: UnsafeBufferPointer<UInt32>, from start: Int, atLeast value: Int) -> Int {
        guard start < entries.count, Int(entries[start]) < value else { return start }
        var below = start, step = 1   // entries[below] < value
        while below + step < entries.count && Int(entries[below + step]) < value { below += step; step <<= 1 }
        var a = below + 1, b = min(below + step, entries.count)
        while a < b {
            let m = (a + b) / 2
            if Int(entries[m]) < value { a = m + 1 } else { b = m }
        }
        return a
    }

    /// The first position whose entry is at least `value`.
    static func lowerBound(_ list: UnsafeBufferPointer<UInt32>, _ value: UInt32) -> Int {
        var a = 0, b = list.count
        while a < b {
            let m = (a + b) / 2
            if list[m] < value { a = m + 1 } else { b = m }
        }
        return a
    }

    /// The first position whose entry is at least `value`.
    static func lowerBound(_ list: [UInt32], _ value: UInt32) -> Int { list.withUnsafeBufferPointer { lowerBound($0, value) } }
}
