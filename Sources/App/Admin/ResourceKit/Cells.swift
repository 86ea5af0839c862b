import SQLKit

/// How a column's value shows in a list, a detail page or the CSV.
enum Cells {
    static func text(_ row: any SQLRow, _ column: AdminColumn) throws -> String {
        shown(try value(row, column), column)
    }

    /// The column's value as text (nil: none).
    private static func value(_ row: any SQLRow, _ column: AdminColumn) throws -> String? {
        try row.decode(column: column.key, as: String?.self)
    }

    private static func shown(_ text: String?, _ column: AdminColumn) -> String {
        switch column.format {
        case .duration: return AdminColumn.duration(text.flatMap(Int.init))
        default: return text ?? "—"
        }
    }

    /// A cell of the CSV export: as shown, but empty where there is no value (the import reads a
    /// cell as it is, and a "—" taken back would become a title, a description…).
    static func csv(_ row: any SQLRow, _ column: AdminColumn) throws -> String {
        try value(row, column).map { shown($0, column) } ?? ""
    }

    /// A cell of record `id`: a link to the record for `.link` columns, a badge for `.badge` ones.
    static func view(_ row: any SQLRow, _ column: AdminColumn, link: String) throws -> CellView {
        var cell = try plainView(row, column, link: link)
        cell.kind = column.format.rawValue
        return cell
    }

    private static func plainView(_ row: any SQLRow, _ column: AdminColumn, link: String) throws -> CellView {
        let text = try text(row, column)
        switch column.format {
        case .link: return CellView(text: text, href: link)
        case .badge: return CellView(text: text, badge: text)
        // An image's URL (a cover rendition), or "—" when there is none.
        case .image: return text == "—" ? CellView(text: "—") : CellView(text: "", image: text)
        default: return CellView(text: text)
        }
    }
}
