import Foundation

/// An IPv4 or IPv6 address, parsed the way resolvers and URL parsers read hosts: IPv4 also in the
/// historical `inet_aton` spellings (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`), which name the
/// same machine as `127.0.0.1` and so must be checked as it.
public enum IPAddress: Hashable, Sendable, CustomStringConvertible {
    case v4(UInt32)
    /// The 128 bits as two halves, most significant first.
    case v6(UInt64, UInt64)

    /// A literal address (IPv6 with or without brackets, no zone), or nil when `text` is not one.
    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let v4 = Self.parseV4(text) { self = .v4(v4) }
        else if let v6 = Self.parseV6(text) { self = .v6(v6.0, v6.1) }
        else { return nil }
    }

    public init(v6 bytes: [UInt8]) {
        precondition(bytes.count == 16)
        let high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self = .v6(high, low)
    }

    /// Whether `text` is shaped like an IPv4 address (digits, dots, `0x` parts) even if it is not
    /// a valid one (`1.2.3.256`): such a host is refused rather than looked up as a name.
    public static func looksNumeric(_ text: String) -> Bool {
        var parts = text.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count > 1, parts.last == "" { parts.removeLast() }
        guard let last = parts.last, !last.isEmpty else { return false }
        let lower = last.lowercased()
        let digits = lower.hasPrefix("0x") ? lower.dropFirst(2) : Substring(lower)
        return lower.hasPrefix("0x") ? digits.allSatisfy(\.isHexDigit) : digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// For an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), the IPv4 address it is; else itself.
    public var unmapped: IPAddress {
        if case .v6(let high, let low) = self, high == 0, low >> 32 == 0xffff { return .v4(UInt32(truncatingIfNeeded: low)) }
        return self
    }

    /// Dotted IPv4, or the eight IPv6 groups in hex (a form every parser takes).
    public var description: String {
        switch self {
        case .v4(let value):
            return [24, 16, 8, 0].map { String((value >> UInt32($0)) & 0xff) }.joined(separator: ".")
        case .v6(let high, let low):
            let groups = [48, 32, 16, 0].map { String((high >> UInt64($0)) & 0xffff, radix: 16) }
                + [48, 32, 16, 0].map { String((low >> UInt64($0)) & 0xffff, radix: 16) }
            return groups.joined(separator: ":")
        }
    }

    // MARK: Parsing

    /// `inet_aton` (and the WHATWG URL host parser): one to four parts, each decimal, octal
    /// (leading 0) or hex (0x); the last part fills the remaining bytes. A trailing dot is allowed.
    static func parseV4(_ text: Substring) -> UInt32? {
        var parts = text.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count > 1, parts.last == "" { parts.removeLast() }
        guard (1...4).contains(parts.count) else { return nil }
        var values: [UInt64] = []
        for part in parts {
            guard let value = number(part) else { return nil }
            values.append(value)
        }
        for value in values.dropLast() where value > 255 { return nil }
        let lastBits = 8 * (5 - values.count)
        guard values.last! < (UInt64(1) << UInt64(lastBits)) else { return nil }
        var result = UInt64(0)
        for (index, value) in values.dropLast().enumerated() { result |= value << UInt64(24 - 8 * index) }
        return UInt32(result | values.last!)
    }

    private static func number(_ part: Substring) -> UInt64? {
        guard !part.isEmpty, part.count <= 34 else { return nil }
        var digits = part, radix = 10
        if part.count >= 2, part.hasPrefix("0x") || part.hasPrefix("0X") { digits = part.dropFirst(2); radix = 16 }
        else if part.count >= 2, part.hasPrefix("0") { digits = part.dropFirst(); radix = 8 }
        if digits.isEmpty { return radix == 16 ? 0 : nil }
        guard digits.allSatisfy({ $0.isASCII && $0.isHexDigit }), let value = UInt64(digits, radix: radix), value <= UInt64(UInt32.max) else { return nil }
        return value
    }

    /// RFC 4291 text: up to eight groups of 1–4 hex digits, one `::`, an optional dotted IPv4 tail.
    static func parseV6(_ text: Substring) -> (UInt64, UInt64)? {
        guard text.contains(":"), !text.contains("%"), text.count <= 45 else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ piece: String, allowV4Tail: Bool) -> [UInt16]? {
            if piece.isEmpty { return [] }
            var out: [UInt16] = []
            let items = piece.split(separator: ":", omittingEmptySubsequences: false)
            for (index, item) in items.enumerated() {
                if index == items.count - 1, allowV4Tail, item.contains(".") {
                    guard item.split(separator: ".", omittingEmptySubsequences: false).count == 4,
                          item.allSatisfy({ $0 == "." || ($0.isASCII && $0.isNumber) }),
                          item.split(separator: ".").allSatisfy({ $0.count <= 3 && ($0.count == 1 || !$0.hasPrefix("0")) }),
                          let v4 = parseV4(item) else { return nil }
                    out += [UInt16(v4 >> 16), UInt16(v4 & 0xffff)]
                } else {
                    guard (1...4).contains(item.count), item.allSatisfy({ $0.isASCII && $0.isHexDigit }), let group = UInt16(item, radix: 16) else { return nil }
                    out.append(group)
                }
            }
            return out
        }
        var all: [UInt16]
        if halves.count == 2 {
            guard let head = groups(halves[0], allowV4Tail: false), let tail = groups(halves[1], allowV4Tail: true), head.count + tail.count <= 7 else { return nil }
            all = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let every = groups(halves[0], allowV4Tail: true), every.count == 8 else { return nil }
            all = every
        }
        let high = all[0..<4].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        let low = all[4..<8].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        return (high, low)
    }
}
