@testable import App
import Core
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Family controls enforced by the API: settings, the child-scoped catalog (engine and SQL),
/// the library, plays at bedtime and past the day's budget, and `today`.
@Suite("Family controls")
struct FamilyControlsTests {
    static func put(_ app: Application, _ child: Int, _ json: String, token: String) async throws -> TestingHTTPResponse {
        try await app.send(.PUT, "/api/v1/children/\(child)/controls", token: token, json: json)
    }

    static func problem(_ response: TestingHTTPResponse) throws -> (status: HTTPStatus, code: String?, field: String?) {
        let body = try response.json
        return (response.status, body["code"] as? String, body["field"] as? String)
    }

    @Test("settings: defaults, partial updates, null clears, field-named 400s that change nothing, another parent's child 404, one audit row per change", .app)
    func settings() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let category = try await app.makeCategory("Scary", slug: "scary")
        let publisher = try await app.makePublisher()
        let book = try await app.makeBook("Night Ghosts")
        let empty = try await app.get("/api/v1/children/\(child)/controls", token: parent.token)
        #expect(empty.status == .ok)
        #expect(empty.body.string.contains(#""max_age":null"#) && empty.body.string.contains(#""bedtime":null"#)
                && empty.body.string.contains(#""daily_minutes":null"#) && empty.body.string.contains(#""time_zone":"UTC""#))
        var response = try await Self.put(app, child, """
            {"max_age": 6, "blocked_categories": [\(category)], "blocked_publishers": [\(publisher), \(publisher)], "blocked_books": [\(book)],
             "daily_minutes": 45, "bedtime": {"start": "19:30", "end": "07:00"}}
            """, token: parent.token)
        #expect(response.status == .ok)
        var data = try response.dataObject
        #expect(data["max_age"] as? Int == 6 && data["daily_minutes"] as? Int == 45 && data["approved_only"] as? Bool == false)
        #expect(data["blocked_publishers"] as? [Int] == [publisher] && data["blocked_categories"] as? [Int] == [category])
        #expect((data["bedtime"] as? [String: String]) == ["start": "19:30", "end": "07:00"])
        // Partial: what is left out stays; null clears.
        response = try await Self.put(app, child, #"{"approved_only": true, "bedtime": null, "max_age": null}"#, token: parent.token)
        data = try response.dataObject
        #expect(data["approved_only"] as? Bool == true && data["daily_minutes"] as? Int == 45 && data["blocked_books"] as? [Int] == [book])
        #expect(data["bedtime"] is NSNull && data["max_age"] is NSNull)
        let saved = try await app.get("/api/v1/children/\(child)/controls", token: parent.token).body.string
        let audits = { try await app.sql.raw("SELECT count(*) AS n FROM parent_audit_log WHERE parent_id = \(bind: parent.id) AND child_id = \(bind: child)").first()!.decode(column: "n", as: Int.self) }
        #expect(try await audits() == 2)
        let audited = try await app.sql.raw("""
            SELECT before->>'daily_minutes' AS b, after->>'daily_minutes' AS a, action FROM parent_audit_log WHERE parent_id = \(bind: parent.id) ORDER BY id LIMIT 1
            """).first()!
        #expect(try audited.decode(column: "b", as: String?.self) == nil && audited.decode(column: "a", as: String?.self) == "45"
                && audited.decode(column: "action", as: String.self) == "controls.update")
        // Bad input: a 400 naming the field, and nothing changed.
        let bad: [(String, String)] = [
            (#"{"max_age": 19}"#, "max_age"), (#"{"max_age": "5"}"#, "max_age"), (#"{"approved_only": null}"#, "approved_only"),
            (#"{"daily_minutes": 0}"#, "daily_minutes"), (#"{"daily_minutes": 1441}"#, "daily_minutes"),
            (#"{"blocked_categories": [999999]}"#, "blocked_categories"), (#"{"blocked_publishers": [999999]}"#, "blocked_publishers"),
            (#"{"blocked_books": [999999]}"#, "blocked_books"), (#"{"blocked_books": ["1"]}"#, "blocked_books"),
            (#"{"blocked_books": [0]}"#, "blocked_books"), (#"{"blocked_books": 5}"#, "blocked_books"),
            (#"{"bedtime": {"start": "24:00", "end": "07:00"}}"#, "bedtime.start"), (#"{"bedtime": {"start": "19:30"}}"#, "bedtime.end"),
            (#"{"bedtime": {"start": "19:30", "end": "19:30"}}"#, "bedtime"), (#"{"bedtime": "19:30-07:00"}"#, "bedtime"),
            ("{\"blocked_books\": [\((1...1001).map(String.init).joined(separator: ","))]}", "blocked_books"),
        ]
        for (json, field) in bad {
            let problem = try Self.problem(try await Self.put(app, child, json, token: parent.token))
            #expect(problem.status == .badRequest && problem.code == "invalid_parameter" && problem.field == field, "\(json)")
        }
        #expect(try Self.problem(try await Self.put(app, child, "{not json", token: parent.token)).code == "invalid_body")
        #expect(try await app.get("/api/v1/children/\(child)/controls", token: parent.token).body.string == saved)
        #expect(try await audits() == 2)
        // Another parent's child: 404 for reading and for writing, and their child is untouched.
        let other = try await app.makeParent()
        #expect(try await app.get("/api/v1/children/\(child)/controls", token: other.token).status == .notFound)
        #expect(try await Self.put(app, child, #"{"max_age": 2}"#, token: other.token).status == .notFound)
        #expect(try await app.get("/api/v1/children/\(child)/today", token: other.token).status == .notFound)
        #expect(try await app.get("/api/v1/children/\(child)/controls", token: parent.token).body.string == saved)
    }

    @Test("the parent's time zone: read and changed at /me (validated, audited), set by parent create --time-zone", .app)
    func timeZone() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        #expect(try await app.get("/api/v1/me", token: parent.token).dataObject["time_zone"] as? String == "UTC")
        let changed = try await app.send(.PATCH, "/api/v1/me", token: parent.token, json: #"{"time_zone": "Pacific/Kiritimati"}"#)
        #expect(try changed.status == .ok && changed.dataObject["time_zone"] as? String == "Pacific/Kiritimati")
        for zone in [#""Mars/Olympus""#, "5", #""""#, #""UTC; DROP TABLE parents""#] {
            let problem = try Self.problem(try await app.send(.PATCH, "/api/v1/me", token: parent.token, json: #"{"time_zone": \#(zone)}"#))
            #expect(problem.status == .badRequest && problem.field == "time_zone", "\(zone)")
        }
        #expect(try await app.get("/api/v1/children/\(parent.children[0])/controls", token: parent.token).dataObject["time_zone"] as? String == "Pacific/Kiritimati")
        let audit = try await app.sql.raw("SELECT after->>'time_zone' AS z FROM parent_audit_log WHERE parent_id = \(bind: parent.id) AND action = 'account.time_zone'").all()
        #expect(try audit.map { try $0.decode(column: "z", as: String.self) } == ["Pacific/Kiritimati"])
        #expect(try await app.get("/api/v1/me").status == .unauthorized)
    }

    /// A small catalog: ages, publishers and categories the controls can cut along.
    struct Shelf { let young: Int; let old: Int; let scary: Int; let byBlockedPublisher: Int; let plain: Int; let category: Int; let publisher: Int }

    static func shelf(_ app: Application) async throws -> Shelf {
        let category = try await app.makeCategory("Scary", slug: "scary")
        let calm = try await app.makeCategory("Calm", slug: "calm")
        let publisher = try await app.makePublisher("Blocked House")
        let other = try await app.makePublisher("Open House")
        return Shelf(young: try await app.makeBook("Little Bear", ages: 1...3, publisher: other, categories: [calm]),
                     old: try await app.makeBook("Big Bear", ages: 8...12, publisher: other, categories: [calm]),
                     scary: try await app.makeBook("Scary Bear", ages: 3...5, publisher: other, categories: [category, calm]),
                     byBlockedPublisher: try await app.makeBook("House Bear", ages: 3...5, publisher: publisher),
                     plain: try await app.makeBook("Plain Bear", ages: 2...6, categories: [calm]),
                     category: category, publisher: publisher)
    }

    @Test("a child-scoped catalog: hidden books leave results, counts and facets, detail is 404, approved-only shows the library — engine and SQL alike", .app)
    func scopedCatalog() async throws {
        let app = try app()
        let shelf = try await Self.shelf(app)
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent(children: ["Ada", "Ben"])
        let (ada, ben) = (parent.children[0], parent.children[1])
        #expect(try await Self.put(app, ada, """
            {"max_age": 5, "blocked_categories": [\(shelf.category)], "blocked_publishers": [\(shelf.publisher)]}
            """, token: parent.token).status == .ok)
        for engine in [true, false] {
            app.settings.catalogEngine = engine
            let scoped = try await app.get("/api/v1/catalog/books?q=bear&child_id=\(ada)", token: parent.token)
            #expect(scoped.status == .ok)
            #expect(try scoped.dataArray.compactMap { $0["id"] as? Int }.sorted() == [shelf.young, shelf.plain].sorted(), "engine \(engine)")
            #expect(try scoped.meta["total_count"] == 2)
            let facets = try ((scoped.json["meta"] as? [String: Any])?["facets"] as? [String: Any])
            let categories = (facets?["categories"] as? [[String: Any]]) ?? []
            #expect(categories.first { $0["slug"] as? String == "scary" }?["count"] as? Int == 0)
            #expect(categories.first { $0["slug"] as? String == "calm" }?["count"] as? Int == 2)
            #expect(scoped.headers.first(name: "Link")?.contains("child_id=\(ada)") == true)
            // Ben has no controls: the whole shelf.
            #expect(try await app.get("/api/v1/catalog/books?q=bear&child_id=\(ben)", token: parent.token).meta["total_count"] == 5)
            #expect(try await app.get("/api/v1/catalog/books?q=bear", token: parent.token).meta["total_count"] == 5)
            for hidden in [shelf.old, shelf.scary, shelf.byBlockedPublisher] {
                #expect(try await app.get("/api/v1/catalog/books/\(hidden)?child_id=\(ada)", token: parent.token).status == .notFound)
                #expect(try await app.get("/api/v1/catalog/books/\(hidden)?child_id=\(ben)", token: parent.token).status == .ok)
            }
            #expect(try await app.get("/api/v1/catalog/books/\(shelf.young)?child_id=\(ada)", token: parent.token).status == .ok)
        }
        // Approved only: the library, and nothing else.
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: ben), \(bind: shelf.old)), (\(bind: ben), \(bind: shelf.scary))").run()
        #expect(try await Self.put(app, ben, #"{"approved_only": true}"#, token: parent.token).status == .ok)
        for engine in [true, false] {
            app.settings.catalogEngine = engine
            let approved = try await app.get("/api/v1/catalog/books?child_id=\(ben)", token: parent.token)
            #expect(try approved.dataArray.compactMap { $0["id"] as? Int } == [shelf.old, shelf.scary], "engine \(engine)")
            #expect(try await app.get("/api/v1/catalog/books/\(shelf.young)?child_id=\(ben)", token: parent.token).status == .notFound)
        }
        // Another parent's child, a bad child_id.
        let other = try await app.makeParent()
        #expect(try await app.get("/api/v1/catalog/books?child_id=\(ada)", token: other.token).status == .notFound)
        #expect(try await app.get("/api/v1/catalog/books/\(shelf.young)?child_id=\(ada)", token: other.token).status == .notFound)
        let bad = try Self.problem(try await app.get("/api/v1/catalog/books?child_id=abc", token: parent.token))
        #expect(bad.status == .badRequest && bad.field == "child_id")
    }

    @Test("differential: 600 random queries under 20 random sets of controls, the engine answers exactly as the SQL", .app)
    func scopedDifferential() async throws {
        let app = try app()
        let seeder = DemoSeeder(books: 1200, reference: Date().addingTimeInterval(-400 * 86400), seedsDirectory: TestDatabase.projectDirectory + "seeds",
                                hashPassword: { try $0.hashedForTests() })
        _ = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in }
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let (words, slugs, categoryIDs, publishers) = try await CatalogEngineTests.vocabulary(app)
        let bookIDs = try await app.sql.raw("SELECT id FROM books ORDER BY id").all().map { try $0.decode(column: "id", as: Int.self) }
        var random = CatalogEngineTests.Random(state: 20261123)
        var compared = 0, narrowed = 0
        for _ in 0..<20 {
            // Random controls (and, for approved-only, a random library).
            try await app.sql.raw("DELETE FROM library_entries WHERE child_id = \(bind: child)").run()
            let library = (0..<random.int(0...200)).map { _ in random.pick(bookIDs) }
            for id in Set(library) {
                try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: child), \(bind: id))").run()
            }
            let pickSome = { (items: [Int], most: Int, r: inout CatalogEngineTests.Random) -> [Int] in
                r.chance(50) ? [] : (0..<r.int(1...most)).map { _ in r.pick(items) }
            }
            let controls = """
                {"max_age": \(random.chance(50) ? String(random.int(0...18)) : "null"), "approved_only": \(random.chance(25)),
                 "blocked_categories": \(pickSome(categoryIDs, 3, &random)), "blocked_publishers": \(pickSome(publishers, 3, &random)),
                 "blocked_books": \(pickSome(bookIDs, 50, &random))}
                """
            #expect(try await Self.put(app, child, controls, token: parent.token).status == .ok, "\(controls)")
            for _ in 0..<30 {
                let query = CatalogEngineTests.randomQuery(&random, words: words, slugs: slugs, categoryIDs: categoryIDs, publishers: publishers)
                let path = "/api/v1/catalog/books?child_id=\(child)&" + query
                let (sql, engine) = try await CatalogEngineTests.both(app, path, token: parent.token)
                #expect(sql.status == .ok && engine.status == .ok, "\(path)")
                let a = try CatalogEngineTests.jsonObject(sql), b = try CatalogEngineTests.jsonObject(engine)
                #expect(a == b, "\(controls)\n\(path)\nSQL:    \(sql.body.string.prefix(400))\nengine: \(engine.body.string.prefix(400))")
                let unscoped = try await app.get("/api/v1/catalog/books?" + query, token: parent.token)
                if try unscoped.meta["total_count"] ?? 0 > sql.meta["total_count"] ?? 0 { narrowed += 1 }
                compared += 1
                if a != b { return }
            }
            let id = random.pick(bookIDs)
            let (sql, engine) = try await CatalogEngineTests.both(app, "/api/v1/catalog/books/\(id)?child_id=\(child)", token: parent.token)
            #expect(sql.status == engine.status && sql.body.string == engine.body.string, "book \(id) under \(controls)")
        }
        #expect(compared == 600 && narrowed > 150)
    }

    @Test("the library: a blocked or too-old book is 422 blocked_by_controls (after the 409), in add, copy and move; bulk reports it; a category add leaves it out", .app)
    func library() async throws {
        let app = try app()
        let shelf = try await Self.shelf(app)
        let parent = try await app.makeParent(children: ["Ada", "Ben"])
        let (ada, ben) = (parent.children[0], parent.children[1])
        #expect(try await Self.put(app, ada, """
            {"max_age": 5, "blocked_books": [\(shelf.plain)], "blocked_publishers": [\(shelf.publisher)]}
            """, token: parent.token).status == .ok)
        let add = { (child: Int, book: Int) in try await app.send(.POST, "/api/v1/children/\(child)/library", token: parent.token, json: #"{"book_id": \#(book)}"#) }
        for blocked in [shelf.old, shelf.plain, shelf.byBlockedPublisher] {
            let problem = try Self.problem(try await add(ada, blocked))
            #expect(problem.status == .unprocessableEntity && problem.code == "blocked_by_controls", "book \(blocked)")
        }
        #expect(try await add(ada, shelf.young).status == .created)
        // Already there before the controls: 409 comes first.
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: ada), \(bind: shelf.old))").run()
        #expect(try Self.problem(try await add(ada, shelf.old)).code == "duplicate")
        // Copy and move from Ben to Ada.
        for book in [shelf.plain, shelf.byBlockedPublisher, shelf.scary] { #expect(try await add(ben, book).status == .created) }
        let copy = try await app.send(.POST, "/api/v1/children/\(ben)/library/\(shelf.plain)/copy", token: parent.token, json: #"{"to_child_id": \#(ada)}"#)
        #expect(try Self.problem(copy).code == "blocked_by_controls" && copy.status == .unprocessableEntity)
        let move = try await app.send(.POST, "/api/v1/children/\(ben)/library/\(shelf.plain)/move", token: parent.token, json: #"{"to_child_id": \#(ada)}"#)
        #expect(try Self.problem(move).code == "blocked_by_controls")
        let benBooks = { try await app.sql.raw("SELECT book_id FROM library_entries WHERE child_id = \(bind: ben) ORDER BY book_id").all().map { try $0.decode(column: "book_id", as: Int.self) } }
        #expect(try await benBooks() == [shelf.scary, shelf.byBlockedPublisher, shelf.plain].sorted())   // the refused move changed nothing
        let bulk = try await app.send(.POST, "/api/v1/children/\(ben)/library/bulk", token: parent.token, json: """
            {"action": "copy", "to_child_id": \(ada), "book_ids": [\(shelf.plain), \(shelf.byBlockedPublisher), \(shelf.scary)]}
            """)
        #expect(bulk.status == .ok)
        let result = try bulk.dataObject
        #expect(result["affected"] as? Int == 1)
        let skipped = (result["skipped"] as? [[String: Any]]) ?? []
        #expect(Set(skipped.compactMap { $0["reason"] as? String }) == ["blocked_by_controls"] && skipped.count == 2)
        // Category add: the calm category holds young, old, scary, plain; old and plain are kept out.
        try await app.sql.raw("DELETE FROM library_entries WHERE child_id = \(bind: ada)").run()
        let added = try await app.send(.POST, "/api/v1/children/\(ada)/library/categories/calm", token: parent.token, json: "{}")
        #expect(try added.dataObject["added"] as? Int == 2)
        let adaBooks = try await app.sql.raw("SELECT book_id FROM library_entries WHERE child_id = \(bind: ada) ORDER BY book_id").all().map { try $0.decode(column: "book_id", as: Int.self) }
        #expect(adaBooks == [shelf.young, shelf.scary].sorted())
    }

    /// A zone where it is now between 06:00 and 18:00, so "today" has room on both sides.
    static func daytimeZone() -> String {
        ["UTC", "Asia/Tokyo", "America/New_York", "Asia/Kolkata", "America/Los_Angeles", "Pacific/Auckland", "Europe/Paris"].first { name in
            let hour = FamilyClock(timeZone: name)!.calendar.component(.hour, from: Date())
            return (6..<18).contains(hour)
        }!
    }

    @Test("plays: 403 at bedtime and once the day's minutes are used (the play that crosses the budget is kept), Retry-After to the next allowed moment; blocked books; today agrees", .app)
    func plays() async throws {
        let app = try app()
        let shelf = try await Self.shelf(app)
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let zone = Self.daytimeZone()
        // The app's clock stopped: the Retry-Afters below are exact however long the requests take.
        let frozen = app.freezeClock()
        #expect(try await app.send(.PATCH, "/api/v1/me", token: parent.token, json: #"{"time_zone": "\#(zone)"}"#).status == .ok)
        for book in [shelf.young, shelf.plain] {
            try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: child), \(bind: book))").run()
        }
        let play = { (book: Int, position: Int) in
            try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/plays", token: parent.token,
                               json: #"{"position_seconds": \#(position), "completed": false}"#)
        }
        // Budget: 10 minutes. 5 minutes, then a resumed play to 11 minutes (crossing it: kept), then refused.
        #expect(try await Self.put(app, child, #"{"daily_minutes": 10}"#, token: parent.token).status == .ok)
        #expect(try await play(shelf.young, 300).status == .created)
        var today = try await app.get("/api/v1/children/\(child)/today", token: parent.token).dataObject
        #expect(today["minutes_used"] as? Int == 5 && today["minutes_left"] as? Int == 5 && today["can_play"] as? Bool == true)
        #expect(try await play(shelf.young, 660).status == .created)
        let asked = frozen
        let refused = try await play(shelf.plain, 10)
        let answered = app.now
        #expect(try Self.problem(refused).code == "time_limit_reached" && refused.status == .forbidden)
        let clock = FamilyClock(timeZone: zone)!
        let midnight = clock.day(containing: asked).end
        // Retry-After is midnight seen from some moment while the request ran (rounded up).
        let retry = Double(Int(refused.headers.first(name: "Retry-After") ?? "") ?? -1)
        #expect(retry >= midnight.timeIntervalSince(answered) - 1 && retry <= midnight.timeIntervalSince(asked) + 1, "Retry-After \(retry)")
        today = try await app.get("/api/v1/children/\(child)/today", token: parent.token).dataObject
        #expect(today["minutes_used"] as? Int == 11 && today["minutes_left"] as? Int == 0 && today["can_play"] as? Bool == false)
        #expect(today["blocked_reason"] as? String == "time_limit_reached" && today["date"] as? String == clock.date(of: frozen))
        #expect(try await app.sql.raw("SELECT count(*) AS n FROM plays WHERE child_id = \(bind: child)").first()!.decode(column: "n", as: Int.self) == 2)
        // Plays that arrived yesterday do not count today (the budget follows arrival: recorded_at).
        let yesterday = clock.day(containing: frozen).start.addingTimeInterval(-60)
        try await app.sql.raw("UPDATE plays SET played_at = \(bind: yesterday), recorded_at = \(bind: yesterday) WHERE child_id = \(bind: child)").run()
        #expect(try await play(shelf.plain, 10).status == .created)
        // Bedtime from an hour ago to an hour ahead (local wall time).
        let now = clock.calendar.dateComponents([.hour, .minute], from: frozen)
        let minutes = (now.hour ?? 0) * 60 + (now.minute ?? 0)
        let start = TimeOfDay(minutes: (minutes + 1440 - 60) % 1440)!, end = TimeOfDay(minutes: (minutes + 61) % 1440)!
        #expect(try await Self.put(app, child, #"{"daily_minutes": null, "bedtime": {"start": "\#(start.text)", "end": "\#(end.text)"}}"#, token: parent.token).status == .ok)
        let late = try await play(shelf.plain, 20)
        #expect(try Self.problem(late).code == "bedtime" && late.status == .forbidden)
        let wait = Int(late.headers.first(name: "Retry-After") ?? "") ?? -1
        #expect((3_540...3_720).contains(wait), "Retry-After \(wait)")
        today = try await app.get("/api/v1/children/\(child)/today", token: parent.token).dataObject
        #expect(today["in_bedtime"] as? Bool == true && today["blocked_reason"] as? String == "bedtime" && today["minutes_left"] is NSNull)
        // A book not in the library is still the play's 404; a blocked one is 403.
        #expect(try await play(shelf.old, 5).status == .notFound)
        #expect(try await Self.put(app, child, #"{"bedtime": null, "blocked_books": [\#(shelf.plain)]}"#, token: parent.token).status == .ok)
        #expect(try Self.problem(try await play(shelf.plain, 30)).code == "blocked_by_controls")
        #expect(try await play(shelf.young, 700).status == .created)
    }
}
