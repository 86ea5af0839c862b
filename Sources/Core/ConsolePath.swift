/// The grammar of a console path the app may redirect to (`next` after sign-in, a batch's
/// `return_to`): the console's prefix (`AdminPath.dashboard`), then path segments and an optional query of URL-safe ASCII only.
/// Anything else — another host (`//x`), a backslash, a dot segment, a raw space or control
/// character (CR/LF would split the `Location` header), a malformed `%` escape — is refused.
public enum ConsolePath {
    public static let maxLength = 2048

    public static func validated(_ text: String, under prefix: String) -> String? {
        guard text.utf8.count <= maxLength, text == prefix || text.hasPrefix(prefix + "/") || text.hasPrefix(prefix + "?") else {
            return nil
        }
        let bytes = Array(text.utf8)
        let queryStart = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
        let path = bytes[..<queryStart]
        // No empty or dot segments in the path ("//", "/./", "/../").
        for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst() {
            if segment.elementsEqual(".".utf8) || segment.elementsEqual("..".utf8) { return nil }
        }
        if zip(path, path.dropFirst()).contains(where: { $0 == UInt8(ascii: "/") && $1 == UInt8(ascii: "/") }) { return nil }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else { return nil }
                index += 3
                continue
            }
            guard allowed(byte) else { return nil }
            index += 1
        }
        return text
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    /// RFC 3986 unreserved and sub-delimiters plus ":" "@" "/" "?"; no "\\", no space, no control.
    private static func allowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~!$&'()*+,;=:@/?".utf8.contains(byte)
        }
    }
}
