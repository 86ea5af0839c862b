import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting
@testable import App

/// Rights by territory: a window applies in its territories except the excluded ones; a parent's
/// country decides which apply to them — in the catalog (results, counts, facets, detail), in
/// `rights_available`, in library adds and in the calendar.
@Suite struct TerritoryTests {
    /// Sets a window's territories (and exclusions) as written, e.g. `["FR"]`.
    static func window(_ app: Application, book: Int, start: String, end: String?, territories: [String] = [],
                       excluded: [String] = []) async throws {
        try await app.sql.raw("""
            INSERT INTO rights_windows (book_id, starts_at, ends_at, territories, exclude_territories)
            VALUES (\(bind: book), now() + \(bind: start)::interval, now() + \(bind: end)::interval, \(bind: territories)::text[], \(bind: excluded)::text[])
            """).run()
    }

    static func ids(_ response: TestingHTTPResponse) throws -> Set<Int> {
        Set(try response.dataArray.compactMap { $0["id"] as? Int })
    }

    @Test("the same book is available in FR and not in the US: catalog, counts, facets, detail, library add, PATCH /me, engine and SQL alike", .app)
    func franceAndUnitedStates() async throws {
        let app = try app()
        let category = try await app.sql.raw("INSERT INTO categories (name, slug, display_order) VALUES ('Contes', 'contes', 1) RETURNING id")
            .first()!.decode(column: "id", as: Int.self)
        let frOnly = try await app.makeBook("Le Petit Prince", rights: .none)
        try await Self.window(app, book: frOnly, start: "-1 day", end: nil, territories: ["FR", "BE"])
        let notUS = try await app.makeBook("Babar Everywhere", rights: .none)
        try await Self.window(app, book: notUS, start: "-1 day", end: "30 days", excluded: ["US"])
        let worldwide = try await app.makeBook("Worldwide Tale", rights: .active)
        // Licensed in the US only in the past: in the US catalog, but not available now.
        let usLater = try await app.makeBook("Past American Tale", rights: .none)
        try await Self.window(app, book: usLater, start: "-60 days", end: "-30 days", territories: ["US"])
        try await Self.window(app, book: usLater, start: "-1 day", end: nil, territories: ["FR"])
        for book in [frOnly, notUS, worldwide, usLater] {
            try await app.sql.raw("INSERT INTO book_categories (book_id, category_id) VALUES (\(bind: book), \(bind: category))").run()
        }
        try await app.appServices.catalogEngine.build(on: app.db)
        let france = try await app.makeParent(country: "FR")
        let states = try await app.makeParent(country: "US")

        for engine in [true, false] {
            app.settings.catalogEngine = engine
            let fr = try await app.get("/api/v1/catalog/books", token: france.token)
            let us = try await app.get("/api/v1/catalog/books", token: states.token)
            #expect(try Self.ids(fr) == [frOnly, notUS, worldwide, usLater], "engine \(engine)")
            #expect(try Self.ids(us) == [worldwide, usLater], "engine \(engine)")
            #expect(try fr.meta["total_count"] == 4, "engine \(engine)")
            #expect(try us.meta["total_count"] == 2, "engine \(engine)")
            // rights_available per country.
            let frRights = Dictionary(uniqueKeysWithValues: try fr.dataArray.map { ($0["id"] as! Int, $0["rights_available"] as! Bool) })
            let usRights = Dictionary(uniqueKeysWithValues: try us.dataArray.map { ($0["id"] as! Int, $0["rights_available"] as! Bool) })
            #expect(frRights == [frOnly: true, notUS: true, worldwide: true, usLater: true], "engine \(engine)")
            #expect(usRights == [worldwide: true, usLater: false], "engine \(engine)")
            // Facets count the country's catalog.
            let usFacets = try JSONSerialization.jsonObject(with: Data(us.body.readableBytesView)) as! [String: Any]
            let counts = ((usFacets["meta"] as! [String: Any])["facets"] as! [String: Any])["categories"] as! [[String: Any]]
            #expect(counts.first { $0["slug"] as? String == "contes" }?["count"] as? Int == 2, "engine \(engine)")
            // Detail: a book not licensed in the country is unknown there.
            #expect(try await app.get("/api/v1/catalog/books/\(frOnly)", token: states.token).status == .notFound, "engine \(engine)")
            let detail = try await app.get("/api/v1/catalog/books/\(frOnly)", token: france.token)
            #expect(detail.status == .ok, "engine \(engine)")
            #expect(try detail.dataObject["rights_available"] as? Bool == true, "engine \(engine)")
            let past = try await app.get("/api/v1/catalog/books/\(usLater)", token: states.token)
            #expect(past.status == .ok, "engine \(engine)")
            #expect(try past.dataObject["rights_available"] as? Bool == false, "engine \(engine)")
        }
        app.settings.catalogEngine = true

        // Library add: unknown (404) in the US, as on every route there; 201 in France.
        let refused = try await app.send(.POST, "/api/v1/children/\(states.children[0])/library", token: states.token, json: #"{"book_id": \#(frOnly)}"#)
        #expect(refused.status == .notFound)
        #expect(try refused.json["code"] as? String == "not_found")
        let added = try await app.send(.POST, "/api/v1/children/\(france.children[0])/library", token: france.token, json: #"{"book_id": \#(frOnly)}"#)
        #expect(added.status == .created)
        #expect(try added.dataObject["rights_available"] as? Bool == true)

        // /me shows the country; PATCH moves the parent and the very next catalog answer follows.
        #expect(try await app.get("/api/v1/me", token: states.token).dataObject["country"] as? String == "US")
        let bad = try await app.send(.PATCH, "/api/v1/me", token: states.token, json: #"{"country": "XX", "time_zone": "Europe/Paris"}"#)
        #expect(bad.status == .badRequest)
        #expect(try bad.json["field"] as? String == "country")
        #expect(try await app.get("/api/v1/me", token: states.token).dataObject["time_zone"] as? String == "UTC")
        let moved = try await app.send(.PATCH, "/api/v1/me", token: states.token, json: #"{"country": "be"}"#)
        #expect(moved.status == .ok)
        #expect(try moved.dataObject["country"] as? String == "BE")
        #expect(try Self.ids(try await app.get("/api/v1/catalog/books", token: states.token)) == [frOnly, notUS, worldwide])
        let audit = try await app.sql.raw("SELECT after->>'country' AS c FROM parent_audit_log WHERE parent_id = \(bind: states.id) AND action = 'account.country'")
            .all().map { try $0.decode(column: "c", as: String.self) }
        #expect(audit == ["BE"])

        // A parent created without a country gets the configured default (US).
        let plain = try await app.makeParent()
        #expect(try await app.get("/api/v1/me", token: plain.token).dataObject["country"] as? String == app.settings.defaultCountry)
    }

    @Test("a window's territories changed in SQL reach the engine's next answer; the calendar counts only the country's windows", .app(engine: true))
    func changesAndCalendar() async throws {
        let app = try app()
        let book = try await app.makeBook("Moving Rights", rights: .none)
        try await Self.window(app, book: book, start: "-1 day", end: "2 days")
        let france = try await app.makeParent(country: "FR")
        #expect(try Self.ids(try await app.get("/api/v1/catalog/books", token: france.token)) == [book])
        try await app.sql.raw("UPDATE rights_windows SET territories = '{DE}' WHERE book_id = \(bind: book)").run()
        #expect(try Self.ids(try await app.get("/api/v1/catalog/books", token: france.token)) == [])
        try await app.sql.raw("UPDATE rights_windows SET territories = '{}', exclude_territories = '{FR}' WHERE book_id = \(bind: book)").run()
        #expect(try await app.get("/api/v1/catalog/books/\(book)", token: france.token).status == .notFound)
        try await app.sql.raw("UPDATE rights_windows SET exclude_territories = '{}' WHERE book_id = \(bind: book)").run()
        #expect(try await app.get("/api/v1/catalog/books/\(book)", token: france.token).dataObject["rights_available"] as? Bool == true)

        // Leaving in two days in France (a worldwide window); a German window leaving tomorrow is not shown there.
        let german = try await app.makeBook("German Rights", rights: .none)
        try await Self.window(app, book: german, start: "-1 day", end: "1 day", territories: ["DE"])
        let leaving = { (token: String) async throws -> Set<Int> in
            let days = try await app.get("/api/v1/catalog/calendar", token: token).dataObject["days"] as! [[String: Any]]
            return Set(days.flatMap { ($0["leaving"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int } })
        }
        let germany = try await app.makeParent(country: "DE")
        let inFrance = try await leaving(france.token), inGermany = try await leaving(germany.token)
        #expect(inFrance.contains(book) && !inFrance.contains(german))
        #expect(inGermany.isSuperset(of: [book, german]))
    }

    @Test("differential: 500 random queries by parents in 5 countries over windows with random territory rules and scheduled books, the engine answers exactly as the SQL", .app)
    func differential() async throws {
        let app = try app()
        let seeder = DemoSeeder(books: 1200, reference: Date().addingTimeInterval(-400 * 86400), seedsDirectory: TestDatabase.projectDirectory + "seeds",
                                hashPassword: { try $0.hashedForTests() })
        _ = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in }
        // Every window gets one of a few rules; some books get a second window elsewhere.
        try await app.sql.raw("""
            UPDATE rights_windows SET
                territories = (CASE id % 7 WHEN 1 THEN '{FR}' WHEN 2 THEN '{FR,BE}' WHEN 3 THEN '{US}' WHEN 4 THEN '{GB,DE}' ELSE '{}' END)::text[],
                exclude_territories = CASE WHEN id % 11 = 0 THEN '{US}'::text[] WHEN id % 13 = 0 THEN '{FR}'::text[] ELSE '{}' END
            """).run()
        try await app.sql.raw("""
            INSERT INTO rights_windows (book_id, starts_at, ends_at, territories)
            SELECT id, now() - interval '2 days', now() + interval '200 days', '{DE}' FROM books WHERE id % 5 = 0
            """).run()
        // And a schedule on some books: not live yet, ended, or live within bounds.
        try await app.sql.raw("UPDATE books SET publish_at = now() + interval '5 days' WHERE id % 17 = 0").run()
        try await app.sql.raw("UPDATE books SET unpublish_at = now() - interval '1 day' WHERE id % 19 = 0 AND id % 17 <> 0").run()
        try await app.sql.raw("""
            UPDATE books SET publish_at = now() - interval '5 days', unpublish_at = now() + interval '5 days' WHERE id % 23 = 0 AND id % 17 <> 0 AND id % 19 <> 0
            """).run()
        try await app.appServices.catalogEngine.build(on: app.db)
        var parents: [Application.ParentFixture] = []
        for country in ["FR", "US", "GB", "DE", "JP"] { parents.append(try await app.makeParent(country: country)) }
        let (words, slugs, categoryIDs, publishers) = try await CatalogEngineTests.vocabulary(app)
        var random = CatalogEngineTests.Random(state: 20261124)
        var compared = 0
        var totals: [String: Set<Int>] = [:]
        for _ in 0..<500 {
            let parent = random.pick(parents)
            let query = CatalogEngineTests.randomQuery(&random, words: words, slugs: slugs, categoryIDs: categoryIDs, publishers: publishers)
            let path = "/api/v1/catalog/books?" + query
            let (sql, engine) = try await CatalogEngineTests.both(app, path, token: parent.token)
            #expect(sql.status == .ok && engine.status == .ok, "\(path)")
            let a = try CatalogEngineTests.jsonObject(sql), b = try CatalogEngineTests.jsonObject(engine)
            #expect(a == b, "\(parent.id) \(path)\nSQL:    \(sql.body.string.prefix(400))\nengine: \(engine.body.string.prefix(400))")
            compared += 1
            if a != b { return }
        }
        // The unfiltered catalog differs by country, and each book's detail agrees in both paths.
        for parent in parents {
            let (sql, engine) = try await CatalogEngineTests.both(app, "/api/v1/catalog/books?per_page=1", token: parent.token)
            #expect(sql.body.string == engine.body.string)
            totals[String(parent.id), default: []].insert(try sql.meta["total_count"] ?? -1)
            for id in stride(from: 3, through: 1200, by: 41) {
                let (sql, engine) = try await CatalogEngineTests.both(app, "/api/v1/catalog/books/\(id)", token: parent.token)
                #expect(sql.status == engine.status && sql.body.string == engine.body.string, "book \(id) for parent \(parent.id)")
            }
        }
        #expect(compared == 500)
        #expect(Set(totals.values.flatMap { $0 }).count >= 4, "catalog sizes per country: \(totals)")
    }
}
