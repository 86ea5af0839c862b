import Core
/// A set of small non-negative integers (book ids) as 64-bit words: exact counts are popcounts,
/// filters are word-wise ANDs.
public struct Bitset: Sendable, Equatable {
    public private(set) var words: [UInt64]

    public init(capacity: Int = 0) {
        words = [UInt64](repeating: 0, count: (capacity + 63) >> 6)
    }

    public init(words: [UInt64]) { self.words = words }

    public var capacity: Int { words.count << 6 }

    public mutating func reserve(_ bits: Int) {
        let needed = (bits + 63) >> 6
        if needed > words.count { words.append(contentsOf: repeatElement(0, count: needed - words.count)) }
    }

    public func contains(_ i: Int) -> Bool {
        let w = i >> 6
        return w < words.count && words[w] & (1 << UInt64(i & 63)) != 0
    }

    public mutating func insert(_ i: Int) {
        reserve(i + 1)
        words[i >> 6] |= 1 << UInt64(i & 63)
    }

    public mutating func remove(_ i: Int) {
        let w = i >> 6
        if w < words.count { words[w] &= ~(1 << UInt64(i & 63)) }
    }

    public var count: Int {
        words.withUnsafeBufferPointer { buffer in buffer.reduce(0) { $0 &+ $1.nonzeroBitCount } }
    }

    public var isEmpty: Bool { !words.contains { $0 != 0 } }

    public mutating func formIntersection(_ other: Bitset) {
        other.words.withUnsafeBufferPointer { formIntersection($0) }
    }

    /// Intersection with a set given as its words (missing words are empty).
    public mutating func formIntersection(_ other: UnsafeBufferPointer<UInt64>) {
        let n = Swift.min(words.count, other.count)
        words.withUnsafeMutableBufferPointer { a in
            for i in 0..<n { a[i] &= other[i] }
            for i in n..<a.count { a[i] = 0 }
        }
    }

    /// self ∩ `other` as a new set, in one pass (`formIntersection` on a shared set copies it first).
    public func intersection(_ other: UnsafeBufferPointer<UInt64>) -> Bitset {
        words.withUnsafeBufferPointer { a in
            Bitset(words: [UInt64](unsafeUninitializedCapacity: a.count) { out, count in
                let n = Swift.min(a.count, other.count)
                for i in 0..<n { out[i] = a[i] & other[i] }
                for i in n..<a.count { out[i] = 0 }
                count = a.count
            })
        }
    }

    public func intersection(_ other: Bitset) -> Bitset { other.words.withUnsafeBufferPointer { intersection($0) } }

    public mutating func formUnion(_ other: Bitset) {
        reserve(other.capacity)
        other.words.withUnsafeBufferPointer { b in
            words.withUnsafeMutableBufferPointer { a in
                for i in 0..<b.count { a[i] |= b[i] }
            }
        }
    }

    /// Removes `other`'s members.
    public mutating func subtract(_ other: Bitset) {
        let n = Swift.min(words.count, other.words.count)
        other.words.withUnsafeBufferPointer { b in
            words.withUnsafeMutableBufferPointer { a in
                for i in 0..<n { a[i] &= ~b[i] }
            }
        }
    }

    /// |self ∩ other| without building it.
    public func intersectionCount(_ other: Bitset) -> Int {
        let n = Swift.min(words.count, other.words.count)
        return words.withUnsafeBufferPointer { a in
            other.words.withUnsafeBufferPointer { b in
                var total = 0
                for i in 0..<n { total &+= (a[i] & b[i]).nonzeroBitCount }
                return total
            }
        }
    }

    /// The indices of the words holding members, when there are at most `limit` of them (a
    /// sparse set, whose counts need only those words); nil past it.
    public func occupiedWords(atMost limit: Int) -> [Int]? {
        words.withUnsafeBufferPointer { buffer -> [Int]? in
            // Counted first, then written into a list of that size (and one slot more: each index
            // is written and kept when its word is not empty — no branch to mispredict, which a
            // catalog's scattered matches did at every other word).
            var occupied = 0
            for word in buffer { occupied &+= Self.isOccupied(word) }
            guard occupied <= limit else { return nil }
            return [Int](unsafeUninitializedCapacity: occupied + 1) { out, count in
                var k = 0
                for i in 0..<buffer.count { out[k] = i; k &+= Self.isOccupied(buffer[i]) }
                count = k
            }
        }
    }

    /// 1 when `word` holds a member, else 0, computed without a branch (x | -x has its top bit
    /// set for any x but 0).
    @inline(__always) static func isOccupied(_ word: UInt64) -> Int { Int(truncatingIfNeeded: (word | (0 &- word)) >> 63) }

    /// |self ∩ other| counted over the words `at` only (self is empty elsewhere: `occupiedWords`).
    public func intersectionCount(_ other: Bitset, at indices: [Int]) -> Int {
        words.withUnsafeBufferPointer { a in
            other.words.withUnsafeBufferPointer { b in
                var total = 0
                let length = Swift.min(a.count, b.count)
                for i in indices where i < length { total &+= (a[i] & b[i]).nonzeroBitCount }
                return total
            }
        }
    }

    /// self ∩ `compact` (`compact[k]` standing for word `indices[k]`), where self holds nothing
    /// outside `indices`: written in place; the indices left non-empty, in order.
    mutating func formIntersection(_ compact: [UInt64], at indices: [Int]) -> [Int] {
        var left: [Int] = []
        left.reserveCapacity(indices.count)
        words.withUnsafeMutableBufferPointer { words in
            for (k, w) in indices.enumerated() where w < words.count {
                words[w] &= compact[k]
                if words[w] != 0 { left.append(w) }
            }
        }
        return left
    }

    /// `formIntersection(_:at:)` as a new set (every word outside `indices` empty), and the indices left.
    func intersection(_ compact: [UInt64], at indices: [Int]) -> (Bitset, [Int]) {
        var left: [Int] = []
        left.reserveCapacity(indices.count)
        let set = words.withUnsafeBufferPointer { words in
            Bitset(words: [UInt64](unsafeUninitializedCapacity: words.count) { out, count in
                out.initialize(repeating: 0)
                for (k, w) in indices.enumerated() where w < words.count && words[w] & compact[k] != 0 {
                    out[w] = words[w] & compact[k]
                    left.append(w)
                }
                count = words.count
            })
        }
        return (set, left)
    }

    /// The members in increasing order; `body` returns false to stop.
    public func forEach(_ body: (Int) -> Bool) {
        words.withUnsafeBufferPointer { buffer in
            for (w, word) in buffer.enumerated() where word != 0 {
                var bits = word
                while bits != 0 {
                    let bit = bits.trailingZeroBitCount
                    if !body(w << 6 | bit) { return }
                    bits &= bits &- 1
                }
            }
        }
    }

    public var members: [Int] {
        var result: [Int] = []
        result.reserveCapacity(count)
        forEach { result.append($0); return true }
        return result
    }
}

extension Bitset {
    func encode(to writer: SnapshotWriter) throws { try writer.array(words) }
    init(snapshot reader: inout SnapshotReader) throws { self.init(words: try reader.array()) }
}
