import Core
/// The books one lexeme occurs in, with the fields it occurs in. A rare lexeme is a sorted list of
/// `id << 3 | weight bits`; a common one (in more than a sixteenth of the id range) is three
/// bitsets — title, author, description — which at that density are no bigger than the list and
/// are searched with word-wise ORs instead of one step per book.
struct LexemeBooks: Sendable {
    struct Dense: Sendable {
        var title = Bitset(), author = Bitset(), description = Bitset()
    }

    private(set) var list: [UInt32] = []
    private(set) var dense: Dense?
    private(set) var count = 0
    /// Entries were appended out of order or removals are pending a `filter`.
    private var unsorted = false
    /// The least and greatest id the list may hold (never narrower than the list: a removal
    /// leaves it), kept inline so a run of blocks passes a rare lexeme by without reading its list.
    private var low = Int.max, high = Int.min

    /// The density past which a list becomes bitsets.
    static func denseThreshold(capacity: Int) -> Int { max(4096, capacity / 16) }

    /// Adds a book; `append` leaves the list unsorted until `finish` (bulk and batch changes).
    mutating func add(_ id: Int, weights: UInt8, append: Bool) {
        count += 1
        if dense != nil {
            if weights & CatalogBook.title != 0 { dense!.title.insert(id) }
            if weights & CatalogBook.author != 0 { dense!.author.insert(id) }
            if weights & CatalogBook.description != 0 { dense!.description.insert(id) }
            return
        }
        let entry = UInt32(id) << 3 | UInt32(weights & 7)
        low = min(low, id); high = max(high, id)
        if append {
            if let last = list.last, last > entry { unsorted = true }
            list.append(entry)
        } else {
            list.insert(entry, at: Self.lowerBound(list, UInt32(id) << 3))
        }
    }

    /// Removes a book; `deferred` leaves a list entry for `filter` (batch changes).
    mutating func remove(_ id: Int, deferred: Bool) {
        count -= 1
        if dense != nil {
            dense!.title.remove(id); dense!.author.remove(id); dense!.description.remove(id)
            return
        }
        if deferred { unsorted = true; return }
        let at = Self.lowerBound(list, UInt32(id) << 3)
        if at < list.count && list[at] >> 3 == UInt32(id) { list.remove(at: at) }
    }

    /// Drops the list entries of `removed` (before the batch's books are added back).
    mutating func filter(removed: Bitset) {
        guard dense == nil, unsorted else { return }
        list.removeAll { removed.contains(Int($0 >> 3)) }
        unsorted = false
        spanList()
    }

    /// `low` and `high` from the list as it is.
    private mutating func spanList() {
        if unsorted {
            low = list.lazy.map { Int($0 >> 3) }.min() ?? .max; high = list.lazy.map { Int($0 >> 3) }.max() ?? .min
        } else {
            low = list.first.map { Int($0 >> 3) } ?? .max; high = list.last.map { Int($0 >> 3) } ?? .min
        }
    }

    /// Whether the list may hold a book of `blocks`' id span (a dense lexeme: always).
    @inline(__always) func mayHold(_ blocks: Blocks) -> Bool {
        dense != nil || (high >= blocks.first << 6 && low < (blocks.first + blocks.slots.count) << 6)
    }

    /// Sorts what was appended and turns a list past the threshold into bitsets.
    mutating func finish(capacity: Int) {
        if unsorted { list.sort(); unsorted = false }
        spanList()
        guard dense == nil, count > Self.denseThreshold(capacity: capacity) else { return }
        var sets = Dense()
        sets.title.reserve(capacity); sets.author.reserve(capacity); sets.description.reserve(capacity)
        for entry in list {
            let id = Int(entry >> 3)
            if entry & 1 != 0 { sets.title.insert(id) }
            if entry & 2 != 0 { sets.author.insert(id) }
            if entry & 4 != 0 { sets.description.insert(id) }
        }
        dense = sets
        list = []
    }

    /// The blocks a word set covers (`CatalogIndex.WordSets`): their indices in the id range,
    /// ascending, and per block from `first` on its position among them (-1: not covered). A
    /// sorted list is read only over the ids those blocks span.
    struct Blocks {
        let indices: UnsafeBufferPointer<Int>
        let slots: UnsafeBufferPointer<Int32>
        var first = 0

        /// The compact position of block `w` (-1: not covered).
        @inline(__always) func slot(_ w: Int) -> Int {
            let i = w - first
            return i >= 0 && i < slots.count ? Int(slots[i]) : -1
        }
    }

    /// Calls `body` with each list entry in `blocks` and its block's compact position. A list
    /// much longer than the blocks (a word's matches are a few blocks scattered over the whole id
    /// range) is sought block by block (`seek`); a shorter one is read through over the blocks'
    /// id span, each entry's block looked up. An unsorted list is read through.
    @inline(__always) private func forEachEntry(in blocks: Blocks, _ body: (Int, UInt32) -> Void) {
        list.withUnsafeBufferPointer { all in
            // Entries are `id << 3 | weights`: ids below 2^29.
            func bound(_ id: Int) -> Int { id >= 1 << 29 ? all.count : Self.lowerBound(all, UInt32(id) << 3) }
            let from = unsorted ? 0 : bound(blocks.first << 6), to = unsorted ? all.count : bound((blocks.first + blocks.slots.count) << 6)
            let entries = UnsafeBufferPointer(rebasing: all[from..<max(from, to)])
            if unsorted || entries.count <= blocks.indices.count * Self.seekRatio {
                for entry in entries {
                    let k = blocks.slot(Int(entry >> 9))
                    if k >= 0 { body(k, entry) }
                }
                return
            }
            var at = 0
            for (k, w) in blocks.indices.enumerated() {
                at = Self.seek(entries, from: at, atLeast: w << 9)
                while at < entries.count && Int(entries[at]) < (w + 1) << 9 { body(k, entries[at]); at += 1 }
                if at == entries.count { break }
            }
        }
    }

    /// Past how many entries per block a list is sought block by block (`forEachEntry`): a
    /// seek costs a few comparisons per halving, reading through one step per entry.
    static let seekRatio = 12


    /// ORs the books into five compact sets over `blocks` (`blocks.indices.count` 64-bit words
    /// each): title, title or author, then the level sets. `levels`: how many of the level sets
    /// (1, 2, 3) the match counts in — a literal match (3) in all three, a sound-alike (0) in none.
    func accumulate(into sets: UnsafeMutableBufferPointer<UInt64>, blocks: Blocks, levels: Int) {
        guard mayHold(blocks) else { return }
        let width = blocks.indices.count, levels = min(max(levels, 0), 3)   // five sets: never past the buffer
        if let dense {
            dense.title.words.withUnsafeBufferPointer { t in
                dense.author.words.withUnsafeBufferPointer { a in
                    dense.description.words.withUnsafeBufferPointer { d in
                        for (k, w) in blocks.indices.enumerated() {
                            let title = w < t.count ? t[w] : 0
                            let titleOrAuthor = title | (w < a.count ? a[w] : 0)
                            sets[k] |= title
                            sets[width + k] |= titleOrAuthor
                            guard levels > 0 else { continue }
                            let any = titleOrAuthor | (w < d.count ? d[w] : 0)
                            for l in 0..<levels { sets[(2 + l) * width + k] |= any }
                        }
                    }
                }
            }
            return
        }
        forEachEntry(in: blocks) { k, entry in
            let bit = UInt64(1) << UInt64((entry >> 3) & 63)
            if entry & 1 != 0 { sets[k] |= bit }
            if entry & 3 != 0 { sets[width + k] |= bit }
            for l in 0..<levels { sets[(2 + l) * width + k] |= bit }
        }
    }

    /// ORs every book of the lexeme holding it in one of `fields` (all three: whatever the
    /// field) into a compact set over `blocks`.
    func accumulateAll(into set: UnsafeMutableBufferPointer<UInt64>, blocks: Blocks, fields: UInt8 = 7) {
        guard mayHold(blocks) else { return }
        if let dense {
            // (A field not asked for: an empty set.)
            let title = fields & CatalogBook.title != 0 ? dense.title.words : [], author = fields & CatalogBook.author != 0 ? dense.author.words : []
            let description = fields & CatalogBook.description != 0 ? dense.description.words : []
            title.withUnsafeBufferPointer { t in
                author.withUnsafeBufferPointer { a in
                    description.withUnsafeBufferPointer { d in
                        for (k, w) in blocks.indices.enumerated() {
                            set[k] |= (w < t.count ? t[w] : 0) | (w < a.count ? a[w] : 0) | (w < d.count ? d[w] : 0)
                        }
                    }
                }
            }
            return
        }
        let fields = UInt32(fields & 7)
        forEachEntry(in: blocks) { k, entry in if entry & fields != 0 { set[k] |= UInt64(1) << UInt64((entry >> 3) & 63) } }
    }

    /// ORs every book of the lexeme holding it in one of `fields` (`CatalogBook.title` …; all
    /// three: whatever the field) into `set`.
    func accumulateAll(into set: UnsafeMutableBufferPointer<UInt64>, fields: UInt8 = 7) {
        if let dense {
            dense.title.words.withUnsafeBufferPointer { t in
                dense.author.words.withUnsafeBufferPointer { a in
                    dense.description.words.withUnsafeBufferPointer { d in
                        // Straight passes (no per-word bounds test: they vectorize).
                        for (field, source) in [(CatalogBook.title, t), (CatalogBook.author, a), (CatalogBook.description, d)] where fields & field != 0 {
                            for w in 0..<min(set.count, source.count) { set[w] |= source[w] }
                        }
                    }
                }
            }
            return
        }
        let fields = UInt32(fields & 7)
        list.withUnsafeBufferPointer { entries in
            for entry in entries where entry & fields != 0 {
                let id = Int(entry >> 3)
                guard id >> 6 < set.count else { continue }
                set[id >> 6] |= UInt64(1) << UInt64(id & 63)
            }
        }
    }
}

extension LexemeBooks {
    func encode(to writer: SnapshotWriter) throws {
        try writer.int(count)
        try writer.bool(unsorted)
        try writer.array(list)
        try writer.bool(dense != nil)
        if let dense { for set in [dense.title, dense.author, dense.description] { try set.encode(to: writer) } }
    }

    init(snapshot reader: inout SnapshotReader) throws {
        self.init()
        count = try reader.int()
        unsorted = try reader.bool()
        list = try reader.array()
        spanList()
        if try reader.bool() {
            dense = Dense(title: try Bitset(snapshot: &reader), author: try Bitset(snapshot: &reader), description: try Bitset(snapshot: &reader))
        }
    }
}
