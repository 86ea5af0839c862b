import Foundation

/// The query string as ordered (name, value) pairs, with the parsing rules every list shares:
/// an empty value counts as absent; a parameter given twice is an error.
public struct QueryParameters: Sendable, Equatable {
    public let pairs: [(name: String, value: String)]

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.pairs.map { [$0.name, $0.value] } == rhs.pairs.map { [$0.name, $0.value] }
    }

    public init(pairs: [(name: String, value: String)]) { self.pairs = pairs }

    /// Parses a raw (percent-encoded) query string; `+` is a space, as browsers send it.
    public init(query: String?) {
        var pairs: [(String, String)] = []
        for part in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.decode(String(kv[0]))
            let value = kv.count > 1 ? Self.decode(String(kv[1])) : ""
            pairs.append((name, value))
        }
        self.pairs = pairs
    }

    /// `+` as a space, then percent-decoding; a malformed escape leaves the escapes as they are —
    /// what Foundation's `removingPercentEncoding` does, byte by byte for ASCII at a fraction of its
    /// cost (this runs for every parameter of every request); anything else goes to Foundation.
    static func decode(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else { return text }
        let bytes = Array(text.utf8)
        let spaced = bytes.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(spaced.count)
        var i = 0
        while i < spaced.count {
            guard spaced[i] == UInt8(ascii: "%") else { out.append(spaced[i]); i += 1; continue }
            guard i + 2 < spaced.count, let high = hex(spaced[i + 1]), let low = hex(spaced[i + 2]) else { return String(decoding: spaced, as: UTF8.self) }
            out.append(high << 4 | low)
            i += 3
        }
        // Bytes past ASCII: Foundation decides (its repairs of what is not UTF-8 are its own).
        guard out.allSatisfy({ $0 < 0x80 }) else { return foundationDecode(text) }
        return String(decoding: out, as: UTF8.self)
    }

    /// `decode` as Foundation does it (the reference its tests compare with).
    static func foundationDecode(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else { return text }
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// The value of `name`, nil when absent or empty.
    public func value(_ name: String) throws(ParameterError) -> String? {
        let values = pairs.filter { $0.name == name }.map(\.value)
        guard values.count <= 1 else { throw ParameterError(field: name, message: "\(name) was given more than once") }
        guard let value = values.first, !value.isEmpty else { return nil }
        return value
    }

    /// An integer in `range`; `what` completes "must be …" in the error.
    public func integer(_ name: String, in range: ClosedRange<Int>, what: String) throws(ParameterError) -> Int? {
        guard let text = try value(name) else { return nil }
        guard text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) || (text.hasPrefix("-") && text.dropFirst().utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) && text.count > 1),
              let number = Int(text), range.contains(number) else {
            throw ParameterError(field: name, message: "\(name) must be \(what)")
        }
        return number
    }

    /// One of the `allowed` raw values.
    public func choice<T: RawRepresentable>(_ name: String, as: T.Type, allowed: [T]) throws(ParameterError) -> T? where T.RawValue == String {
        guard let text = try value(name) else { return nil }
        guard let choice = T(rawValue: text), allowed.contains(where: { $0.rawValue == text }) else {
            throw ParameterError(field: name, message: "\(name) must be one of \(allowed.map(\.rawValue).joined(separator: ", "))")
        }
        return choice
    }

    /// The same parameters with `name` set to `value` (replacing it, or appended).
    public func setting(_ name: String, to value: String) -> QueryParameters {
        var result = pairs.filter { $0.name != name }
        result.append((name, value))
        return QueryParameters(pairs: result)
    }

    /// Whether `name` is given at all (an empty value counts).
    public func contains(_ name: String) -> Bool { pairs.contains { $0.name == name } }

    /// The same parameters without `name`.
    public func removing(_ name: String) -> QueryParameters {
        QueryParameters(pairs: pairs.filter { $0.name != name })
    }

    /// Percent-encoded query string.
    public var encoded: String {
        pairs.map { "\(Self.encode($0.name))=\(Self.encode($0.value))" }.joined(separator: "&")
    }

    /// Percent-encodes one query component.
    public static func encodeComponent(_ text: String) -> String { encode(text) }

    static func encode(_ text: String) -> String {
        guard !text.utf8.allSatisfy(isUnreserved) else { return text }
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            if isUnreserved(byte) { out.append(byte) }
            else { out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]] }
        }
        // Bytes past ASCII: Foundation decides (its repairs of what is not UTF-8 are its own).
        guard out.allSatisfy({ $0 < 0x80 }) else { return foundationDecode(text) }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986's unreserved characters: letters, digits, `-`, `.`, `_`, `~`.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }
}
