/// CSV as spreadsheets read it (RFC 4180 lines ending in CRLF).
enum CSV {
    /// One CSV line; cells that a spreadsheet would run as formulas are defused.
    static func line(_ cells: [String]) -> String {
        cells.map { cell -> String in
            var text = cell
            if let first = text.first, "=+-@".contains(first), Int(text) == nil { text = "'" + text }
            if text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
                return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            }
            return text
        }.joined(separator: ",") + "\r\n"
    }
}
