/// RFC 4180 CSV as spreadsheets write it: quoted cells may hold commas, quotes ("") and line
/// breaks; lines end in CRLF or LF; a byte-order mark at the start is ignored.
public enum CSVReader {
    public static func rows(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var cell: [UInt8] = []
        var quoted = false, afterQuote = false
        var bytes = Array(text.utf8)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        var i = 0
        func endCell() { row.append(String(decoding: cell, as: UTF8.self)); cell.removeAll(keepingCapacity: true); afterQuote = false }
        func endRow() {
            endCell()
            if !(row.count == 1 && row[0].isEmpty) { rows.append(row) }   // blank lines are skipped
            row = []
        }
        while i < bytes.count {
            let b = bytes[i]
            if quoted {
                if b == UInt8(ascii: "\"") {
                    if i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "\"") { cell.append(b); i += 1 }
                    else { quoted = false; afterQuote = true }
                } else {
                    cell.append(b)
                }
            } else if b == UInt8(ascii: "\"") && cell.isEmpty && !afterQuote {
                quoted = true
            } else if b == UInt8(ascii: ",") {
                endCell()
            } else if b == UInt8(ascii: "\n") {
                endRow()
            } else if b == UInt8(ascii: "\r") {
                if i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "\n") { i += 1 }
                endRow()
            } else {
                cell.append(b)
            }
            i += 1
        }
        if !cell.isEmpty || !row.isEmpty || quoted { endRow() }
        return rows
    }
}
