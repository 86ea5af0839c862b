import Synchronization
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

extension CatalogIndex {
    /// The title, author and language of an indexed book, read back from its stored JSON (for
    /// search highlights: a page's books only, so no per-book copies are kept).
    public func displayFields(_ id: Int) -> (title: String, author: String, language: String) {
        let range = json.range(id)
        let bytes = json.storage[range]
        // Each key is looked for first where the loader's layout puts it — the author near the
        // start, the language after the description, the title after rights_available — so the
        // description is not read through (the whole object when the key is not there).
        // Where the layout says it is, the key is only compared (`Layout.start`), not looked for.
        func value(_ needle: ByteSearch.Needle, after offset: Int, _ layout: Layout) -> String {
            let from = range.lowerBound + min(offset, range.count)
            if let start = layout.start(in: bytes, from: from), let text = Self.stringValue(startingAt: start, in: bytes) { return text }
            return Self.stringValue(needle: needle, in: bytes[from...]) ?? Self.stringValue(needle: needle, in: bytes) ?? ""
        }
        return (value(Self.titleNeedle, after: id < rightsOffset.count ? Int(rightsOffset[id]) : 0, .title),
                value(Self.authorNeedle, after: 0, .author),
                value(Self.languageNeedle, after: id < descriptionStart.count ? Int(descriptionStart[id]) + Int(descriptionLength[id]) : 0, .language))
    }

    /// Reads a byte where each of `ids`' title, author and language lie, for the whole page at
    /// once, before `displayFields` reads them book by book: the cache misses of a page of books
    /// the CPU has not seen lately (a one-off search's) overlap instead of following one another.
    public func warmDisplayFields(_ ids: [Int]) {
        var sum: UInt64 = 0
        json.storage.withUnsafeBufferPointer { storage in
            for id in ids where id < rightsOffset.count && id < descriptionStart.count {
                let range = json.range(id)
                guard !range.isEmpty, range.upperBound <= storage.count else { continue }
                let last = range.upperBound - 1
                sum &+= UInt64(storage[range.lowerBound]) &+ UInt64(storage[min(range.lowerBound + Int(rightsOffset[id]), last)])
                    &+ UInt64(storage[min(range.lowerBound + Int(descriptionStart[id]) + Int(descriptionLength[id]), last)])
            }
        }
        Self.warmed.wrappingAdd(sum, ordering: .relaxed)   // (used, so the reads are not optimized away)
    }

    static let warmed = Atomic<UInt64>(0)

    static let titleNeedle = ByteSearch.Needle(Array(#""title":""#.utf8)), authorNeedle = ByteSearch.Needle(Array(#""author":""#.utf8)),
               languageNeedle = ByteSearch.Needle(Array(#""language":""#.utf8))

    /// The string value of top-level key `key` in an encoded book object. Keys are unique in the
    /// object and a quote inside a value is always escaped, so `"key":"` occurs only as the key.
    static func stringValue(of key: String, in bytes: ArraySlice<UInt8>) -> String? {
        stringValue(needle: ByteSearch.Needle(Array("\"\(key)\":\"".utf8)), in: bytes)
    }

    /// `stringValue(of:in:)` with the key's `"key":"` given as bytes.
    static func stringValue(needle: ByteSearch.Needle, in bytes: ArraySlice<UInt8>) -> String? {
        guard let start = ByteSearch.end(of: needle, in: bytes) else { return nil }
        return stringValue(startingAt: start, in: bytes)
    }

    /// The string value whose first byte (after its opening quote) is at `start`.
    static func stringValue(startingAt start: Int, in bytes: ArraySlice<UInt8>) -> String? {
        // Most values hold no escape: up to the closing quote as it is.
        if let quote = ByteSearch.first(UInt8(ascii: "\""), in: bytes, from: start),
           ByteSearch.first(UInt8(ascii: "\\"), in: bytes[..<quote], from: start) == nil {
            return String(decoding: bytes[start..<quote], as: UTF8.self)
        }
        var out: [UInt8] = []
        var i = start
        var pendingHigh: UInt32?
        func append(_ scalar: UInt32) {
            if let s = Unicode.Scalar(scalar) { out.append(contentsOf: Array(String(Character(s)).utf8)) }
        }
        while i < bytes.endIndex {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") { break }
            guard byte == UInt8(ascii: "\\"), i + 1 < bytes.endIndex else { out.append(byte); i += 1; continue }
            let escaped = bytes[i + 1]
            i += 2
            switch escaped {
            case UInt8(ascii: "n"): out.append(10)
            case UInt8(ascii: "t"): out.append(9)
            case UInt8(ascii: "r"): out.append(13)
            case UInt8(ascii: "b"): out.append(8)
            case UInt8(ascii: "f"): out.append(12)
            case UInt8(ascii: "u"):
                guard i + 4 <= bytes.endIndex, let unit = UInt32(String(decoding: bytes[i..<i + 4], as: UTF8.self), radix: 16) else { return nil }
                i += 4
                if (0xD800..<0xDC00).contains(unit) { pendingHigh = unit; continue }
                if (0xDC00..<0xE000).contains(unit), let high = pendingHigh {
                    append(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
                } else {
                    append(unit)
                }
                pendingHigh = nil
            default: out.append(escaped)   // \" \\ \/
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
