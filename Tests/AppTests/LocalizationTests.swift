import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting
@testable import App

/// The catalog in the family's language (docs/localization.md): titles, descriptions and
/// category names per locale with their fallbacks, negotiated from `?locale=`, Accept-Language or
/// the account, the same from the engine and from SQL; search by a translated title.
@Suite struct LocalizationTests {
    static func translate(_ app: Application, book: Int, _ locale: String, title: String?, description: String? = nil) async throws {
        try await app.sql.raw("""
            INSERT INTO book_translations (book_id, locale, title, description) VALUES (\(bind: book), \(bind: locale), \(bind: title), \(bind: description))
            ON CONFLICT (book_id, locale) DO UPDATE SET title = excluded.title, description = excluded.description
            """).run()
    }

    @Test("titles, descriptions and category names in the family's locale, with fallbacks and headers — engine and SQL alike, fresh after a change", .app)
    func serving() async throws {
        let app = try app()
        let category = try await app.sql.raw("INSERT INTO categories (name, slug, display_order) VALUES ('Bedtime Stories', 'bedtime', 1) RETURNING id")
            .first()!.decode(column: "id", as: Int.self)
        try await app.sql.raw("INSERT INTO category_translations (category_id, locale, name) VALUES (\(bind: category), 'fr', 'Histoires du soir')").run()
        let horse = try await app.makeBook("The Little Horse", description: "A horse at night.", categories: [category])
        try await Self.translate(app, book: horse, "fr", title: "Le Petit Cheval", description: "Un cheval la nuit.")
        try await Self.translate(app, book: horse, "es", title: "El caballito")   // description falls back
        // A French book: its own text is French; English families get its English title.
        let chat = try await app.makeBook("Le Chat Perché", description: "Un chat sur le toit.")
        try await app.sql.raw("UPDATE books SET language = 'fr' WHERE id = \(bind: chat)").run()
        try await Self.translate(app, book: chat, "en", title: "The Cat Up High")
        try await Self.translate(app, book: chat, "fr", title: "Ignored: the book's own language")
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent()

        func titles(_ path: String, headers: HTTPHeaders = [:]) async throws -> (titles: [Int: String], response: TestingHTTPResponse) {
            let response = try await app.get(path, token: parent.token, headers: headers)
            #expect(response.status == .ok, "\(path)")
            return (Dictionary(uniqueKeysWithValues: try response.dataArray.map { ($0["id"] as! Int, $0["title"] as! String) }), response)
        }
        for engine in [true, false] {
            app.settings.catalogEngine = engine
            let fr = try await titles("/api/v1/catalog/books?locale=fr")
            #expect(fr.titles == [horse: "Le Petit Cheval", chat: "Le Chat Perché"], "engine \(engine)")
            #expect(fr.response.headers.first(name: .contentLanguage) == "fr")
            #expect(fr.response.headers[.vary].joined(separator: ",").contains("Accept-Language"))
            let frHorse = try fr.response.dataArray.first { $0["id"] as? Int == horse }!
            #expect(frHorse["description"] as? String == "Un cheval la nuit.")
            #expect((frHorse["categories"] as? [[String: Any]])?.first?["name"] as? String == "Histoires du soir")
            // Accept-Language with q-values; a regional tag falls back to its language.
            let es = try await titles("/api/v1/catalog/books", headers: ["Accept-Language": "ja, es-MX;q=0.9, fr;q=0.5"])
            #expect(es.titles == [horse: "El caballito", chat: "Le Chat Perché"] && es.response.headers.first(name: .contentLanguage) == "es")
            let esHorse = try es.response.dataArray.first { $0["id"] as? Int == horse }!
            #expect(esHorse["description"] as? String == "A horse at night.")
            #expect((esHorse["categories"] as? [[String: Any]])?.first?["name"] as? String == "Bedtime Stories")
            // ?locale= wins; the default; an unsupported locale is no error.
            #expect(try await titles("/api/v1/catalog/books?locale=fr", headers: ["Accept-Language": "es"]).titles[horse] == "Le Petit Cheval")
            let en = try await titles("/api/v1/catalog/books")
            #expect(en.titles == [horse: "The Little Horse", chat: "The Cat Up High"] && en.response.headers.first(name: .contentLanguage) == "en")
            let unknown = try await titles("/api/v1/catalog/books?locale=zz-!!", headers: ["Accept-Language": "ja"])
            #expect(unknown.titles == en.titles && unknown.response.headers.first(name: .contentLanguage) == "en")
            // ETags differ per locale, even for the same bytes (German: nothing translated).
            let de = try await titles("/api/v1/catalog/books/\(chat)?locale=de")
            let enChat = try await app.get("/api/v1/catalog/books/\(chat)?locale=en", token: parent.token)
            #expect(try de.response.dataObject["title"] as? String == "Le Chat Perché" && enChat.dataObject["title"] as? String == "The Cat Up High")
            let deHorse = try await app.get("/api/v1/catalog/books/\(horse)?locale=de", token: parent.token)
            let enHorse = try await app.get("/api/v1/catalog/books/\(horse)?locale=en", token: parent.token)
            #expect(deHorse.body == enHorse.body && deHorse.headers.first(name: .eTag) != enHorse.headers.first(name: .eTag))
            // Categories (no account needed).
            let categories = try await app.get("/api/v1/catalog/categories", headers: ["Accept-Language": "fr-FR"])
            #expect(try categories.dataArray.first?["name"] as? String == "Histoires du soir" && categories.headers.first(name: .contentLanguage) == "fr")
            let categoriesEN = try await app.get("/api/v1/catalog/categories")
            #expect(try categoriesEN.dataArray.first?["name"] as? String == "Bedtime Stories")
            #expect(categories.headers.first(name: .eTag) != categoriesEN.headers.first(name: .eTag))
            // Search finds the book by its French title; highlights point into the French title.
            let search = try await app.get("/api/v1/catalog/books?q=chevaux&locale=fr", token: parent.token)
            #expect(try search.dataArray.map { $0["id"] as! Int } == [horse], "engine \(engine)")
            let highlight = try (search.json["meta"] as? [String: Any])?["highlights"] as? [[String: Any]]
            let suggestions = try await app.get("/api/v1/catalog/suggest?q=petit&locale=fr", token: parent.token).dataArray
            #expect(suggestions.contains { $0["kind"] as? String == "title" && $0["text"] as? String == "Le Petit Cheval" }, "engine \(engine): \(suggestions)")
            let range = (highlight?.first?["title"] as? [[String: Any]])?.first
            #expect(range?["start"] as? Int == 9 && range?["length"] as? Int == 6, "\(String(describing: highlight))")
        }
        // The account's preferred locale, when the app sends none; a change is seen at once.
        try await app.sql.raw("UPDATE parents SET preferred_locale = 'es' WHERE id = \(bind: parent.id)").run()
        for engine in [true, false] {
            app.settings.catalogEngine = engine
            #expect(try await titles("/api/v1/catalog/books").titles[horse] == "El caballito", "engine \(engine)")
            #expect(try await titles("/api/v1/catalog/books", headers: ["Accept-Language": "fr"]).titles[horse] == "Le Petit Cheval")
        }
        // A translation changed or removed is in the next answer (the change log), both paths.
        try await Self.translate(app, book: horse, "es", title: "El pequeño caballo")
        try await app.sql.raw("DELETE FROM book_translations WHERE book_id = \(bind: chat)").run()
        try await app.sql.raw("UPDATE category_translations SET name = 'Contes du soir'").run()
        let left = try await app.sql.raw("SELECT translated_titles FROM books WHERE id = \(bind: chat)").first()!.decode(column: "translated_titles", as: String.self)
        #expect(left == "")   // the English title no longer finds it
        for engine in [true, false] {
            app.settings.catalogEngine = engine
            #expect(try await titles("/api/v1/catalog/books").titles == [horse: "El pequeño caballo", chat: "Le Chat Perché"], "engine \(engine)")
            let fr = try await app.get("/api/v1/catalog/books/\(horse)?locale=fr", token: parent.token)
            #expect((try fr.dataObject["categories"] as? [[String: Any]])?.first?["name"] as? String == "Contes du soir", "engine \(engine)")
            #expect(try await app.get("/api/v1/catalog/books?q=caballo", token: parent.token).dataArray.count == 1)
        }
    }
}

extension LocalizationTests {
    @Test("differential: 800 random queries in random locales (?locale=, Accept-Language, the default) over random translations of a third of the books and of the categories — the engine answers exactly as the SQL, detail too", .app)
    func differential() async throws {
        let app = try app()
        let seeder = DemoSeeder(books: 900, reference: Date().addingTimeInterval(-400 * 86400), seedsDirectory: TestDatabase.projectDirectory + "seeds",
                                hashPassword: { try $0.hashedForTests() })
        _ = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in }
        try await app.sql.raw("UPDATE books SET language = (ARRAY['fr', 'es', 'de'])[1 + id % 3] WHERE id % 5 = 0").run()
        // Translations: another book's title (its words then find this book too), some descriptions only, some titles only.
        try await app.sql.raw("""
            INSERT INTO book_translations (book_id, locale, title, description)
            SELECT b.id, l.locale, CASE WHEN (b.id + l.n) % 4 <> 0 THEN o.title || ' ' || l.locale END,
                   CASE WHEN (b.id + l.n) % 3 <> 0 THEN 'Traduit: ' || o.description || ' "\\u00e9" ' END
              FROM books b JOIN books o ON o.id = (b.id * 7) % 900 + 1
              CROSS JOIN (VALUES ('fr', 1), ('es', 2), ('de', 3)) AS l(locale, n)
             WHERE b.id % 3 = 0 AND (b.id + l.n) % 2 = 0 AND (b.id + l.n) % 12 <> 0
            ON CONFLICT (book_id, locale) DO NOTHING
            """).run()   // beside the demo's own French and Spanish titles
        try await app.sql.raw("""
            INSERT INTO category_translations (category_id, locale, name)
            SELECT c.id, l.locale, c.name || ' (' || l.locale || ')' FROM categories c CROSS JOIN (VALUES ('fr'), ('es')) AS l(locale) WHERE (c.id + length(l.locale)) % 3 <> 0
            ON CONFLICT (category_id, locale) DO UPDATE SET name = excluded.name
            """).run()
        try await app.sql.raw("DELETE FROM category_translations WHERE locale = 'de' AND category_id % 2 = 0").run()
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent()
        let (words, slugs, categoryIDs, publishers) = try await CatalogEngineTests.vocabulary(app)
        var random = CatalogEngineTests.Random(state: 20261126)
        var translated = 0, compared = 0
        for i in 0..<800 {
            let query = CatalogEngineTests.randomQuery(&random, words: words, slugs: slugs, categoryIDs: categoryIDs, publishers: publishers)
            var headers: HTTPHeaders = [:]
            var path = "/api/v1/catalog/books?" + query
            switch random.int(0...3) {
            case 0: path += "&locale=" + random.pick(["fr", "es", "de", "fr-CA", "xx", "en"])
            case 1: headers.add(name: .acceptLanguage, value: random.pick(["fr-FR,fr;q=0.9", "es;q=0.5, de;q=0.8", "ja", "*", "de-AT"]))
            case 2: if i == 400 { try await app.sql.raw("UPDATE parents SET preferred_locale = 'fr' WHERE id = \(bind: parent.id)").run() }
            default: break
            }
            app.settings.catalogEngine = false
            let sql = try await app.get(path, token: parent.token, headers: headers)
            app.settings.catalogEngine = true
            let engine = try await app.get(path, token: parent.token, headers: headers)
            #expect(sql.status == .ok && engine.status == .ok, "\(path)")
            let a = try CatalogEngineTests.jsonObject(sql), b = try CatalogEngineTests.jsonObject(engine)
            #expect(a == b, "\(path) \(headers)\nSQL:    \(sql.body.string.prefix(800))\nengine: \(engine.body.string.prefix(800))")
            #expect(sql.headers.first(name: .contentLanguage) == engine.headers.first(name: .contentLanguage), "\(path)")
            if ["Traduit", " fr\"", " es\"", " de\"", "(fr)\"", "(es)\"", "Gutenachtgeschichten", "Une histoire", "Una historia", "Un conte", "Un cuento"].contains(where: sql.body.string.contains) { translated += 1 }
            compared += 1
            if a != b { break }
        }
        #expect(compared == 800 && translated > 100, "\(translated) answers with translated text")
        for id in stride(from: 1, through: 900, by: 11) {
            for locale in ["fr", "es", "de", "en"] {
                app.settings.catalogEngine = false
                let sql = try await app.get("/api/v1/catalog/books/\(id)?locale=\(locale)", token: parent.token)
                app.settings.catalogEngine = true
                let engine = try await app.get("/api/v1/catalog/books/\(id)?locale=\(locale)", token: parent.token)
                #expect(sql.status == engine.status, "book \(id) in \(locale)")
                if sql.status == .ok { #expect(try CatalogEngineTests.jsonObject(sql) == CatalogEngineTests.jsonObject(engine), "book \(id) in \(locale)") }
            }
        }
    }
}

extension LocalizationTests {
    @Test("PATCH /me preferred_locale: one of CATALOG_LOCALES (a regional tag matched), null clears it, anything else a 400 that changes nothing; the catalog follows", .app)
    func preferredLocale() async throws {
        let app = try app()
        let horse = try await app.makeBook("The Little Horse")
        try await Self.translate(app, book: horse, "de", title: "Das kleine Pferd")
        let parent = try await app.makeParent()
        #expect(try await app.get("/api/v1/me", token: parent.token).dataObject["preferred_locale"] is NSNull)
        let set = try await app.send(.PATCH, "/api/v1/me", token: parent.token, json: #"{"preferred_locale": "de-AT"}"#)
        let setLocale = try set.dataObject["preferred_locale"] as? String
        #expect(set.status == .ok && setLocale == "de")
        for engine in [true, false] {
            app.settings.catalogEngine = engine
            let books = try await app.get("/api/v1/catalog/books", token: parent.token)
            #expect(try books.dataArray.first?["title"] as? String == "Das kleine Pferd" && books.headers.first(name: .contentLanguage) == "de", "engine \(engine)")
        }
        let bad = try await app.send(.PATCH, "/api/v1/me", token: parent.token, json: #"{"preferred_locale": "klingon", "country": "FR"}"#)
        #expect(bad.status == .badRequest && bad.body.string.contains("preferred_locale"))
        let unchanged = try await app.get("/api/v1/me", token: parent.token).dataObject
        #expect(unchanged["country"] as? String != "FR" && unchanged["preferred_locale"] as? String == "de")
        let cleared = try await app.send(.PATCH, "/api/v1/me", token: parent.token, json: #"{"preferred_locale": null}"#)
        #expect(try cleared.dataObject["preferred_locale"] is NSNull)
        #expect(try await app.get("/api/v1/catalog/books", token: parent.token).dataArray.first?["title"] as? String == "The Little Horse")
    }
}
