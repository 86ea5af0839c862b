import SQLKit
import Vapor

/// The console's translations (docs/localization.md): a book's title and description and a
/// category's name per locale, saved together through the resource's audited store (one audit
/// row of the record, whose snapshot holds its translations), and what is missing per locale.
enum TranslationQueries {
    /// A record's own text (the base row) and its translations by locale.
    struct Texts: Sendable {
        var title: String
        var description: String
        /// The book's language (a category's is the default locale).
        var language: String
        var translations: [String: (title: String?, description: String?)]
    }

    private struct BookRow: Decodable { let title: String; let description: String; let language: String }
    private struct CategoryRow: Decodable { let name: String }
    private struct TranslationRow: Decodable { let locale: String; let title: String?; let description: String? }

    static func book(_ id: Int, on sql: any SQLDatabase) async throws -> Texts? {
        guard let row = try await sql.raw("SELECT title, description, language FROM books WHERE id = \(bind: id)").first(decoding: BookRow.self) else { return nil }
        let rows = try await sql.raw("SELECT locale, title, description FROM book_translations WHERE book_id = \(bind: id)").all(decoding: TranslationRow.self)
        return Texts(title: row.title, description: row.description, language: row.language,
                     translations: Dictionary(uniqueKeysWithValues: rows.map { ($0.locale, ($0.title, $0.description)) }))
    }

    static func category(_ id: Int, defaultLocale: String, on sql: any SQLDatabase) async throws -> Texts? {
        guard let row = try await sql.raw("SELECT name FROM categories WHERE id = \(bind: id)").first(decoding: CategoryRow.self) else { return nil }
        let rows = try await sql.raw("SELECT locale, name AS title, NULL::text AS description FROM category_translations WHERE category_id = \(bind: id)")
            .all(decoding: TranslationRow.self)
        return Texts(title: row.name, description: "", language: defaultLocale,
                     translations: Dictionary(uniqueKeysWithValues: rows.map { ($0.locale, ($0.title, nil)) }))
    }

    /// Writes a book's translations of `locales` (blank: none) in `sql`; a locale with neither
    /// field goes. The caller's transaction and audit wrap it.
    static func saveBook(_ id: Int, _ values: [String: (title: String?, description: String?)], on sql: any SQLDatabase) async throws {
        for (locale, value) in values.sorted(by: { $0.key < $1.key }) {
            if value.title == nil && value.description == nil {
                try await sql.raw("DELETE FROM book_translations WHERE book_id = \(bind: id) AND locale = \(bind: locale)").run()
            } else {
                try await sql.raw("""
                    INSERT INTO book_translations (book_id, locale, title, description) VALUES (\(bind: id), \(bind: locale), \(bind: value.title), \(bind: value.description))
                    ON CONFLICT (book_id, locale) DO UPDATE SET title = excluded.title, description = excluded.description
                     WHERE (book_translations.title, book_translations.description) IS DISTINCT FROM (excluded.title, excluded.description)
                    """).run()
            }
        }
    }

    static func saveCategory(_ id: Int, _ names: [String: String?], on sql: any SQLDatabase) async throws {
        for (locale, name) in names.sorted(by: { $0.key < $1.key }) {
            if let name {
                try await sql.raw("""
                    INSERT INTO category_translations (category_id, locale, name) VALUES (\(bind: id), \(bind: locale), \(bind: name))
                    ON CONFLICT (category_id, locale) DO UPDATE SET name = excluded.name WHERE category_translations.name IS DISTINCT FROM excluded.name
                    """).run()
            } else {
                try await sql.raw("DELETE FROM category_translations WHERE category_id = \(bind: id) AND locale = \(bind: locale)").run()
            }
        }
    }

    /// What the audit snapshot of a book adds: its translations by locale.
    static let bookSnapshot: SQLFragment = """
        COALESCE((SELECT jsonb_object_agg(bt.locale, jsonb_build_object('title', bt.title, 'description', bt.description))
                    FROM book_translations bt WHERE bt.book_id = t.id), '{}'::jsonb)
        """

    /// What the audit snapshot of a category adds: its names by locale.
    static let categorySnapshot: SQLFragment = """
        COALESCE((SELECT jsonb_object_agg(ct.locale, ct.name) FROM category_translations ct WHERE ct.category_id = t.id), '{}'::jsonb)
        """

    /// Per locale: books (not archived, not in that language) missing a title, missing a
    /// description (that have one of their own), and categories missing a name.
    struct Missing: Codable, Sendable { let locale: String; let titles: Int; let descriptions: Int; let categories: Int }

    static func missing(_ locales: [String], defaultLocale: String, on sql: any SQLDatabase) async throws -> [Missing] {
        try await sql.raw("""
            SELECT l.locale,
                   (SELECT count(*) FROM books b WHERE b.status <> 'archived' AND b.language <> split_part(l.locale, '-', 1)
                       AND NOT EXISTS (SELECT 1 FROM book_translations t WHERE t.book_id = b.id AND t.locale = l.locale AND t.title IS NOT NULL)) AS titles,
                   (SELECT count(*) FROM books b WHERE b.status <> 'archived' AND b.language <> split_part(l.locale, '-', 1) AND b.description <> ''
                       AND NOT EXISTS (SELECT 1 FROM book_translations t WHERE t.book_id = b.id AND t.locale = l.locale AND t.description IS NOT NULL)) AS descriptions,
                   CASE WHEN l.locale = \(bind: defaultLocale) THEN 0 ELSE
                   (SELECT count(*) FROM categories c WHERE NOT EXISTS (SELECT 1 FROM category_translations t WHERE t.category_id = c.id AND t.locale = l.locale)) END AS categories
              FROM unnest(\(bind: locales)::text[]) WITH ORDINALITY AS l(locale, n) ORDER BY l.n
            """).all(decoding: Missing.self)
    }

    struct MissingBook: Codable, Sendable { let id: Int; let title: String; let language: String; let status: String }

    /// Up to `limit` books missing `field` ("title" or "description") in `locale`, newest first,
    /// their title containing `query` when given.
    static func missingBooks(_ locale: String, field: String, query: String?, limit: Int, on sql: any SQLDatabase) async throws -> [MissingBook] {
        let column: SQLQueryString = field == "description" ? "t.description" : "t.title"
        var conditions: [SQLQueryString] = ["b.status <> 'archived'", "b.language <> split_part(\(bind: locale), '-', 1)"]
        if field == "description" { conditions.append("b.description <> ''") }
        if let query, !query.isEmpty { conditions.append(TextMatch.contains("b.title", query)) }
        return try await sql.raw("""
            SELECT b.id, b.title, b.language, b.status FROM books b
             WHERE \(conditions.joined(separator: " AND "))
               AND NOT EXISTS (SELECT 1 FROM book_translations t WHERE t.book_id = b.id AND t.locale = \(bind: locale) AND \(column) IS NOT NULL)
             ORDER BY b.id DESC LIMIT \(bind: limit)
            """).all(decoding: MissingBook.self)
    }
}
