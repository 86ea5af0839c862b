@testable import App
import Foundation
import StorytimeKit
import Testing
import Vapor

/// StorytimeKit in the family's language (docs/localization.md), over real HTTP.
@Suite("StorytimeKit locales")
struct StorytimeKitLocaleTests {
    @Test("setLanguages sends Accept-Language: the catalog, a book and the categories come translated; /me carries preferred_locale")
    func languages() async throws {
        try await StorytimeKitLiveTests.withServer { app, url in
            let category = try await app.sql.raw("INSERT INTO categories (name, slug) VALUES ('Bedtime Stories', 'bedtime') RETURNING id")
                .first()!.decode(column: "id", as: Int.self)
            try await app.sql.raw("INSERT INTO category_translations (category_id, locale, name) VALUES (\(bind: category), 'fr', 'Histoires du soir')").run()
            let horse = try await app.makeBook("The Little Horse", categories: [category])
            try await LocalizationTests.translate(app, book: horse, "fr", title: "Le Petit Cheval")
            try await app.appServices.catalogEngine.build(on: app.db)
            _ = try await app.makeParent(email: "lang@example.com", password: "kit password")
            let client = StorytimeClient(baseURL: url)
            try await client.signIn(email: "lang@example.com", password: "kit password")
            #expect(try await client.books().data.first?.title == "The Little Horse")
            client.setLanguages(["fr-CA", "en"])
            #expect(client.acceptLanguage == "fr-CA, en;q=0.9")
            #expect(try await client.books().data.first?.title == "Le Petit Cheval")
            #expect(try await client.book(id: horse).categories.first?.name == "Histoires du soir")
            #expect(try await client.categories().first?.name == "Histoires du soir")
            #expect(try await client.me().preferredLocale == nil)
        }
    }
}
