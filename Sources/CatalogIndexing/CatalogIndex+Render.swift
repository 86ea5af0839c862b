import Core
extension CatalogIndex {
    // Book objects: the stored JSON of each book, with its rights availability at the moment asked.

    /// Whether a rights window covers `now` (starts_at ≤ now < ends_at, or no end) in `country`
    /// (nil: in any territory).
    func rightsAvailable(_ id: Int, at now: Int64, in country: String?) -> Bool {
        let windows = rights[id]
        var i = windows.startIndex
        while i < windows.endIndex {
            if windows[i] <= now && now < windows[i + 1] && territoryRules[Int(windows[i + 2])].applies(to: country) { return true }
            i += 3
        }
        return false
    }

    /// Whether some window's territory rule names a country (the catalog differs by country).
    public var hasTerritoryRules: Bool {
        ruleWindows.dropFirst().contains { $0 > 0 }
    }

    /// The active books `country`'s catalog leaves out: those with windows, none of which applies
    /// there (a book without any window is in every country's catalog, unavailable). Nil when
    /// there are none — computed from the sets per territory rule, not kept per country.
    public func unlicensed(in country: String?) -> Bitset? {
        guard let country, hasTerritoryRules else { return nil }
        var out = windowed
        for (number, rule) in territoryRules.enumerated() where ruleWindows[number] > 0 && rule.applies(to: country) { out.subtract(byRule[number]) }
        out.formIntersection(active)
        return out.isEmpty ? nil : out
    }

    /// Whether `country`'s catalog has `id` (see `unlicensed(in:)`).
    func isLicensed(_ id: Int, in country: String?) -> Bool {
        guard let country else { return true }
        let windows = rights[id]
        if windows.isEmpty { return true }
        return stride(from: windows.startIndex + 2, to: windows.endIndex, by: 3).contains { territoryRules[Int(windows[$0])].applies(to: country) }
    }

    /// The book objects of `ids` as a JSON array's elements, rights evaluated at `now` in `country`.
    public func render(_ ids: [Int], at now: Int64, in country: String? = nil, into out: inout [UInt8]) {
        for (i, id) in ids.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            render(id, at: now, in: country, into: &out)
        }
    }

    public func render(_ id: Int, at now: Int64, in country: String? = nil) -> [UInt8]? {
        guard active.contains(id) else { return nil }
        var out: [UInt8] = []
        render(id, at: now, in: country, into: &out)
        return out
    }

    func render(_ id: Int, at now: Int64, in country: String?, into out: inout [UInt8]) {
        let range = json.range(id)
        let split = range.lowerBound + Int(rightsOffset[id])
        out.append(contentsOf: json.storage[range.lowerBound..<split])
        out.append(contentsOf: rightsAvailable(id, at: now, in: country) ? "true".utf8 : "false".utf8)
        out.append(contentsOf: json.storage[split..<range.upperBound])
    }
}
