@testable import App
import CatalogIndexing
import Core
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Search that understands children: word forms per book language, irregular plurals, staff
/// synonyms, sound-alike spellings, highlights, did-you-mean and the searches that found nothing —
/// each checked through the engine and through SQL (`CatalogEngineTests.both`).
@Suite("Search that understands children")
struct SearchTests {
    /// A book in `language` (the fixture makes English ones).
    @discardableResult
    static func book(_ app: Application, _ title: String, author: String = "Ann Author", language: String = "en") async throws -> Int {
        let id = try await app.makeBook(title, author: author)
        try await app.sql.raw("UPDATE books SET language = \(bind: language) WHERE id = \(bind: id)").run()
        return id
    }

    /// The titles a search lists, through both paths (which must agree byte for byte).
    static func titles(_ app: Application, _ query: String, token: String, extra: String = "") async throws -> [String] {
        let path = "/api/v1/catalog/books?per_page=50&q=" + QueryEncoding.encode(query) + extra
        let (sql, engine) = try await CatalogEngineTests.both(app, path, token: token)
        #expect(sql.status == .ok && engine.status == .ok, "\(query)")
        #expect(try CatalogEngineTests.jsonObject(sql) == CatalogEngineTests.jsonObject(engine),
                "\(query)\nSQL:    \(sql.body.string.prefix(800))\nengine: \(engine.body.string.prefix(800))")
        return try engine.dataArray.map { $0["title"] as! String }
    }

    static func meta(_ app: Application, _ query: String, token: String) async throws -> [String: Any] {
        let path = "/api/v1/catalog/books?q=" + QueryEncoding.encode(query)
        let (sql, engine) = try await CatalogEngineTests.both(app, path, token: token)
        #expect(try CatalogEngineTests.jsonObject(sql) == CatalogEngineTests.jsonObject(engine), "\(query)")
        return try engine.json["meta"] as! [String: Any]
    }

    @Test("Snowball stems agree with PostgreSQL's dictionaries in 7 languages, and Metaphone with fuzzystrmatch, over the catalog's vocabulary", .app)
    func agreeWithPostgres() async throws {
        let app = try app()
        let seeder = DemoSeeder(books: 800, reference: Date(), seedsDirectory: TestDatabase.projectDirectory + "seeds", hashPassword: { try $0.hashedForTests() })
        _ = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in }
        var words = try await app.sql.raw("SELECT DISTINCT unnest(tsvector_to_array(search_vector)) AS term FROM books ORDER BY 1").all()
            .map { try $0.decode(column: "term", as: String.self) }
        // Inflections Snowball handles per language, and words of every length.
        words += ["puppies", "puppy", "ponies", "running", "happiness", "chevaux", "cheval", "chats", "maisons", "gatos", "ratones",
                  "canciones", "hunde", "kinder", "mädchen", "gatti", "bambini", "cavalos", "leões", "katten", "huizen", "a", "ab", "123"]
        words = Array(Set(words.map(SearchText.fold))).sorted()
        #expect(words.count > 300)
        var compared = 0
        for language in WordForms.languages {
            let rows = try await app.sql.raw("""
                SELECT w, (ts_lexize(\(bind: "storytime_\(language.code)_stem")::regdictionary, w))[1] AS stem FROM unnest(\(bind: words)::text[]) AS w
                """).all()
            for row in rows {
                let word = try row.decode(column: "w", as: String.self), stem = try row.decode(column: "stem", as: String?.self)
                #expect(WordForms.stem(word, language: language.code) == stem, "\(language.code): \(word)")
                compared += 1
            }
        }
        #expect(compared == words.count * 7)
        try await app.sql.raw("CREATE EXTENSION IF NOT EXISTS fuzzystrmatch").run()
        let ascii = words.filter { $0.utf8.allSatisfy { $0 >= 97 && $0 <= 122 } } + ["knight", "gnome", "wright", "school", "christmas", "science",
                     "xylophone", "edge", "thumb", "laugh", "sign", "signed", "schwa", "cia", "whale", "aero", "phoenix", "ghost", "tough", "judge", "bitch"]
        let codes = try await app.sql.raw("SELECT w, metaphone(w, 255) AS code FROM unnest(\(bind: ascii)::text[]) AS w").all()
        for row in codes {
            let word = try row.decode(column: "w", as: String.self)
            #expect(Metaphone.code(word) == (try row.decode(column: "code", as: String.self)), "metaphone \(word)")
        }
        #expect(codes.count > 250)
    }

    @Test("plurals and stems per book language, irregular plurals, sound-alike spellings — ranked after literal matches", .app(engine: true))
    func wordForms() async throws {
        let app = try app()
        try await Self.book(app, "Puppy Love")
        try await Self.book(app, "Three Blind Mice")
        try await Self.book(app, "A Mouse in the House")
        try await Self.book(app, "The Goose Who Flew")
        try await Self.book(app, "The Elephant Parade")
        try await Self.book(app, "Dinosaur Days")
        try await Self.book(app, "Le Cheval Blanc", language: "fr")
        try await Self.book(app, "Cheval Glass Stories")                 // English: not a horse
        try await Self.book(app, "El Gato Feliz", language: "es")
        try await Self.book(app, "Der kleine Hund", language: "de")
        try await Self.book(app, "Puppies Everywhere")
        try await Self.book(app, "I Gatti Felici", language: "it")
        try await Self.book(app, "O Cavalo Azul", language: "pt")
        try await Self.book(app, "De Kat en de Muis", language: "nl")
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent()
        let t = parent.token
        #expect(try await Self.titles(app, "puppies", token: t) == ["Puppies Everywhere", "Puppy Love"])   // literal first, then the stem
        #expect(try await Self.titles(app, "puppy", token: t) == ["Puppy Love", "Puppies Everywhere"])
        #expect(Set(try await Self.titles(app, "mice", token: t)) == ["Three Blind Mice", "A Mouse in the House"])
        #expect(try await Self.titles(app, "mouse", token: t) == ["A Mouse in the House", "Three Blind Mice"])
        #expect(try await Self.titles(app, "geese", token: t) == ["The Goose Who Flew"])
        #expect(try await Self.titles(app, "chevaux", token: t) == ["Le Cheval Blanc"])                   // French rules for the French book only
        #expect(try await Self.titles(app, "gatos", token: t) == ["El Gato Feliz"])
        #expect(try await Self.titles(app, "hunde", token: t) == ["Der kleine Hund"])
        #expect(try await Self.titles(app, "gatto", token: t) == ["I Gatti Felici", "El Gato Feliz"])   // Italian stem, then a typo of the Spanish word
        #expect(try await Self.titles(app, "cavalos", token: t) == ["O Cavalo Azul"])
        #expect(try await Self.titles(app, "katten", token: t) == ["De Kat en de Muis"])
        #expect(try await Self.titles(app, "elefunt", token: t) == ["The Elephant Parade"])
        #expect(try await Self.titles(app, "dinasor", token: t) == ["Dinosaur Days"])
        #expect(try await Self.titles(app, "dinasor days", token: t) == ["Dinosaur Days"])
        #expect(try await Self.titles(app, "zorblaxit", token: t).isEmpty)
        #expect(try await Self.titles(app, "qwrtzp", token: t).isEmpty)
        // A sound-alike is tried only when nothing else finds the word: "elephnt" is a typo.
        let typo = try await Self.meta(app, "elephnt", token: t)
        let highlight = (typo["highlights"] as! [[String: Any]])[0]["title"] as! [[String: Any]]
        #expect(highlight.map { $0["match"] as! String } == ["typo"])
    }

    @Test("highlights: ranges in UTF-16 units of the title and author with the kind of each match; did-you-mean when a correction finds more", .app(engine: true))
    func highlightsAndCorrections() async throws {
        let app = try app()
        let elephant = try await Self.book(app, "Éléphant 🐘 Parade des éléphants", author: "Puppy Author")
        try await Self.book(app, "Dinosaur Days")
        try await Self.book(app, "Dinosaurs Dance")
        try await Self.book(app, "Dinosaurus Rex")
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent()
        let meta = try await Self.meta(app, "elephants pupp", token: parent.token)
        let first = (meta["highlights"] as! [[String: Any]])[0]
        #expect(first["id"] as? Int == elephant)
        func ranges(_ field: String) -> [String] {
            (first[field] as! [[String: Any]]).map { "\($0["start"]!)+\($0["length"]!):\($0["match"]!)" }
        }
        // "Éléphant" (0–8), the emoji is 2 UTF-16 units (9–10), "Parade" 12, "des" 19, "éléphants" 23.
        #expect(ranges("title") == ["0+8:stem", "23+9:exact"])
        #expect(ranges("author") == ["0+5:prefix"])
        #expect(meta["did_you_mean"] == nil)
        // "dinasor" sounds like "dinosaur" only (one book); "dinosaur" finds three.
        let corrected = try await Self.meta(app, "dinasor", token: parent.token)
        #expect((corrected["total_count"] as? Int) == 1 && corrected["did_you_mean"] as? String == "dinosaur")
        let sure = try await Self.meta(app, "dinosaur", token: parent.token)
        #expect(sure["did_you_mean"] == nil && (sure["total_count"] as? Int) == 3)
        // Browsing has no highlights.
        let browse = try await app.get("/api/v1/catalog/books", token: parent.token)
        #expect(((try browse.json["meta"] as? [String: Any])?["highlights"]) == nil)
    }

    @Test("synonyms staff save are in the next request on engine and SQL alike: groups, one way, removal", .app(engine: true))
    func synonymsAtRunTime() async throws {
        let app = try app()
        try await Self.book(app, "The Rabbit Race")
        try await Self.book(app, "Hare Today")
        try await Self.book(app, "Bunny Hops")
        try await Self.book(app, "The Cat in the Hat")
        try await Self.book(app, "Kitty Cakes")
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent()
        let t = parent.token
        #expect(try await Self.titles(app, "bunnies", token: t) == ["Bunny Hops"])
        try await app.sql.raw("INSERT INTO search_synonyms (words, one_way) VALUES ('bunny, rabbit, hare', false), ('Kitty, cat', true)").run()
        // A rule's words are found through their forms too ("bunnies" → "bunny").
        #expect(Set(try await Self.titles(app, "bunnies", token: t)) == ["Bunny Hops", "Hare Today", "The Rabbit Race"])
        #expect(Set(try await Self.titles(app, "rabbits", token: t)) == ["The Rabbit Race", "Bunny Hops", "Hare Today"])
        #expect(try await Self.titles(app, "kitty", token: t) == ["Kitty Cakes", "The Cat in the Hat"])
        #expect(try await Self.titles(app, "cat", token: t) == ["The Cat in the Hat"])   // one way: "cat" does not find kitties
        let kitty = try await Self.meta(app, "kitty", token: t)
        #expect(((kitty["highlights"] as! [[String: Any]])[1]["title"] as! [[String: Any]]).map { $0["match"] as! String } == ["synonym"])
        try await app.sql.raw("DELETE FROM search_synonyms WHERE one_way").run()
        #expect(try await Self.titles(app, "kitty", token: t) == ["Kitty Cakes"])
        #expect(try await Self.titles(app, "hare", token: t).count == 3)
    }

    @Test("a search that finds nothing is counted by cause — controls, country, schedule, catalog — with families keyed per week, never an id", .app(engine: true))
    func searchesThatFoundNothing() async throws {
        let app = try app()
        let hidden = try await Self.book(app, "Gruffalo Night")
        let french = try await app.makeBook("Crocodile Tears", rights: .none)
        try await TerritoryTests.window(app, book: french, start: "-1 day", end: nil, territories: ["FR"])
        let later = try await Self.book(app, "Walrus Winter")
        try await app.sql.raw("UPDATE books SET publish_at = now() + interval '3 days' WHERE id = \(bind: later)").run()
        try await app.appServices.catalogEngine.build(on: app.db)
        let parents = [try await app.makeParent(country: "US"), try await app.makeParent(country: "US"), try await app.makeParent(country: "US")]
        let child = parents[0].children[0]
        let controls = try await app.send(.PUT, "/api/v1/children/\(child)/controls", token: parents[0].token, json: #"{"blocked_books": [\#(hidden)]}"#)
        #expect(controls.status == .ok, "\(controls.body.string)")
        let misses = app.appServices.searchMisses
        func search(_ q: String, _ parent: Application.ParentFixture, child: Int? = nil, engine: Bool = true) async throws {
            app.settings.catalogEngine = engine
            let path = "/api/v1/catalog/books?q=" + QueryEncoding.encode(q) + (child.map { "&child_id=\($0)" } ?? "")
            let response = try await app.get(path, token: parent.token)
            #expect(try response.meta["total_count"] == 0, "\(q): \(response.body.string.prefix(300))")
        }
        try await search("gruffalo", parents[0], child: child)
        try await search("crocodile", parents[0])
        try await search("walrus", parents[1], engine: false)
        for parent in parents { try await search("Zebras  ZEBRAS", parent) }
        try await search("zebras", parents[0], engine: false)
        // The causes are worked out after the answer is sent: polled under a hang guard, not a count of
        // polls (a full parallel run on two cores can take far longer than the two seconds 100 polls were).
        let deadline = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            do { try await misses.flush(on: app.sql) } catch { Issue.record("\(String(reflecting: error))"); break }
            let n = try await app.sql.raw("SELECT COALESCE(sum(searches), 0)::int AS n FROM search_misses").first()!.decode(column: "n", as: Int.self)
            if n >= 7 { break }
        }
        app.settings.catalogEngine = true
        let rows = try await app.sql.raw("SELECT query, country, cause, searches, extract(isodow FROM week) AS dow FROM search_misses ORDER BY query").all()
        let found = try rows.map { "\(try $0.decode(column: "query", as: String.self)) \(try $0.decode(column: "country", as: String.self)) \(try $0.decode(column: "cause", as: String.self)) \(try $0.decode(column: "searches", as: Int.self))" }
        #expect(found == ["crocodile US licensed_elsewhere 1", "gruffalo US hidden_by_controls 1", "walrus US not_live_yet 1", "zebras US not_in_catalog 4"])
        #expect(try rows.allSatisfy { try $0.decode(column: "dow", as: Double.self) == 1 })   // weeks start on Monday
        let families = try await app.sql.raw("SELECT count(*) AS n FROM search_miss_families WHERE query = 'zebras'").first()!.decode(column: "n", as: Int.self)
        #expect(families == 3)
        // Nothing in either table can be joined to an account: no column holds an id or an email.
        let columns = try await app.sql.raw("""
            SELECT string_agg(column_name, ',' ORDER BY table_name, column_name) AS c FROM information_schema.columns
             WHERE table_name IN ('search_misses', 'search_miss_families')
            """).first()!.decode(column: "c", as: String.self)
        #expect(columns == "family,query,week,cause,country,query,searches,week")
        let key = SearchMisses.familyKey(account: parents[0].id, week: SearchMisses.week(of: Date()), secret: app.settings.sessionSecret)
        let nextWeek = SearchMisses.familyKey(account: parents[0].id, week: SearchMisses.week(of: Date().addingTimeInterval(7 * 86400)), secret: app.settings.sessionSecret)
        #expect(key.count == 8 && key != nextWeek)
    }

    @Test("a parent's miss in a catalog with no territory rule and no schedule is not_in_catalog at once, its family's key stored byte for byte", .app(engine: true))
    func plainCatalogMiss() async throws {
        let app = try app()
        try await Self.book(app, "Moonlight Meadow")
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent(country: "US")
        for _ in 0..<2 {
            let response = try await app.get("/api/v1/catalog/books?q=zebras", token: parent.token)
            #expect(try response.meta["total_count"] == 0, "\(response.body.string.prefix(300))")
        }
        let deadline = ContinuousClock.now + .seconds(600)   // a hang guard: the cause is worked out after the answer is sent
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            try await app.appServices.searchMisses.flush(on: app.sql)
            let n = try await app.sql.raw("SELECT COALESCE(sum(searches), 0)::int AS n FROM search_misses").first()!.decode(column: "n", as: Int.self)
            if n >= 2 { break }
        }
        let rows = try await app.sql.raw("SELECT query, country, cause, searches FROM search_misses").all()
        let found = try rows.map { "\(try $0.decode(column: "query", as: String.self)) \(try $0.decode(column: "country", as: String.self)) \(try $0.decode(column: "cause", as: String.self)) \(try $0.decode(column: "searches", as: Int.self))" }
        #expect(found == ["zebras US not_in_catalog 2"])
        let stored = try await app.sql.raw("SELECT family FROM search_miss_families WHERE query = 'zebras'").all().map { try $0.decode(column: "family", as: Data.self) }
        let key = SearchMisses.familyKey(account: parent.id, week: SearchMisses.week(of: Date()), secret: app.settings.sessionSecret)
        #expect(stored == [Data(key)], "one row, the HMAC's first 8 bytes as they are")
    }

    @Test("suggestions: words then titles, scoped to the caller's country and a child's controls, the same from engine and SQL", .app(engine: true))
    func suggestions() async throws {
        let app = try app()
        try await Self.book(app, "Moonlight Meadow")
        try await Self.book(app, "Moonbeam Magic")
        try await Self.book(app, "The Moon and Me")
        let hidden = try await Self.book(app, "Moonstruck Monsters")
        let french = try await app.makeBook("Moonwalk Madness", rights: .none)
        try await TerritoryTests.window(app, book: french, start: "-1 day", end: nil, territories: ["FR"])
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent(country: "US")
        let child = parent.children[0]
        _ = try await app.send(.PUT, "/api/v1/children/\(child)/controls", token: parent.token, json: #"{"blocked_books": [\#(hidden)]}"#)
        func suggest(_ q: String, child: Int? = nil) async throws -> [String] {
            let path = "/api/v1/catalog/suggest?q=" + QueryEncoding.encode(q) + (child.map { "&child_id=\($0)" } ?? "")
            let (sql, engine) = try await CatalogEngineTests.both(app, path, token: parent.token)
            #expect(sql.status == .ok && engine.status == .ok, "\(q): \(engine.body.string)")
            #expect(sql.body.string == engine.body.string, "\(q)\nSQL:    \(sql.body.string)\nengine: \(engine.body.string)")
            return try engine.dataArray.map { "\($0["kind"]!):\($0["text"]!)" }
        }
        let all = try await suggest("moo")
        #expect(all.prefix(4) == ["word:moon", "word:moonbeam", "word:moonlight", "word:moonstruck"])
        #expect(all.count == 8 && !all.contains { $0.contains("Moonwalk") || $0.contains("moonwalk") })   // licensed in France only
        let asChild = try await suggest("moo", child: child)
        #expect(!asChild.contains { $0.lowercased().contains("moonstruck") || $0.contains("Monsters") })
        #expect(asChild.filter { $0.hasPrefix("title:") }.count == 3)
        // Earlier words narrow the completions and lead them; two letters complete titles only.
        #expect(try await suggest("magic moo") == ["word:magic moonbeam", "title:Moonbeam Magic"])
        #expect(try await suggest("mo").allSatisfy { $0.hasPrefix("title:") })
        let missing = try await app.get("/api/v1/catalog/suggest", token: parent.token)
        #expect(missing.status == .badRequest)
        #expect(try missing.json["field"] as? String == "q")
    }

    @Test("console: an editor saves a synonym on one instance, the other's API finds it at once; a one-word rule is refused beside the field; audited")
    func consoleSynonyms() async throws {
        try await withTwoApps(engine: true) { a, b in
            let parent = try await a.makeParent()
            try await Self.book(a, "The Rabbit Race")
            try await a.appServices.catalogEngine.build(on: a.db)
            try await b.appServices.catalogEngine.build(on: b.db)
            #expect(try await b.get("/api/v1/catalog/books?q=bunny", token: parent.token).meta["total_count"] == 0)
            let console = try await a.console(role: .editor)
            let refused = try await console.post("/admin/synonyms", [("words", "bunny"), ("one_way", "")])
            #expect(refused.status == .unprocessableEntity || refused.status == .ok)
            #expect(refused.html.contains("Enter two or more different words"))
            #expect(try await a.count("SELECT count(*) AS n FROM search_synonyms") == 0)
            let saved = try await console.post("/admin/synonyms", [("words", "Bunny,  RABBIT , hare")])
            #expect(saved.status == .seeOther)
            #expect(try await a.sql.raw("SELECT words FROM search_synonyms").first()!.decode(column: "words", as: String.self) == "bunny, rabbit, hare")
            #expect(try await b.get("/api/v1/catalog/books?q=bunny", token: parent.token).meta["total_count"] == 1)
            #expect(try await a.count("SELECT count(*) AS n FROM audit_log WHERE table_name = 'search_synonyms' AND action = 'create'") == 1)
        }
    }

    @Test("console report: searches that found nothing per cause, only queries three families ran, each with add-a-synonym filled in")
    func missesReport() async throws {
        try await withApp { app in
            try await app.sql.raw("""
                INSERT INTO search_misses (query, country, week, cause, searches) VALUES
                    ('zebra', 'US', date_trunc('week', now())::date, 'not_in_catalog', 7), ('zebra', 'FR', date_trunc('week', now())::date, 'not_in_catalog', 2),
                    ('yak', 'US', date_trunc('week', now())::date, 'not_in_catalog', 40), ('gruffalo', 'US', date_trunc('week', now())::date, 'hidden_by_controls', 3)
                """).run()
            try await app.sql.raw("""
                INSERT INTO search_miss_families (query, week, family) SELECT q, date_trunc('week', now())::date, decode(md5(q || n), 'hex')
                  FROM (VALUES ('zebra', 3), ('yak', 2), ('gruffalo', 3)) AS v(q, k), generate_series(1, k) AS n
                """).run()
            let console = try await app.console(role: .viewer)
            let page = try await console.get("/admin/reports/searches")
            #expect(page.status == .ok)
            #expect(page.html.contains("<td>zebra</td><td>9</td><td>3</td><td>FR US</td>") && page.html.contains("<td>gruffalo</td>"))
            #expect(!page.html.contains("yak"))   // two families only
            #expect(page.html.contains("/admin/synonyms/new?words=zebra%2C%20"))
            let editor = try await app.console(role: .editor)
            let form = try await editor.get("/admin/synonyms/new?words=zebra%2C%20")
            #expect(form.status == .ok && form.html.contains("value=\"zebra, \""))
        }
    }
}
