import SQLKit

extension AdminResource {
    static let categories = AdminResource(
        slug: "categories", table: "categories", singular: "Category", plural: "Categories",
        displayName: "t.name",
        list: .init(
            columns: [
                AdminColumn("name", "Name", sortable: true, format: .link),
                AdminColumn("slug", "Slug", sortable: true),
                AdminColumn("display_order", "Order", sortable: true, format: .number),
                AdminColumn("icon_name", "Icon"),
                AdminColumn("book_count", "Books", sql: bookCount, sortable: true, format: .number),
            ],
            search: AdminSearch(label: "Search name or slug") { q in
                "(\(TextMatch.contains("t.name", q)) OR \(TextMatch.contains("t.slug", q)))"
            },
            defaultSort: "display_order",
            estimateAbove: 1_000_000
        ),
        form: .init(
            fields: [
                AdminField(name: "name", label: "Name", kind: .text(maxLength: 100), required: true),
                AdminField(name: "slug", label: "Slug", kind: .text(maxLength: 100),
                           help: "Lowercase letters, digits and dashes; leave blank to derive it from the name."),
                AdminField(name: "display_order", label: "Display order", kind: .integer(-1_000_000...1_000_000), required: true,
                           help: "Lower numbers come first.", defaultValue: "0"),
                AdminField(name: "icon_name", label: "Icon name", kind: .text(maxLength: 100),
                           help: "An SF Symbol name such as moon.stars.", nullable: true),
            ],
            constraintMessages: [
                "categories_name_key": FieldMessage(field: "name", message: "A category with this name already exists."),
                "categories_slug_key": FieldMessage(field: "slug", message: "A category with this slug already exists."),
                "categories_slug_format": FieldMessage(field: "slug", message: "Use lowercase letters, digits and single dashes."),
                "categories_icon_name_format": FieldMessage(field: "icon_name", message: "Use an SF Symbol name such as moon.stars."),
                "categories_name_not_blank": FieldMessage(field: "name", message: "This field is required."),
            ],
            prepare: { values in
                if (values.raw["slug"] ?? "").trimmingCharacters(in: .whitespaces).isEmpty {
                    values.raw["slug"] = Slug.make(values.raw["name"] ?? "")
                }
            },
            validate: { values in
                guard case .text(let slug)? = values["slug"], !slug.isEmpty else { return ["slug": "Enter a slug, or a name it can be made from."] }
                return slug.range(of: "^[a-z0-9]+(-[a-z0-9]+)*$", options: .regularExpression) == nil
                    ? ["slug": "Use lowercase letters, digits and single dashes."] : [:]
            }
        ),
        detail: .init(
            columns: [
                AdminColumn("name", "Name"), AdminColumn("slug", "Slug"), AdminColumn("display_order", "Display order"),
                AdminColumn("icon_name", "Icon (SF Symbol)"),
                AdminColumn("book_count", "Books", sql: bookCount),
                AdminColumn("updated_at", "Updated", format: .datetime),
            ],
            recordActions: [RecordAction(label: "Translations", path: TranslationsController.path)],
            deleteWarning: { id, sql in
                let n = try await sql.count(from: "book_categories", where: "category_id", is: id)
                return n == 0 ? "No book has this category." : "\(n) \(n == 1 ? "book loses" : "books lose") this category."
            },
            // Its books lose it (the database cascades): an audit row each, as any change of a book.
            deleteChanges: AdminDeleteChanges(resource: { .books }, ids: { "SELECT book_id AS id FROM book_categories WHERE category_id = \(bind: $0)" }),
            snapshot: SQLFragment(trusted: "to_jsonb(t) || jsonb_build_object('names', \(TranslationQueries.categorySnapshot))")
        )
    )

    /// Kept by the database as books are categorised (`migrations/0014`), not counted per page.
    private static let bookCount: SQLFragment = "COALESCE((SELECT k.n FROM category_book_counts k WHERE k.category_id = t.id), 0)"
}

/// URL slugs.
enum Slug {
    /// "Animals & Nature" → "animals-nature".
    static func make(_ text: String) -> String {
        let folded = text.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).lowercased()
        var slug = ""
        var dash = false
        for scalar in folded.unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                if dash && !slug.isEmpty { slug.append("-") }
                slug.unicodeScalars.append(scalar)
                dash = false
            } else {
                dash = true
            }
        }
        return String(slug.prefix(100))
    }
}
