import SQLKit

/// A column of a list, a detail page, a related list or the CSV: a key (the result column), a
/// label, and the SQL giving its value (by default the record's column of the same name).
struct AdminColumn: Sendable {
    enum Format: String, Sendable { case text, link, duration, boolean, datetime, badge, number, image }
    let key: String
    let label: String
    let expression: any SQLExpression
    var sortable = false
    var format: Format = .text

    init(_ key: String, _ label: String, sql: SQLFragment? = nil, sortable: Bool = false, format: Format = .text) {
        self.key = key
        self.label = label
        self.expression = sql ?? SQLColumn(key, table: "t")
        self.sortable = sortable
        self.format = format
    }

    /// The value as the page shows it, as text under the column's key (times in UTC: the CSV's).
    var selected: any SQLExpression { selected(in: "UTC") }

    /// The value as the page shows it, times in `zone` (an IANA name the database knows).
    func selected(in zone: String) -> any SQLExpression {
        let shown: SQLQueryString
        switch format {
        case .datetime: shown = "to_char((\(expression)) AT TIME ZONE \(bind: zone), 'YYYY-MM-DD HH24:MI')"
        case .boolean: shown = "CASE WHEN (\(expression)) THEN 'Yes' ELSE 'No' END"
        default: shown = "(\(expression))::text"
        }
        return SQLAlias(shown, as: SQLIdentifier(key))
    }

    /// What the list orders by: case-insensitive for text columns.
    var sortExpression: any SQLExpression {
        format == .link || format == .text ? SQLQueryString("lower((\(expression))::text)") : expression
    }
}

extension AdminColumn {
    /// 340 → "5:40"; 3725 → "1:02:05"; nil → "—".
    static func duration(_ seconds: Int?) -> String {
        guard let seconds, seconds >= 0 else { return "—" }
        let h = seconds / 3600, m = (seconds % 3600) / 60, s = seconds % 60
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }
}
