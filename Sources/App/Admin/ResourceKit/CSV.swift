/// CSV as spreadsheets read it (RFC 4180 lines ending in CRLF).
enum CSV {
    /// One CSV line; cells that a spreadsheet would run as formulas are defused.
    static func line(_ cells: [String]) -> String {
        cells.map { cell -> String in
            var text = cell
            // OWASP's list: = + - @ and a leading TAB or CR (a spreadsheet drops them, then reads the rest).
            // By scalar: "\r\n" is one Character and would slip past a Character test.
            if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first), Int(text) == nil { text = "'" + text }
            if text.contains(where: { $0 == "," || $0 == "\"" || $0.unicodeScalars.contains { "\n\r\t".unicodeScalars.contains($0) } }) {
                return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            }
            return text
        }.joined(separator: ",") + "\r\n"
    }
}
