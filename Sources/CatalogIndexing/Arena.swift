import Core
/// Variable-length values per book id in one contiguous buffer: a million books cost three
/// arrays, not a million small allocations. A replaced value's old elements become garbage, and
/// the buffer is compacted once garbage outweighs what is live.
struct Arena<Element: Sendable>: Sendable {
    private(set) var storage: [Element] = []
    private var start: [UInt32] = []
    private var length: [UInt32] = []
    private var garbage = 0

    /// Compaction waits for at least this many garbage elements (a bulk update's worth).
    static var compactionFloor: Int { 1 << 20 }

    mutating func set(_ id: Int, _ values: some Collection<Element>) {
        if id >= start.count {
            start.append(contentsOf: repeatElement(0, count: id + 1 - start.count))
            length.append(contentsOf: repeatElement(0, count: id + 1 - length.count))
        }
        garbage += Int(length[id])
        precondition(storage.count + values.count <= Int(UInt32.max), "catalog arena past 4 G elements")
        start[id] = UInt32(storage.count)
        length[id] = UInt32(values.count)
        storage.append(contentsOf: values)
        if garbage > Self.compactionFloor && garbage > storage.count / 2 { compact() }
    }

    mutating func clear(_ id: Int) {
        guard id < length.count else { return }
        garbage += Int(length[id])
        length[id] = 0
    }

    /// Where `id`'s value lies in `storage` (empty for an unknown id).
    func range(_ id: Int) -> Range<Int> {
        guard id < start.count else { return 0..<0 }
        let from = Int(start[id])
        return from..<from + Int(length[id])
    }

    subscript(id: Int) -> ArraySlice<Element> { storage[range(id)] }

    private mutating func compact() {
        var fresh: [Element] = []
        fresh.reserveCapacity(storage.count - garbage)
        for id in 0..<start.count where length[id] > 0 {
            let from = Int(start[id])
            start[id] = UInt32(fresh.count)
            fresh.append(contentsOf: storage[from..<from + Int(length[id])])
        }
        storage = fresh
        garbage = 0
    }
}

extension Arena where Element: BitwiseCopyable {
    func encode(to writer: SnapshotWriter) throws {
        try writer.array(storage); try writer.array(start); try writer.array(length); try writer.int(garbage)
    }

    init(snapshot reader: inout SnapshotReader) throws {
        self.init()
        storage = try reader.array(); start = try reader.array(); length = try reader.array(); garbage = try reader.int()
        guard start.count == length.count,
              zip(start, length).allSatisfy({ Int($0) + Int($1) <= storage.count }) else { throw SnapshotReader.Failure.corrupt("arena") }
    }
}
