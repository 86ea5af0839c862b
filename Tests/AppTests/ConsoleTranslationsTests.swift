import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting
@testable import App

/// Console translations (docs/localization.md): side by side with the record's own text, saved
/// at once and audited (and reverted) like any field, missing ones counted per locale.
@Suite struct ConsoleTranslationsTests {
    @Test("a book's and a category's translations side by side: saved, audited, reverted, counted as missing, read only for viewers", .app)
    func sideBySide() async throws {
        let app = try app()
        let book = try await app.makeBook("The Little Horse", description: "A horse at night.")
        let other = try await app.makeBook("Moon Song", description: "A song.")
        let category = try await app.sql.raw("INSERT INTO categories (name, slug) VALUES ('Bedtime Stories', 'bedtime') RETURNING id")
            .first()!.decode(column: "id", as: Int.self)
        let client = try await app.console(role: .editor)
        let form = try await client.get("/admin/books/\(book)/translations")
        #expect(form.status == .ok)
        // The own text visible, a column per other locale.
        #expect(form.html.contains("The Little Horse") && form.html.contains("A horse at night."))
        for locale in ["fr", "es", "de"] { #expect(form.html.contains(#"name="title[\#(locale)]""#) && form.html.contains(#"name="description[\#(locale)]""#)) }
        #expect(!form.html.contains(#"name="title[en]""#))
        let saved = try await client.post("/admin/books/\(book)/translations", [("title[fr]", "Le Petit Cheval"), ("description[fr]", "Un cheval la nuit."),
                                                                            ("title[es]", "El caballito"), ("description[es]", ""), ("title[de]", " ")])
        #expect(saved.status == .seeOther)
        let rows = try await app.sql.raw("SELECT locale, title, description FROM book_translations WHERE book_id = \(bind: book) ORDER BY locale").all()
        #expect(try rows.map { try $0.decode(column: "locale", as: String.self) } == ["es", "fr"])
        #expect(try rows.map { try $0.decode(column: "description", as: String?.self) } == [nil, "Un cheval la nuit."])
        #expect(try await client.get("/admin/books/\(book)/translations").html.contains(#"value="Le Petit Cheval""#))
        // Audited as an update of the book, its snapshot holding the translations.
        let audit = try await app.sql.raw("SELECT id, kind, after::text AS after FROM audit_log WHERE table_name = 'books' AND record_id = \(bind: book) ORDER BY id DESC LIMIT 1").first()!
        #expect(try audit.decode(column: "kind", as: String.self) == "update")
        #expect(try audit.decode(column: "after", as: String.self).contains("Le Petit Cheval"))
        // Saving the same again writes no audit row.
        _ = try await client.post("/admin/books/\(book)/translations", [("title[fr]", "Le Petit Cheval"), ("description[fr]", "Un cheval la nuit."), ("title[es]", "El caballito")])
        #expect(try await app.sql.raw("SELECT count(*) AS n FROM audit_log WHERE table_name = 'books' AND record_id = \(bind: book)").first()!.decode(column: "n", as: Int.self) == 1)
        // Reverting the change takes the translations back out.
        let admin = try await app.console(role: .admin)
        let revert = try await admin.post("/admin/audit/\(try audit.decode(column: "id", as: Int.self))/revert", [])
        #expect(revert.status == .seeOther, "\(revert.html.prefix(400))")
        #expect(try await app.sql.raw("SELECT count(*) AS n FROM book_translations WHERE book_id = \(bind: book)").first()!.decode(column: "n", as: Int.self) == 0)
        // A category's names.
        #expect(try await client.get("/admin/categories/\(category)/translations").html.contains(#"name="name[fr]""#))
        _ = try await client.post("/admin/categories/\(category)/translations", [("name[fr]", "Histoires du soir"), ("name[de]", "Gutenachtgeschichten")])
        #expect(try await app.sql.raw("SELECT count(*) AS n FROM category_translations WHERE category_id = \(bind: category)").first()!.decode(column: "n", as: Int.self) == 2)
        // Missing: per locale, with a filter.
        _ = try await client.post("/admin/books/\(other)/translations", [("title[fr]", "Chanson de lune")])
        let missing = try await client.get("/admin/translations?locale=fr&field=title")
        #expect(missing.status == .ok && missing.html.contains("The Little Horse") && !missing.html.contains(">Moon Song<"))
        let filtered = try await client.get("/admin/translations?locale=es&field=title&q=moon")
        #expect(filtered.html.contains("Moon Song") && !filtered.html.contains(">The Little Horse<"))
        #expect(missing.html.contains(#"<td><a href="/admin/translations?locale=fr&field=title">1</a></td>"#), "\(missing.html)")
        // A viewer sees them and cannot save.
        let viewer = try await app.console(role: .viewer)
        #expect(try await viewer.get("/admin/books/\(book)/translations").html.contains("readonly"))
        #expect(try await viewer.post("/admin/books/\(book)/translations", [("title[fr]", "Nope")]).status == .forbidden)
        // The preview as a family can choose the locale.
        _ = try await client.post("/admin/books/\(book)/translations", [("title[fr]", "Le Petit Cheval")])
        try await app.sql.raw("UPDATE books SET status = 'active' WHERE id = \(bind: book)").run()
        try await app.appServices.catalogEngine.build(on: app.db)
        let preview = try await viewer.get("/admin/preview?country=US&locale=fr")
        #expect(preview.status == .ok && preview.html.contains("Le Petit Cheval") && preview.html.contains("reading fr"), "\(preview.html.suffix(1500))")
        #expect(try await viewer.get("/admin/preview?country=US").html.contains(">The Little Horse<"))
        // Too long: refused with the reason, nothing written.
        let long = try await client.post("/admin/books/\(book)/translations", [("description[fr]", String(repeating: "x", count: 10_001))])
        #expect(long.status == .unprocessableEntity)
    }
}

extension ConsoleTranslationsTests {
    @Test("CSV: the export has title[fr]-style columns; an import sets translations from them (a blank cell keeps one), audited with the book", .app)
    func csv() async throws {
        let app = try app()
        let client = try await app.console(role: .editor)
        let csv = """
            title,external_id,title[fr],description[fr],title[es]
            The Owl,ISBN-1,Le Hibou,Un hibou la nuit.,El búho
            The Fox,ISBN-2,,,El zorro
            """.replacingOccurrences(of: "\n", with: "\r\n")
        let uploaded = try await client.upload("/admin/books/import", file: "books.csv", csv)
        let importPath = try #require(uploaded.location)
        let guessed = try await client.get(importPath).html
        #expect(guessed.contains("Title (fr)") && guessed.contains("<option value=\"2\" selected>"))
        let done = try await client.post(importPath + "/run", [("map_title", "0"), ("map_external_id", "1"), ("map_title[fr]", "2"),
                                                               ("map_description[fr]", "3"), ("map_title[es]", "4")])
        #expect(done.status == .seeOther)
        let rows = try await app.sql.raw("""
            SELECT b.external_id || ':' || t.locale || ':' || COALESCE(t.title, '-') || ':' || COALESCE(t.description, '-') AS line
              FROM book_translations t JOIN books b ON b.id = t.book_id ORDER BY 1
            """).all().map { try $0.decode(column: "line", as: String.self) }
        #expect(rows == ["ISBN-1:es:El búho:-", "ISBN-1:fr:Le Hibou:Un hibou la nuit.", "ISBN-2:es:El zorro:-"])
        let audited = try await app.sql.raw("SELECT count(*) AS n FROM audit_log WHERE table_name = 'books' AND kind = 'import' AND after::text LIKE '%Le Hibou%'").first()!
        #expect(try audited.decode(column: "n", as: Int.self) == 1)
        // A second import with a blank cell keeps the translation; a new value replaces it.
        let again = "external_id,title[fr],description[fr]\r\nISBN-1,,Une chouette histoire.\r\n"
        let second = try #require(try await client.upload("/admin/books/import", file: "again.csv", again).location)
        _ = try await client.post(second + "/run", [("map_external_id", "0"), ("map_title[fr]", "1"), ("map_description[fr]", "2")])
        let owl = try await app.sql.raw("SELECT t.title, t.description FROM book_translations t JOIN books b ON b.id = t.book_id WHERE b.external_id = 'ISBN-1' AND t.locale = 'fr'").first()!
        #expect(try owl.decode(column: "title", as: String.self) == "Le Hibou" && owl.decode(column: "description", as: String.self) == "Une chouette histoire.")
        // The export names the columns as the import reads them.
        let export = try await client.get("/admin/books/export.csv")
        let header = export.html.components(separatedBy: "\r\n").first ?? ""
        #expect(header.contains("title[fr],description[fr],title[es],description[es],title[de]"), "\(header)")
        #expect(export.html.contains("Le Hibou"))
    }

    @Test("found by an attack: a NUL in a translation is refused beside nothing changed, a NUL search is no search (never a 500); the export leaves untranslated cells empty; an import cannot translate a book into its own language", .app)
    func attackFindings() async throws {
        let app = try app()
        let book = try await app.makeBook("The Night Train", description: "A train at night.")
        let client = try await app.console(role: .editor)
        let refused = try await client.post("/admin/books/\(book)/translations", [("title[fr]", "Le train\u{0}de nuit")])
        #expect(refused.status == .unprocessableEntity && refused.html.contains("NUL"), "\(refused.status)")
        let category = try await app.sql.raw("INSERT INTO categories (name, slug) VALUES ('Trains', 'trains') RETURNING id").first()!.decode(column: "id", as: Int.self)
        #expect(try await client.post("/admin/categories/\(category)/translations", [("name[fr]", "a\u{0}b")]).status == .unprocessableEntity)
        #expect(try await app.sql.raw("SELECT (SELECT count(*) FROM book_translations) + (SELECT count(*) FROM category_translations) AS n").first()!.decode(column: "n", as: Int.self) == 0)
        for path in ["/admin/translations?q=%00", "/admin/translations?q=x%00&field=description", "/admin/search?q=%00", "/admin/search?q=a%00"] {
            #expect(try await client.get(path).status == .ok, "\(path)")
        }
        // The export: a book without a French title has an empty cell, which an import reads as "keep".
        let export = try await client.get("/admin/books/export.csv").html
        let lines = export.components(separatedBy: "\r\n")
        let row = try #require(lines.first { $0.contains("The Night Train") })
        #expect(!row.contains("—"), "\(row)")
        // An import translating an English book into English is refused with the reason.
        let csv = "title,external_id,language,title[fr],title[es]\r\nLe Hibou,ISBN-9,fr,Le Hibou,El búho\r\n"
        let upload = try #require(try await client.upload("/admin/books/import", file: "own.csv", csv).location)
        let dry = try await client.post(upload + "/run", [("map_title", "0"), ("map_external_id", "1"), ("map_language", "2"), ("map_title[fr]", "3"), ("map_title[es]", "4")])
        #expect(dry.status == .seeOther)
        #expect(try await app.sql.raw("SELECT count(*) AS n FROM book_translations").first()!.decode(column: "n", as: Int.self) == 0)
        #expect(try await app.sql.raw("SELECT count(*) AS n FROM books WHERE external_id = 'ISBN-9'").first()!.decode(column: "n", as: Int.self) == 0)
    }
}
