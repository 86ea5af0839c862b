import Core
import Foundation
import SQLKit

/// CSV columns of translations (docs/localization.md): `title[fr]`, `description[fr]` for each
/// locale of `CATALOG_LOCALES` but the default, in the books' export and the import's targets.
/// A blank cell leaves that translation as it is; a too-long one refuses the row.
extension BookImportPlan {
    /// The locales the CSV carries: those of `CATALOG_LOCALES` as the process started, less the default.
    static let translationLocales: [String] = {
        let setting = ProcessInfo.processInfo.environment["CATALOG_LOCALES"].flatMap { $0.isEmpty ? nil : $0 }
        return Array((setting.flatMap(CatalogLocales.init(setting:)) ?? CatalogLocales(["en", "fr", "es", "de"])).supported.dropFirst())
    }()

    static let translationTargets: [(name: String, label: String)] = translationLocales.flatMap {
        [("title[\($0)]", "Title (\($0))"), ("description[\($0)]", "Description (\($0))")]
    }

    /// The export's columns: each locale's title and description, named as the import reads them.
    static var translationColumns: [AdminColumn] {
        translationLocales.flatMap { locale -> [AdminColumn] in
            let quoted = "'" + locale + "'"
            return ["title", "description"].map { field in
                AdminColumn("\(field)_\(locale)", "\(field)[\(locale)]",
                            sql: SQLFragment(trusted: "(SELECT bt.\(field) FROM book_translations bt WHERE bt.book_id = t.id AND bt.locale = \(quoted))"))
            }
        }
    }

    /// The row's translation cells (blank: left as it is); a reason when one is too long, or
    /// when one is in the book's own `language` (its own text is the title and description columns).
    static func translations(_ cell: (String) -> String?, language: String?) -> (values: [String: (title: String?, description: String?)], refusal: String?) {
        var values: [String: (title: String?, description: String?)] = [:]
        for locale in translationLocales {
            let title = cell("title[\(locale)]").flatMap { $0.isEmpty ? nil : $0 }
            let description = cell("description[\(locale)]").flatMap { $0.isEmpty ? nil : $0 }
            if locale == language, title != nil || description != nil {
                return ([:], "title[\(locale)]/description[\(locale)]: the book is in \(locale); its own text goes in title and description.")
            }
            if let title, title.count > 500 { return ([:], "title[\(locale)]: use at most 500 characters.") }
            if let description, description.count > 10_000 { return ([:], "description[\(locale)]: use at most 10,000 characters.") }
            if title != nil || description != nil { values[locale] = (title, description) }
        }
        return (values, nil)
    }

    /// Writes the rows' translations (`books`: each row's book), keeping what a blank cell left out.
    static func writeTranslations(_ rows: [(book: Int, values: [String: (title: String?, description: String?)])], on sql: any SQLDatabase) async throws {
        let flat = rows.flatMap { row in row.values.sorted { $0.key < $1.key }.map { (row.book, $0.key, $0.value.title, $0.value.description) } }
        guard !flat.isEmpty else { return }
        try await sql.raw("""
            INSERT INTO book_translations (book_id, locale, title, description)
            SELECT * FROM unnest(\(bind: flat.map(\.0))::bigint[], \(bind: flat.map(\.1))::text[], \(bind: flat.map(\.2))::text[], \(bind: flat.map(\.3))::text[])
            ON CONFLICT (book_id, locale) DO UPDATE SET title = COALESCE(excluded.title, book_translations.title),
                                                      description = COALESCE(excluded.description, book_translations.description)
            """).run()
    }
}
