/// RFC 8259 JSON, exactly: what Foundation's lenient parser also accepts (trailing commas,
/// comments, `NaN`, leading zeros, single quotes, raw control characters in strings) is refused.
/// Checks the syntax only; reading values is left to a decoder.
public enum StrictJSON {
    /// Nesting deeper than this is refused (a recursion bound, far beyond any request body).
    public static let maxDepth = 256

    public static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        var parser = Parser(bytes: Array(bytes))
        parser.whitespace()
        guard parser.value(depth: 0) else { return false }
        parser.whitespace()
        return parser.i == parser.bytes.count
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var current: UInt8? { i < bytes.count ? bytes[i] : nil }

        mutating func whitespace() {
            while let c = current, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { i += 1 }
        }

        mutating func literal(_ text: String) -> Bool {
            let expected = Array(text.utf8)
            guard i + expected.count <= bytes.count, bytes[i..<(i + expected.count)].elementsEqual(expected) else { return false }
            i += expected.count
            return true
        }

        mutating func value(depth: Int) -> Bool {
            guard depth < StrictJSON.maxDepth, let c = current else { return false }
            switch c {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func object(depth: Int) -> Bool {
            i += 1
            whitespace()
            if current == UInt8(ascii: "}") { i += 1; return true }
            while true {
                guard current == UInt8(ascii: "\""), string() else { return false }
                whitespace()
                guard current == UInt8(ascii: ":") else { return false }
                i += 1
                whitespace()
                guard value(depth: depth + 1) else { return false }
                whitespace()
                switch current {
                case UInt8(ascii: ","): i += 1; whitespace()
                case UInt8(ascii: "}"): i += 1; return true
                default: return false
                }
            }
        }

        mutating func array(depth: Int) -> Bool {
            i += 1
            whitespace()
            if current == UInt8(ascii: "]") { i += 1; return true }
            while true {
                guard value(depth: depth + 1) else { return false }
                whitespace()
                switch current {
                case UInt8(ascii: ","): i += 1; whitespace()
                case UInt8(ascii: "]"): i += 1; return true
                default: return false
                }
            }
        }

        /// A string: no raw control characters, only the escapes JSON has, valid UTF-8.
        mutating func string() -> Bool {
            i += 1
            let start = i
            while let c = current {
                switch c {
                case UInt8(ascii: "\""):
                    i += 1
                    return String(validating: bytes[start..<(i - 1)], as: UTF8.self) != nil
                case UInt8(ascii: "\\"):
                    i += 1
                    guard let e = current else { return false }
                    if e == UInt8(ascii: "u") {
                        guard i + 4 < bytes.count, bytes[(i + 1)...(i + 4)].allSatisfy(Self.isHex) else { return false }
                        i += 5
                    } else {
                        guard "\"\\/bfnrt".utf8.contains(e) else { return false }
                        i += 1
                    }
                case 0..<0x20: return false
                default: i += 1
                }
            }
            return false
        }

        static func isHex(_ c: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(c)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(c)
        }

        static func isDigit(_ c: UInt8?) -> Bool { c.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func number() -> Bool {
            if current == UInt8(ascii: "-") { i += 1 }
            guard Self.isDigit(current) else { return false }
            if current == UInt8(ascii: "0") { i += 1 } else { while Self.isDigit(current) { i += 1 } }
            if current == UInt8(ascii: ".") {
                i += 1
                guard Self.isDigit(current) else { return false }
                while Self.isDigit(current) { i += 1 }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                i += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { i += 1 }
                guard Self.isDigit(current) else { return false }
                while Self.isDigit(current) { i += 1 }
            }
            return true
        }
    }
}
