/// Splits an SQL script into statements at top-level semicolons, respecting quotes,
/// dollar-quoted bodies and comments. PostgresNIO speaks only the extended protocol, which
/// runs one statement at a time, so migrations are sent statement by statement.
public enum SQLScript {
    public static func statements(in script: String) -> [String] {
        let chars = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var i = 0
        func flush() {
            let text = String(current).trimmingWhitespace()
            if !text.isEmpty && !isOnlyComments(text) { statements.append(text) }
            current = String.UnicodeScalarView()
        }
        while i < chars.count {
            let c = chars[i]
            let next: Unicode.Scalar? = i + 1 < chars.count ? chars[i + 1] : nil
            if c == "-" && next == "-" {                       // line comment
                while i < chars.count && chars[i] != "\n" { current.append(chars[i]); i += 1 }
                continue
            }
            if c == "/" && next == "*" {                       // block comment
                current.append(c); current.append("*"); i += 2
                while i < chars.count && !(chars[i] == "*" && i + 1 < chars.count && chars[i + 1] == "/") {
                    current.append(chars[i]); i += 1
                }
                if i < chars.count { current.append("*"); current.append("/"); i += 2 }
                continue
            }
            if c == "'" || c == "\"" {                         // quoted literal or identifier
                current.append(c); i += 1
                while i < chars.count {
                    current.append(chars[i])
                    if chars[i] == c {
                        if i + 1 < chars.count && chars[i + 1] == c { current.append(c); i += 2; continue }
                        i += 1; break
                    }
                    i += 1
                }
                continue
            }
            if c == "$", let tag = dollarTag(chars, at: i) {   // $tag$ ... $tag$
                let tagScalars = Array(tag.unicodeScalars)
                for s in tagScalars { current.append(s) }
                i += tagScalars.count
                while i < chars.count {
                    if chars[i] == "$" && Array(chars[i..<min(chars.count, i + tagScalars.count)]) == tagScalars {
                        for s in tagScalars { current.append(s) }
                        i += tagScalars.count
                        break
                    }
                    current.append(chars[i]); i += 1
                }
                continue
            }
            if c == ";" { flush(); i += 1; continue }
            current.append(c); i += 1
        }
        flush()
        return statements
    }

    private static func dollarTag(_ chars: [Unicode.Scalar], at start: Int) -> String? {
        var j = start + 1
        var tag = "$"
        while j < chars.count {
            let c = chars[j]
            if c == "$" { return tag + "$" }
            guard c == "_" || c.properties.isAlphabetic || (j > start + 1 && ("0"..."9").contains(c)) else { return nil }
            tag.unicodeScalars.append(c); j += 1
        }
        return nil
    }

    private static func isOnlyComments(_ text: String) -> Bool {
        text.split(separator: "\n").allSatisfy { $0.trimmingWhitespace().hasPrefix("--") || $0.trimmingWhitespace().isEmpty }
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars[first...last])
        return String(out)
    }
}
