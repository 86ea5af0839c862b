import Foundation
import SQLKit

/// A revert brings translations back with their record (docs/localization.md): a book's titles
/// and descriptions per locale (`translations` in its snapshot), a category's names (`names`).
extension AuditRevert {
    /// Sets the record's translations to those of the snapshot before the change.
    func restoreTranslations(on sql: any SQLDatabase) async throws {
        switch resource.table {
        case "books":
            let values = before["translations"] as? [String: Any] ?? [:]
            try await sql.raw("DELETE FROM book_translations WHERE book_id = \(bind: recordID)").run()
            for (locale, value) in values.sorted(by: { $0.key < $1.key }) {
                let fields = value as? [String: Any] ?? [:]
                let title = fields["title"] as? String, description = fields["description"] as? String
                guard title != nil || description != nil else { continue }
                try await sql.raw("""
                    INSERT INTO book_translations (book_id, locale, title, description) VALUES (\(bind: recordID), \(bind: locale), \(bind: title), \(bind: description))
                    """).run()
            }
        case "categories":
            let names = before["names"] as? [String: Any] ?? [:]
            try await sql.raw("DELETE FROM category_translations WHERE category_id = \(bind: recordID)").run()
            for (locale, name) in names.sorted(by: { $0.key < $1.key }) {
                guard let name = name as? String else { continue }
                try await sql.raw("INSERT INTO category_translations (category_id, locale, name) VALUES (\(bind: recordID), \(bind: locale), \(bind: name))").run()
            }
        default: return
        }
    }

    /// Whether the snapshot's `fields` (or, restoring, the snapshot) hold translations to set back.
    func hasTranslations(_ fields: [String]) -> Bool { fields.contains("translations") || fields.contains("names") }
}
