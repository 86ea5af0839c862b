import SQLKit

/// The parent API's text in the family's locales (docs/localization.md): the first translation
/// along `locales` of each field, else the base row's — the same rule as the engine's
/// (`CatalogIndex+Locales.swift`). A translation into the book's own language is not used.
extension BookSQL {
    /// `b.<field> AS <field>` in `locales` (`title` or `description` of the book `b`).
    static func localized(_ field: StaticString, locales: [String]) -> SQLQueryString {
        let name = field.description
        guard !locales.isEmpty else { return "b.\(unsafeRaw: name)" }
        return """
            COALESCE((SELECT t.\(unsafeRaw: name) FROM book_translations t WHERE t.book_id = b.id AND t.locale = ANY(\(bind: locales)::text[])
                         AND t.locale <> b.language AND t.\(unsafeRaw: name) IS NOT NULL
                       ORDER BY array_position(\(bind: locales)::text[], t.locale) LIMIT 1), b.\(unsafeRaw: name)) AS \(unsafeRaw: name)
            """
    }

    /// `title_language`: the language of the translated title shown (null: the book's own), so
    /// highlights stem the words shown in their language; nothing without `locales`.
    static func titleLanguage(locales: [String]) -> SQLQueryString {
        guard !locales.isEmpty else { return "" }
        return """
            , (SELECT split_part(t.locale, '-', 1) FROM book_translations t WHERE t.book_id = b.id AND t.locale = ANY(\(bind: locales)::text[])
                  AND t.locale <> b.language AND t.title IS NOT NULL
                ORDER BY array_position(\(bind: locales)::text[], t.locale) LIMIT 1) AS title_language
            """
    }

    /// The name of the category `c` in `locales`.
    static func categoryName(locales: [String]) -> SQLQueryString {
        guard !locales.isEmpty else { return "c.name" }
        return """
            COALESCE((SELECT ct.name FROM category_translations ct WHERE ct.category_id = c.id AND ct.locale = ANY(\(bind: locales)::text[])
                       ORDER BY array_position(\(bind: locales)::text[], ct.locale) LIMIT 1), c.name)
            """
    }
}
