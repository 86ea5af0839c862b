import NIOConcurrencyHelpers
@testable import App
import CatalogIndexing
import Core
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// The in-memory catalog engine against the SQL it replaces, and its freshness.
@Suite("Catalog engine")
struct CatalogEngineTests {
    /// A small deterministic generator (SplitMix64), so a failure can be replayed.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
        mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
        mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }
    }

    /// One edit at `position`: substitution, insertion, deletion or transposition.
    static func typo(_ word: String, kind: Int, at position: Int) -> String {
        var letters = Array(word)
        let p = min(max(position, 0), letters.count - 1)
        switch kind {
        case 0: letters[p] = letters[p] == "q" ? "x" : "q"
        case 1: letters.insert("q", at: p)
        case 2: letters.remove(at: p)
        default:
            let i = min(p, letters.count - 2)
            if letters[i] == letters[i + 1] { letters[i] = letters[i] == "q" ? "x" : "q" } else { letters.swapAt(i, i + 1) }
        }
        return String(letters)
    }

    /// A child's spelling of `word`: how it sounds, two or more letters changed
    /// ("elephant" → "elefunt").
    static func soundAlike(_ word: String, _ r: inout Random) -> String {
        var w = word.replacingOccurrences(of: "ph", with: "f").replacingOccurrences(of: "ck", with: "k")
        if r.chance(50) { w = w.replacingOccurrences(of: "c", with: "k") }
        let vowels: [Character] = ["a", "e", "i", "o", "u"]
        var letters = Array(w)
        for i in letters.indices where i > 0 && vowels.contains(letters[i]) && r.chance(60) { letters[i] = r.pick(vowels) }
        if r.chance(40), let last = letters.indices.last, last > 3, letters[last - 1] == letters[last] { letters.remove(at: last) }
        return String(letters)
    }

    /// The seeded catalog's words, category slugs and ids, and publisher ids, for random queries.
    static func vocabulary(_ app: Application) async throws -> (words: [String], slugs: [String], categoryIDs: [Int], publishers: [Int]) {
        let words = try await app.sql.raw("SELECT term FROM search_terms WHERE term NOT LIKE '~%' ORDER BY id").all().map { try $0.decode(column: "term", as: String.self) }
        let categories = try await app.sql.raw("SELECT id, slug FROM categories ORDER BY id").all()
        let publishers = try await app.sql.raw("SELECT id FROM publishers").all().map { try $0.decode(column: "id", as: Int.self) }
        return (words, try categories.map { try $0.decode(column: "slug", as: String.self) },
                try categories.map { try $0.decode(column: "id", as: Int.self) }, publishers)
    }

    static func randomQuery(_ r: inout Random, words: [String], slugs: [String], categoryIDs: [Int], publishers: [Int]) -> String {
        var parts: [String] = []
        if r.chance(70) {
            var text: [String] = []
            for _ in 0..<(r.chance(20) ? 2 : 1) {
                let word = r.pick(words)
                var w = String(word.prefix(r.int(3...max(3, min(8, word.count)))))
                if r.chance(15) && word.count >= 5 { w = typo(String(word.prefix(max(5, w.count))), kind: r.int(0...3), at: r.int(0...(w.count))) }
                else if r.chance(12) { w = r.pick([word + "s", word + "es", word + "ies", String(word.dropLast()) + "ies", word + "ing", word + "en", word + "x"]) }   // word forms
                else if r.chance(8) && word.count >= 5 { w = soundAlike(word, &r) }
                else if r.chance(4) { w = r.pick(["mice", "mouse", "geese", "children", "wolves", "bunny", "kitty", "rabbit", "chevaux", "gatos"]) }
                if r.chance(10) { w = w.uppercased() }
                text.append(w)
            }
            parts.append("q=" + QueryEncoding.encode(text.joined(separator: " ")))
        }
        if r.chance(30) { parts.append("age=\(r.int(0...18))") }
        if r.chance(25) {
            switch r.int(0...2) {
            case 0: parts.append("category=" + r.pick(slugs))
            case 1: parts.append("category=\(r.pick(categoryIDs))")
            default: parts.append("category=no-such-category")
            }
        }
        if r.chance(15) { parts.append("publisher=\(r.pick(publishers))") }
        if r.chance(50) { parts.append("sort=" + r.pick(["title", "newest", "relevance"])) }
        if r.chance(40) { parts.append("page=\(r.int(1...4))") }
        if r.chance(30) { parts.append("per_page=\(r.pick([1, 5, 7, 50, 100]))") }
        return parts.joined(separator: "&")
    }

    static func jsonObject(_ response: TestingHTTPResponse) throws -> NSDictionary {
        try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as! NSDictionary
    }

    /// The same request through the SQL path and through the engine.
    static func both(_ app: Application, _ path: String, token: String) async throws -> (sql: TestingHTTPResponse, engine: TestingHTTPResponse) {
        app.settings.catalogEngine = false
        let sql = try await app.get(path, token: token)
        app.settings.catalogEngine = true
        let engine = try await app.get(path, token: token)
        return (sql, engine)
    }

    @Test("differential: for 1,500 random queries the engine answers exactly as the SQL — rows, order, counts, facets, links", .app)
    func differential() async throws {
        let app = try app()
        // Rights windows are placed a year away from now, so SQL's now() and the app's clock agree.
        let seeder = DemoSeeder(books: 1500, reference: Date().addingTimeInterval(-400 * 86400), seedsDirectory: TestDatabase.projectDirectory + "seeds",
                                hashPassword: { try $0.hashedForTests() })
        _ = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in }
        // Some shared titles and created_at ties, so the tie-breaks are exercised.
        try await app.sql.raw("UPDATE books SET title = 'Same Title', created_at = '2026-01-01' WHERE id % 97 = 0").run()
        // Other languages' word forms, and synonyms both ways.
        try await app.sql.raw("UPDATE books SET language = (ARRAY['fr', 'es', 'de', 'it', 'pt', 'nl', 'sv'])[1 + id % 7] WHERE id % 5 = 0").run()
        let vocabulary = try await app.sql.raw("SELECT term FROM search_terms WHERE term NOT LIKE '~%' ORDER BY id LIMIT 30").all().map { try $0.decode(column: "term", as: String.self) }
        try await app.sql.raw("""
            INSERT INTO search_synonyms (words, one_way) VALUES ('bunny, rabbit, hare', false), ('kitty, cat', true),
                (\(bind: vocabulary[0...4].joined(separator: ", ")), false), (\(bind: vocabulary[5...8].joined(separator: ", ")), true)
            """).run()
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent()
        let (words, slugs, categoryIDs, publishers) = try await CatalogEngineTests.vocabulary(app)
        #expect(words.count > 100 && app.appServices.catalogEngine.bookCount > 1000)
        var random = Random(state: 20261122)
        var compared = 0, nonEmpty = 0, typoQueries = 0
        var kinds: [String: Int] = [:]
        for _ in 0..<1500 {
            let query = Self.randomQuery(&random, words: words, slugs: slugs, categoryIDs: categoryIDs, publishers: publishers)
            let path = "/api/v1/catalog/books?" + query
            let (sql, engine) = try await Self.both(app, path, token: parent.token)
            #expect(sql.status == .ok && engine.status == .ok, "\(path)")
            let a = try Self.jsonObject(sql), b = try Self.jsonObject(engine)
            #expect(a == b, "\(path)\nSQL:    \(sql.body.string.prefix(600))\nengine: \(engine.body.string.prefix(600))")
            #expect(sql.headers.first(name: "Link") == engine.headers.first(name: "Link"), "\(path)")
            compared += 1
            if try sql.meta["total_count"] ?? 0 > 0 { nonEmpty += 1 }
            if query.contains("q=") { typoQueries += 1 }
            for highlight in (try (a["meta"] as? NSDictionary)?["highlights"] as? [NSDictionary]) ?? [] {
                for range in (highlight["title"] as? [NSDictionary] ?? []) + (highlight["author"] as? [NSDictionary] ?? []) { kinds[range["match"] as! String, default: 0] += 1 }
            }
            if a != b { break }
        }
        #expect(compared == 1500 && nonEmpty > 600 && typoQueries > 900)
        // Every kind of match was exercised (counted in the highlights of the answers compared).
        #expect(["exact", "prefix", "stem", "synonym", "typo", "phonetic"].allSatisfy { kinds[$0, default: 0] > 0 }, "\(kinds)")
        // Book detail: every 7th id, active or not.
        for id in stride(from: 1, through: 1500, by: 7) {
            let (sql, engine) = try await Self.both(app, "/api/v1/catalog/books/\(id)", token: parent.token)
            #expect(sql.status == engine.status, "book \(id)")
            if sql.status == .ok { #expect(try Self.jsonObject(sql) == Self.jsonObject(engine), "book \(id)") }
        }
    }

    @Test("facets: per category and per age band, for the query and the other filters", .app(engine: true))
    func facets() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let bedtime = try await app.makeCategory("Bedtime", slug: "bedtime", order: 1)
        let animals = try await app.makeCategory("Animals", slug: "animals", order: 2)
        try await app.makeBook("Owl Moon", ages: 0...3, categories: [bedtime, animals])
        try await app.makeBook("Owl Babies", ages: 5...8, categories: [animals])
        try await app.makeBook("Bear Snores", ages: 2...4, categories: [bedtime])
        try await app.makeBook("Owl Draft", status: "draft", categories: [bedtime])
        let page = try await app.get("/api/v1/catalog/books?q=owl&category=bedtime", token: parent.token)
        #expect(try page.meta["total_count"] == 1)
        let facets = try #require((try page.json["meta"] as? [String: Any])?["facets"] as? [String: Any])
        let counts = (facets["categories"] as? [[String: Any]] ?? []).map { "\($0["slug"]!)=\($0["count"]!)" }
        #expect(counts == ["bedtime=1", "animals=2"])   // the category filter left out: owl books per category
        let bands = (facets["age_bands"] as? [[String: Any]] ?? []).map { "\($0["band"]!)=\($0["count"]!)" }
        #expect(bands == ["0-2=1", "2-4=1", "4-6=0", "6-8=0", "8+=0"])   // owl + bedtime, per band
    }

    @Test("freshness: a bulk UPDATE of 10,000 books, a draft leaving results, counts and facets, all in the next response", .app)
    func bulkAndDraft() async throws {
        let app = try app()
        let seeder = DemoSeeder(books: 12000, reference: nil, seedsDirectory: TestDatabase.projectDirectory + "seeds",
                                hashPassword: { try $0.hashedForTests() })
        _ = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in }
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent()
        let before = try await app.get("/api/v1/catalog/books?q=zzyzx", token: parent.token)
        #expect(try before.meta["total_count"] == 0)
        try await app.sql.raw("UPDATE books SET title = title || ' Zzyzx' WHERE id <= 10000 AND status = 'active'").run()
        let renamed = try await app.sql.raw("SELECT count(*) AS n FROM books WHERE id <= 10000 AND status = 'active'").first()!.decode(column: "n", as: Int.self)
        let after = try await app.get("/api/v1/catalog/books?q=zzyzx&per_page=100", token: parent.token)
        #expect(try after.meta["total_count"] == renamed && renamed > 5000)
        // one book goes draft: gone from the search, the plain count and the facets
        let first = try #require(try after.dataArray.first?["id"] as? Int)
        let all = try await app.get("/api/v1/catalog/books", token: parent.token).meta["total_count"] ?? 0
        try await app.sql.raw("UPDATE books SET status = 'draft' WHERE id = \(bind: first)").run()
        #expect(try await app.get("/api/v1/catalog/books?q=zzyzx", token: parent.token).meta["total_count"] == renamed - 1)
        let plain = try await app.get("/api/v1/catalog/books", token: parent.token)
        #expect(try plain.meta["total_count"] == all - 1)
        let facetTotal = ((try plain.json["meta"] as? [String: Any])?["facets"] as? [String: Any])?["age_bands"] as? [[String: Any]]
        #expect(facetTotal?.isEmpty == false)
        #expect(try await app.get("/api/v1/catalog/books/\(first)", token: parent.token).status == .notFound)
        #expect(app.appServices.catalogEngine.bookCount == all - 1)
    }

    @Test("the engine's JSON writer writes a number as Swift does: 0–9, both ends of Int, and 20,000 random values of every size")
    func jsonWriterNumbers() {
        var rng = SystemRandomNumberGenerator()
        let values = [0, 9, 10, -1, -9, -10, 99, 100, Int.max, Int.min, Int.max - 1, Int.min + 1]
            + (0..<20_000).map { _ in Int.random(in: Int.min...Int.max, using: &rng) >> Int.random(in: 0...63, using: &rng) }
        for value in values {
            var writer = JSONWriter()
            writer.int(value)
            #expect(writer.bytes == Array(String(value).utf8), "\(value)")
        }
    }

    @Test("the engine's JSON writer escapes what JSON requires and copies the rest byte for byte")
    func jsonWriter() throws {
        let samples = ["", "plain", "quote \" and backslash \\", "line\nbreak\r\ttab", "control \u{01}\u{1F} end",
                       "é, 你好, 🦉 and </script>", "\"\"\\\u{0}"]
        for sample in samples {
            var writer = JSONWriter()
            writer.string(sample)
            let decoded = try JSONSerialization.jsonObject(with: Data(writer.bytes), options: .fragmentsAllowed) as? String
            #expect(decoded == sample, "\(sample.debugDescription)")
            #expect(!writer.bytes.dropFirst().dropLast().contains { $0 < 0x20 })
        }
    }

    @Test("a problem document written by hand is the one the app's encoder writes, byte for byte (sorted keys, unescaped slashes), with and without a field")
    func problemDocument() throws {
        struct Body: Encodable { let type: String; let title: String; let status: Int; let detail: String; let code: String; let field: String? }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let problems = [Problem.notFound("No such book."), Problem.parentOnly, Problem.unauthorized,
                        Problem(status: .unprocessableEntity, code: "invalid_field", detail: "Say \"é\" / 你好 \\ again.\n", field: "name"),
                        Problem(status: .badRequest, code: "invalid_body", detail: "controls \u{0}\u{1}\u{8}\u{9}\u{C}\u{D}\u{1F}\u{7F}\u{2028} </script>", field: "schedule.\u{8}")]
        for problem in problems {
            let body = try #require(problem.response().body.buffer)
            let expected = try encoder.encode(Body(type: "https://storytime.example/problems/" + problem.code.replacingOccurrences(of: "_", with: "-"),
                                                   title: problem.status.reasonPhrase, status: Int(problem.status.code), detail: problem.detail,
                                                   code: problem.code, field: problem.field))
            #expect(Array(body.readableBytesView) == Array(expected), "\(String(decoding: expected, as: UTF8.self))")
        }
    }

    @Test("the build's binary decoding of tsvector and timestamptz agrees with ts_filter and extract(epoch) for 300 random rows", .app)
    func binaryFormats() async throws {
        let app = try app()
        var random = Random(state: 20261123)
        let words = ["owl", "moon", "l'ours", "été", "Ça", "night-time", "42", "a", "the", "über", "你好", "zebra", "owl's", "x1y2"]
        func text() -> String {
            (0..<random.int(0...12)).map { _ in random.pick(words) }.joined(separator: random.chance(20) ? ", " : " ")
        }
        for round in 0..<300 {
            // Long texts push positions past tsvector's 16,383 cap; the fourth part has no weight (D).
            let parts = (0..<4).map { _ in random.chance(5) ? String(repeating: text() + " ", count: 600) : text() }
            let stamps = (0..<3).map { _ in Int64(random.int(-2_000_000_000...4_000_000_000)) * 1_000_000 + Int64(random.int(0...999_999)) }
            let row = try await app.sql.raw("""
                SELECT v, tsvector_to_array(ts_filter(v, '{a}')) AS a, tsvector_to_array(ts_filter(v, '{b}')) AS b,
                       tsvector_to_array(ts_filter(v, '{c}')) AS c, t, (extract(epoch FROM t) * 1000000)::int8 AS t_micros,
                       ARRAY[t, NULL, u] AS ts, ARRAY[(extract(epoch FROM t) * 1000000)::int8, NULL, (extract(epoch FROM u) * 1000000)::int8] AS ts_micros
                  FROM (SELECT setweight(to_tsvector('simple', \(bind: parts[0])), 'A') || setweight(to_tsvector('simple', \(bind: parts[1])), 'B') ||
                               setweight(to_tsvector('simple', \(bind: parts[2])), 'C') || to_tsvector('simple', \(bind: parts[3])) AS v,
                               to_timestamp(\(bind: Double(stamps[0]) / 1_000_000)) AS t, to_timestamp(\(bind: Double(stamps[1]) / 1_000_000)) AS u) x
                """).first()!
            var expected: [String: UInt8] = [:]
            for (column, field) in [("a", CatalogBook.title), ("b", CatalogBook.author), ("c", CatalogBook.description)] {
                for lexeme in try row.decode(column: column, as: [String].self) { expected[lexeme, default: 0] |= field }
            }
            let decoded = PostgresBinary.lexemes(try row.decode(column: "v", as: ByteBuffer.self))
            #expect(Dictionary(decoded, uniquingKeysWith: { _, _ in 0 }) == expected, "round \(round): \(parts.map { $0.prefix(80) })")
            #expect(decoded.count == expected.count, "round \(round): a lexeme listed twice")
            #expect(PostgresBinary.microseconds(try row.decode(column: "t", as: ByteBuffer.self)) == (try row.decode(column: "t_micros", as: Int64.self)))
            #expect(PostgresBinary.microsecondsArray(try row.decode(column: "ts", as: ByteBuffer?.self))
                    == (try row.decode(column: "ts_micros", as: [Int64?].self)), "round \(round)")
        }
        #expect(PostgresBinary.microsecondsArray(nil).isEmpty)   // a book without windows
    }

    @Test("the change log keeps a day: older entries are purged, and an instance behind the purge rebuilds and answers exactly", .app)
    func changeLogPurge() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let owl = try await app.makeBook("Owl Moon")
        try await app.appServices.catalogEngine.build(on: app.db)
        let built = app.appServices.catalogEngine.currentVersion
        // Changes this instance has not caught up with, one of them old enough to purge.
        _ = try await app.makeBook("Owl Babies")
        try await app.sql.raw("UPDATE books SET title = 'Owl at Night' WHERE id = \(bind: owl)").run()
        try await app.sql.raw("UPDATE catalog_changes SET created_at = now() - interval '2 days' WHERE version = \(bind: built + 1)").run()
        let logged = try await app.sql.raw("SELECT count(*) AS n FROM catalog_changes").first()!.decode(column: "n", as: Int.self)
        #expect(try await CatalogChangeLog.purge(on: app.sql) >= 1)
        #expect(try await CatalogChangeLog.purge(on: app.sql) == 0)   // nothing older is left
        let left = try await app.sql.raw("""
            SELECT count(*) AS n, count(*) FILTER (WHERE version = \(bind: built + 1)) AS aged, count(*) FILTER (WHERE version > \(bind: built + 1)) AS newer
              FROM catalog_changes
            """).first()!
        #expect(try left.decode(column: "n", as: Int.self) < logged)
        #expect(try left.decode(column: "aged", as: Int.self) == 0)
        #expect(try left.decode(column: "newer", as: Int.self) > 0)   // the recent entries stay
        let purged = try await app.sql.raw("SELECT purged_through FROM catalog_state").first()!.decode(column: "purged_through", as: Int.self)
        #expect(purged == built + 1)
        // The engine's version is older than the purge: it cannot follow the log, so it rebuilds.
        let titles = try CatalogAPITests.titles(try await app.get("/api/v1/catalog/books?q=owl", token: parent.token))
        #expect(titles == ["Owl at Night", "Owl Babies"])
        #expect(app.appServices.catalogEngine.currentVersion > built + 1)
    }

    @Test("a stream of commits under concurrent requests: every request finishes and sees every commit made before it was sent", .app)
    func catchUpUnderCommits() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let book = try await app.makeBook("v0")
        try await app.appServices.catalogEngine.build(on: app.db)
        let committed = NIOLockedValueBox(0)
        let writer = Task {
            for i in 1...40 {
                try await app.sql.raw("UPDATE books SET title = \(bind: "v\(i)") WHERE id = \(bind: book)").run()
                committed.withLockedValue { $0 = i }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        // Readers whose versions race ahead of a catch-up in flight (a finished catch-up once
        // kept them spinning on the updater, and every later request queued behind them).
        let stale = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    var stale = 0, done = false
                    while !done {
                        done = committed.withLockedValue { $0 == 40 }
                        let floor = committed.withLockedValue { $0 }
                        let response = try await app.get("/api/v1/catalog/books/\(book)", token: parent.token)
                        let title = (try response.json["data"] as? [String: Any])?["title"] as? String ?? ""
                        if (Int(title.dropFirst()) ?? -1) < floor { stale += 1 }
                    }
                    return stale
                }
            }
            return try await group.reduce(0, +)
        }
        try await writer.value
        #expect(stale == 0)
        #expect(app.appServices.catalogEngine.currentVersion >= 40)
    }

    @Test("until the engine is built the catalog is served from SQL, and /healthz says which", .app)
    func fallback() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        try await app.makeBook("Owl Moon")
        #expect(app.appServices.catalogEngine.state == .off)
        let health = try await app.get("/healthz")
        #expect(health.body.string.contains(#""engine":"off""#))
        #expect(try await app.get("/api/v1/catalog/books", token: parent.token).meta["total_count"] == 1)
        try await app.appServices.catalogEngine.build(on: app.db)
        #expect(try await app.get("/healthz").body.string.contains(#""engine":"ready","books":1"#))
        try await app.makeBook("Bear Day")
        #expect(try await app.get("/api/v1/catalog/books", token: parent.token).meta["total_count"] == 2)
        #expect(app.appServices.catalogEngine.bookCount == 2)   // the engine answered, caught up from the change log
    }

    @Test("typos at the start, middle and end of 5-, 6- and 10-letter words, for each kind of edit, over HTTP", .app(engine: true))
    func typoPositions() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let words = ["gifur", "deburi", "caterpilla"]
        for word in words { try await app.makeBook("The \(word.capitalized) Tale", author: "Ann Other") }
        try await app.makeBook("Unrelated Story", author: "Nobody")
        for word in words {
            for kind in 0...3 {
                for position in [0, word.count / 2, word.count - 1] {
                    let typed = Self.typo(word, kind: kind, at: position)
                    guard typed.count >= SearchText.typoMinLength else { continue }
                    let titles = try await app.get("/api/v1/catalog/books?q=\(typed)", token: parent.token).dataArray.map { $0["title"] as? String }
                    #expect(titles.contains("The \(word.capitalized) Tale"), "\(word) → \(typed) (kind \(kind), at \(position))")
                    #expect(!titles.contains("Unrelated Story"))
                }
            }
        }
    }
}
