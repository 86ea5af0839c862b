import SQLKit

extension AdminResource {
    static let publishers = AdminResource(
        slug: "publishers", table: "publishers", singular: "Publisher", plural: "Publishers",
        displayName: "t.name",
        list: .init(
            columns: [
                AdminColumn("name", "Name", sortable: true, format: .link),
                AdminColumn("book_count", "Books", sql: "(SELECT count(*) FROM books b WHERE b.publisher_id = t.id)", format: .number),
                AdminColumn("updated_at", "Updated", sortable: true, format: .datetime),
            ],
            search: AdminSearch(label: "Search name") { q in TextMatch.contains("t.name", q) },
            defaultSort: "name"
        ),
        form: .init(
            fields: [AdminField(name: "name", label: "Name", kind: .text(maxLength: 200), required: true)],
            constraintMessages: [
                "publishers_name_key": FieldMessage(field: "name", message: "A publisher with this name already exists."),
                "publishers_name_not_blank": FieldMessage(field: "name", message: "This field is required."),
            ]
        ),
        detail: .init(
            deleteWarning: { id, sql in
                let n = try await sql.count(from: "books", where: "publisher_id", is: id)
                return n == 0 ? nil : "\(n) \(n == 1 ? "book keeps" : "books keep") no publisher."
            }
        )
    )
}
