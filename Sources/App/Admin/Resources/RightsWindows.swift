import SQLKit

extension AdminResource {
    /// When a book may be watched: windows under their book (`/admin/books/:id/rights_windows`).
    static let rightsWindows = AdminResource(
        slug: "rights_windows", table: "rights_windows", singular: "Rights window", plural: "Rights windows",
        displayName: "to_char(t.starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') || ' → ' || COALESCE(to_char(t.ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), 'open-ended')",
        list: .init(
            columns: [
                AdminColumn("starts_at", "Starts (UTC)", sortable: true, format: .datetime),
                AdminColumn("ends_at", "Ends (UTC)", sortable: true, format: .datetime),
                AdminColumn("state", "State", sql: BookSQL.windowState("t"), format: .badge),
                AdminColumn("where", "Where", sql: BookSQL.windowTerritories("t")),
                AdminColumn("window", "Window", sql: "'Edit'", format: .link),
            ],
            defaultSort: "starts_at"
        ),
        form: .init(
            fields: [
                AdminField(name: "starts_at", label: "Starts at (UTC)", kind: .datetime, required: true),
                AdminField(name: "ends_at", label: "Ends at (UTC)", kind: .datetime, help: "Leave blank for an open-ended window.", nullable: true),
                AdminField(name: "territories", label: "Territories", kind: .countries,
                           help: "ISO country codes such as FR, BE, CH. Leave blank for worldwide."),
                AdminField(name: "exclude_territories", label: "Except in", kind: .countries,
                           help: "ISO country codes where the window does not apply, such as US."),
            ],
            constraintMessages: [
                "rights_windows_range_check": FieldMessage(field: "ends_at", message: "The end must be after the start."),
                "rights_windows_territories_format": FieldMessage(field: "territories", message: "Use ISO country codes such as FR, BE."),
                "rights_windows_exclude_territories_format": FieldMessage(field: "exclude_territories", message: "Use ISO country codes such as US."),
            ],
            validate: { values in
                if let start = values.date("starts_at"), let end = values.date("ends_at"), end <= start {
                    return ["ends_at": "The end must be after the start."]
                }
                return [:]
            }
        ),
        access: .init(
            parent: AdminParent(slug: "books", table: "books", column: "book_id", label: "Book", displayName: "t.title")
        )
    )
}
