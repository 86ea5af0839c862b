import CPrefetch
import Core

/// The facets' sets side by side, for counting a page's facets: per 64-book word of the catalog,
/// one row holding that word of each age band's set then of each category's (in the catalog's
/// order), padded to 8, 16 or 32 columns or a multiple of 64. A count reads one row per word of
/// the matches — 128 bytes for a dozen facets, two or three cache lines, asked for a few rows
/// ahead (`ahead`) — where the sets one by one were a dozen lines far apart, and counts a row as
/// one vector. (A million books, 15 facets, from memory: a search holding 12 % of the
/// words counted in ~115–130 µs against 224–246 by set; every word in 200–320 against 232–273 —
/// docs/performance.md, rounds 19 and 20; `BENCH_ONLY=facets bench/run.sh` times it.)
///
/// The catalog's sets (`byAge`, `byCategory`) stay what filters and scopes read; this table is
/// their copy, kept with them book by book (`insert`, `remove`) and built again from them when
/// the categories change or a bulk load ends.
struct FacetTable: Sendable, Equatable {
    /// Columns per row: the age bands' and categories' (`columns`) up to 8, 16, 32 or a multiple of 64.
    private(set) var stride: Int
    /// Per category id, its column (after the age bands').
    private(set) var categoryColumns: [Int: Int] = [:]
    private(set) var columns: Int
    private(set) var words: [UInt64] = []

    /// The table of the age bands' sets `ages` and the sets of `categories` (each id once, in
    /// their order; a missing set is empty).
    init(ages: [Bitset], categories: [Int], byCategory: [Int: Bitset]) {
        var distinct: [Int] = []
        for id in categories where categoryColumns[id] == nil {
            categoryColumns[id] = ages.count + distinct.count
            distinct.append(id)
        }
        columns = ages.count + distinct.count
        stride = columns <= 8 ? 8 : columns <= 16 ? 16 : columns <= 32 ? 32 : (columns + 63) / 64 * 64
        let sets = ages + distinct.map { byCategory[$0] ?? Bitset() }
        let rows = sets.map(\.words.count).max() ?? 0, stride = stride
        words = [UInt64](repeating: 0, count: rows * stride)
        words.withUnsafeMutableBufferPointer { table in
            for (column, set) in sets.enumerated() {
                for (row, word) in set.words.enumerated() where word != 0 { table[row * stride + column] = word }
            }
        }
    }

    var rows: Int { words.count / stride }

    /// The same columns holding the same books (rows past the last book are empty either way).
    static func == (a: FacetTable, b: FacetTable) -> Bool {
        func held(_ words: [UInt64]) -> ArraySlice<UInt64> { words[..<((words.lastIndex { $0 != 0 } ?? -1) + 1)] }
        return a.stride == b.stride && a.columns == b.columns && a.categoryColumns == b.categoryColumns && held(a.words) == held(b.words)
    }

    /// Puts book `id` in the columns of the age bands (their ages: `bands`) its ages `from`–`to`
    /// cover and of its categories that have one.
    mutating func insert(_ id: Int, bands: [Int], from: Int, to: Int, categories: [Int]) {
        let row = id >> 6, bit = UInt64(1) << UInt64(id & 63)
        if row >= rows { words.append(contentsOf: repeatElement(0, count: (row + 1 - rows) * stride)) }
        for (column, age) in bands.enumerated() where from <= age && age <= to { words[row * stride + column] |= bit }
        for category in categories { if let column = categoryColumns[category] { words[row * stride + column] |= bit } }
    }

    /// Takes book `id` out of every column.
    mutating func remove(_ id: Int) {
        let row = id >> 6, mask = ~(UInt64(1) << UInt64(id & 63))
        guard row < rows else { return }
        for column in 0..<columns { words[row * stride + column] &= mask }
    }

    /// Per column, |`set` ∩ that column's set|, and |`set`| last — over `set`'s words `at` only
    /// when given (`set` is empty elsewhere: `Bitset.occupiedWords`).
    func counts(_ set: Bitset, at indices: [Int]? = nil) -> [Int] {
        switch stride {   // (a row of up to 64 columns read as one vector, its sums one vector)
        case ...8: counts(set, at: indices, by: SIMD8<UInt64>.self)
        case ...16: counts(set, at: indices, by: SIMD16<UInt64>.self)
        case ...32: counts(set, at: indices, by: SIMD32<UInt64>.self)
        default: counts(set, at: indices, by: SIMD64<UInt64>.self)
        }
    }

    /// How many rows ahead of the one read a count over some words asks for a row (a million
    /// books, from memory: the matches' rows read 1.1–2.0× faster than without; docs/performance.md,
    /// round 20).
    static let ahead = 12

    /// Asks for every cache line of the `bytes` at `row` (not 64-byte aligned: its last byte's too).
    @inline(__always) private static func prefetch(_ row: UnsafeRawPointer, bytes: Int) {
        var offset = 0
        while offset < bytes { storytime_prefetch(row + offset); offset &+= 64 }
        storytime_prefetch(row + (bytes &- 1))
    }

    private func counts<Row: SIMD>(_ set: Bitset, at indices: [Int]?, by: Row.Type) -> [Int] where Row.Scalar == UInt64 {
        let chunks = stride / Row.scalarCount, rows = rows, bytes = stride * 8
        var total = 0, sum = Row(), more = [Row](repeating: Row(), count: max(0, chunks - 1))
        set.words.withUnsafeBufferPointer { a in
            words.withUnsafeBufferPointer { table in
                more.withUnsafeMutableBufferPointer { more in
                    @inline(__always) func add(_ w: Int) {
                        let word = a[w]
                        total &+= word.nonzeroBitCount
                        guard w < rows, let base = UnsafeRawPointer(table.baseAddress) else { return }
                        let mask = Row(repeating: word), row = base + w &* bytes
                        sum &+= (mask & row.loadUnaligned(as: Row.self)).nonzeroBitCount
                        for c in 1..<Swift.max(1, chunks) {
                            more[c - 1] &+= (mask & row.loadUnaligned(fromByteOffset: c &* MemoryLayout<Row>.size, as: Row.self)).nonzeroBitCount
                        }
                    }
                    guard let indices else { for w in 0..<a.count { add(w) }; return }
                    // The rows of the matches' words, ascending with gaps: each row's lines are
                    // asked for `Self.ahead` rows before it is read (the hardware prefetcher
                    // follows a pass over every row, not these).
                    indices.withUnsafeBufferPointer { indices in
                        for k in 0..<indices.count {
                            if k &+ Self.ahead < indices.count, let base = UnsafeRawPointer(table.baseAddress) {
                                let next = indices[k &+ Self.ahead]   // (in the table only: a row past it is not asked for)
                                if UInt(bitPattern: next) < UInt(rows) { Self.prefetch(base + next &* bytes, bytes: bytes) }
                            }
                            if indices[k] < a.count { add(indices[k]) }
                        }
                    }
                }
            }
        }
        let sums = [sum] + more
        return (0..<columns).map { Int(sums[$0 / Row.scalarCount][$0 % Row.scalarCount]) } + [total]
    }
}
