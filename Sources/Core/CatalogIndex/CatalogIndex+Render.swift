extension CatalogIndex {
    // Book objects: the stored JSON of each book, with its rights availability at the moment asked.

    /// Whether a rights window covers `now` (starts_at ≤ now < ends_at, or no end).
    func rightsAvailable(_ id: Int, at now: Int64) -> Bool {
        let windows = rights[id]
        var i = windows.startIndex
        while i < windows.endIndex {
            if windows[i] <= now && now < windows[i + 1] { return true }
            i += 2
        }
        return false
    }

    /// The book objects of `ids` as a JSON array's elements, rights evaluated at `now`.
    public func render(_ ids: [Int], at now: Int64, into out: inout [UInt8]) {
        for (i, id) in ids.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            render(id, at: now, into: &out)
        }
    }

    public func render(_ id: Int, at now: Int64) -> [UInt8]? {
        guard active.contains(id) else { return nil }
        var out: [UInt8] = []
        render(id, at: now, into: &out)
        return out
    }

    func render(_ id: Int, at now: Int64, into out: inout [UInt8]) {
        let range = json.range(id)
        let split = range.lowerBound + Int(rightsOffset[id])
        out.append(contentsOf: json.storage[range.lowerBound..<split])
        out.append(contentsOf: rightsAvailable(id, at: now) ? "true".utf8 : "false".utf8)
        out.append(contentsOf: json.storage[split..<range.upperBound])
    }
}
