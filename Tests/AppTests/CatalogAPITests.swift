@testable import App
import Foundation
import JWT
import SQLKit
import Testing
import Vapor
import VaporTesting

@Suite("Parent API: catalog")
struct CatalogAPITests {
    static func titles(_ response: TestingHTTPResponse) throws -> [String] {
        try response.dataArray.map { $0["title"] as! String }
    }

    @Test("every catalog book route needs a valid parent token; categories does not", .app)
    func authorization() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let book = try await app.makeBook("Owl Moon")
        let expired = try await app.jwt.keys.sign(ParentToken(
            sub: .init(value: String(parent.id)), exp: .init(value: Date().addingTimeInterval(-60)),
            iat: .init(value: Date().addingTimeInterval(-3600)), aud: .init(value: [ParentToken.audience])))
        let forgedKeys = JWTKeyCollection()
        await forgedKeys.add(hmac: HMACKey(from: "another-secret-that-is-32-bytes-or-more!!"), digestAlgorithm: .sha256)
        let forged = try await forgedKeys.sign(ParentToken(
            sub: .init(value: String(parent.id)), exp: .init(value: Date().addingTimeInterval(600)),
            iat: .init(value: Date()), aud: .init(value: [ParentToken.audience])))
        for path in ["/api/v1/catalog/books", "/api/v1/catalog/books/\(book)", "/api/v1/children",
                     "/api/v1/children/\(parent.children[0])/library"] {
            for token in [nil, "garbage", expired, forged] {
                let response = try await app.get(path, token: token)
                #expect(response.status == .unauthorized, "\(path) with \(token ?? "no token")")
                #expect(response.headers.contentType?.description.hasPrefix("application/problem+json") == true)
                #expect(try response.json["code"] as? String == "unauthorized")
            }
            #expect(try await app.get(path, token: parent.token).status == .ok)
        }
        #expect(try await app.get("/api/v1/catalog/categories", token: "garbage").status == .ok)
    }

    @Test("the book object carries every field, nulls included", .app)
    func bookObject() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let publisher = try await app.makePublisher("HarperCollins")
        let bedtime = try await app.makeCategory("Bedtime Stories", slug: "bedtime-stories", order: 1, icon: "moon.stars")
        let ready = try await app.makeBook("Goodnight Moon", author: "Margaret Wise Brown", description: "A classic",
                                           ages: 2...5, publisher: publisher, categories: [bedtime], duration: 340)
        let pending = try await app.makeBook("Pending Video", video: "processing", duration: 99, captions: false, rights: .upcoming)
        let noVideo = try await app.makeBook("No Video", video: nil, rights: .expired)

        let detail = try await app.get("/api/v1/catalog/books/\(ready)", token: parent.token).dataObject
        #expect(detail["title"] as? String == "Goodnight Moon")
        #expect(detail["author"] as? String == "Margaret Wise Brown")
        #expect(detail["age_min"] as? Int == 2 && detail["age_max"] as? Int == 5)
        #expect(detail["language"] as? String == "en" && detail["status"] as? String == "active")
        #expect((detail["publisher"] as? [String: Any])?["name"] as? String == "HarperCollins")
        #expect((detail["categories"] as? [[String: Any]])?.first?["slug"] as? String == "bedtime-stories")
        #expect(detail["duration_seconds"] as? Int == 340)
        #expect(detail["has_captions"] as? Bool == true && detail["rights_available"] as? Bool == true)
        #expect(detail.keys.contains("cover_image_url"))

        let processing = try await app.get("/api/v1/catalog/books/\(pending)", token: parent.token).dataObject
        #expect(processing["duration_seconds"] is NSNull)          // only a ready video has a duration
        #expect(processing["publisher"] is NSNull)
        #expect(processing["rights_available"] as? Bool == false)  // upcoming window only
        let none = try await app.get("/api/v1/catalog/books/\(noVideo)", token: parent.token).dataObject
        #expect(none["duration_seconds"] is NSNull && none["has_captions"] as? Bool == false)
        #expect(none["rights_available"] as? Bool == false)          // expired window only
    }

    @Test("only active books exist for parents; unknown and malformed ids are 404", .app)
    func onlyActive() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let active = try await app.makeBook("Active")
        let draft = try await app.makeBook("Draft", status: "draft")
        let archived = try await app.makeBook("Archived", status: "archived")
        let list = try await app.get("/api/v1/catalog/books", token: parent.token)
        #expect(try Self.titles(list) == ["Active"])
        #expect(try await app.get("/api/v1/catalog/books/\(active)", token: parent.token).status == .ok)
        for path in ["\(draft)", "\(archived)", "999999", "abc", "-1", "1.5", "99999999999999999999"] {
            let response = try await app.get("/api/v1/catalog/books/\(path)", token: parent.token)
            #expect(response.status == .notFound, "\(path)")
            #expect(try response.json["code"] as? String == "not_found")
        }
    }

    @Test("search matches word prefixes, ignores case and accents, tolerates one typo in long words, ANDs words", .app)
    func search() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        try await app.makeBook("Goodnight Moon", author: "Margaret Wise Brown")
        try await app.makeBook("Éloïse at the Plaza", author: "Kay Thompson")
        try await app.makeBook("Goodbye Bear", author: "Sam Smith")
        try await app.makeBook("The Draft Moon", status: "draft")
        func search(_ q: String) async throws -> [String] {
            let encoded = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            return try Self.titles(try await app.get("/api/v1/catalog/books?q=\(encoded)", token: parent.token))
        }
        // "goodn" is one deletion from "good" (Goodbye): it matches, but the exact prefix ranks first
        #expect(try await search("goodn") == ["Goodnight Moon", "Goodbye Bear"])
        #expect(try await search("goodni") == ["Goodnight Moon"])
        #expect(try await search("GOODNIGHT moon") == ["Goodnight Moon"])
        #expect(try await search("eloise") == ["Éloïse at the Plaza"])
        #expect(try await search("ÉLOÏSE plaz") == ["Éloïse at the Plaza"])
        #expect(try await search("godnight") == ["Goodnight Moon"])          // one insertion
        #expect(try await search("goodnihgt") == ["Goodnight Moon"])         // transposition
        #expect(try await search("thompsen") == ["Éloïse at the Plaza"])     // substitution, in the author
        #expect(try await search("moon bear").isEmpty)                       // every word must match
        #expect(try await search("moom").isEmpty)                            // four letters: no typo tolerance
        #expect(try await search("margaret moon") == ["Goodnight Moon"])     // words across title and author
        #expect(Set(try await search("goo")) == ["Goodnight Moon", "Goodbye Bear"])
        // a word added now is typo-searchable on the next request
        try await app.makeBook("Caterpillar Dreams")
        #expect(try await search("catepillar") == ["Caterpillar Dreams"])
    }

    @Test("relevance ranks title matches above author above description matches", .app)
    func ranking() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let description = try await app.makeBook("Sea Stories", author: "Ann Other", description: "A dragon sleeps under the sea.")
        let author = try await app.makeBook("Mountain Tales", author: "Dragon Smith")
        let title = try await app.makeBook("The Dragon Egg", author: "Zed Writer")
        let ids = try await app.get("/api/v1/catalog/books?q=dragon", token: parent.token).dataArray.map { $0["id"] as! Int }
        #expect(ids == [title, author, description])
        // sort=title overrides relevance
        let byTitle = try Self.titles(try await app.get("/api/v1/catalog/books?q=dragon&sort=title", token: parent.token))
        #expect(byTitle == ["Mountain Tales", "Sea Stories", "The Dragon Egg"])
    }

    @Test("filters combine: age bounds inclusive, publisher, category by slug or id", .app)
    func filters() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let harper = try await app.makePublisher("Harper")
        let walker = try await app.makePublisher("Walker")
        let bedtime = try await app.makeCategory("Bedtime", slug: "bedtime")
        let animals = try await app.makeCategory("Animals", slug: "animals")
        try await app.makeBook("A", ages: 2...4, publisher: harper, categories: [bedtime])
        try await app.makeBook("B", ages: 4...8, publisher: walker, categories: [bedtime, animals])
        try await app.makeBook("C", ages: 9...12, publisher: harper, categories: [animals])
        func titles(_ query: String) async throws -> [String] {
            try Self.titles(try await app.get("/api/v1/catalog/books?\(query)", token: parent.token))
        }
        #expect(try await titles("age=4") == ["A", "B"])
        #expect(try await titles("age=2") == ["A"])
        #expect(try await titles("age=8") == ["B"])
        #expect(try await titles("age=13").isEmpty)
        #expect(try await titles("publisher=\(harper)") == ["A", "C"])
        #expect(try await titles("category=bedtime") == ["A", "B"])
        #expect(try await titles("category=\(animals)") == ["B", "C"])
        #expect(try await titles("category=unknown").isEmpty)
        #expect(try await titles("category=999999").isEmpty)
        #expect(try await titles("category=animals&age=4&publisher=\(walker)") == ["B"])
        #expect(try await titles("age=&publisher=&category=") == ["A", "B", "C"])  // empty counts as absent
    }

    @Test("bad parameters are 400 problems naming the parameter", arguments: [
        "age=19", "age=-1", "age=x", "publisher=0", "publisher=abc", "page=0", "page=x",
        "per_page=0", "per_page=101", "sort=popular", "q=" + String(repeating: "a", count: 201),
    ])
    func badParameters(query: String) async throws {
        try await withApp { app in
            let parent = try await app.makeParent()
            let response = try await app.get("/api/v1/catalog/books?\(query)", token: parent.token)
            #expect(response.status == .badRequest)
            let problem = try response.json
            #expect(problem["code"] as? String == "invalid_parameter")
            #expect(problem["field"] as? String == String(query.prefix { $0 != "=" }))
            #expect(problem["status"] as? Int == 400 && problem["type"] is String && problem["title"] is String && problem["detail"] is String)
        }
    }

    @Test("title order is case-insensitive with ties by id; newest is by creation, ties by id descending", .app)
    func ordering() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let same = Date(timeIntervalSince1970: 1_700_000_000)
        let b1 = try await app.makeBook("banana", createdAt: same)
        let a = try await app.makeBook("Apple", createdAt: same.addingTimeInterval(-10))
        let b2 = try await app.makeBook("Banana", createdAt: same)
        let c = try await app.makeBook("cherry", createdAt: same.addingTimeInterval(10))
        let byTitle = try await app.get("/api/v1/catalog/books", token: parent.token).dataArray.map { $0["id"] as! Int }
        #expect(byTitle == [a, b1, b2, c])
        let newest = try await app.get("/api/v1/catalog/books?sort=newest", token: parent.token).dataArray.map { $0["id"] as! Int }
        #expect(newest == [c, b2, b1, a])
    }

    @Test("walking every page returns each matching book exactly once, with true meta and Link headers", .app)
    func pageWalk() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        var expected: Set<Int> = []
        for i in 0..<11 { expected.insert(try await app.makeBook(i % 3 == 0 ? "Same Title" : "Book \(i)")) }
        for sort in ["title", "newest"] {
            var seen: [Int] = []
            for page in 1...4 {
                let response = try await app.get("/api/v1/catalog/books?per_page=3&sort=\(sort)&page=\(page)", token: parent.token)
                seen += try response.dataArray.map { $0["id"] as! Int }
                #expect(try response.meta == ["page": page, "per_page": 3, "total_count": 11, "total_pages": 4])
                let link = response.headers.first(name: "Link") ?? ""
                #expect(link.contains("per_page=3&sort=\(sort)&page=1>; rel=\"first\""))
                #expect(link.contains("page=4>; rel=\"last\""))
                #expect(link.contains("rel=\"next\"") == (page < 4))
                #expect(link.contains("rel=\"prev\"") == (page > 1))
            }
            #expect(seen.count == 11 && Set(seen) == expected)
        }
        // past the end: empty data, true meta, prev is the last page
        let past = try await app.get("/api/v1/catalog/books?per_page=3&page=9", token: parent.token)
        #expect(try past.dataArray.isEmpty)
        #expect(try past.meta["total_count"] == 11 && past.meta["total_pages"] == 4)
        #expect(past.headers.first(name: "Link")?.contains("per_page=3&page=4>; rel=\"prev\"") == true)
        // nothing matches: total_pages 0, last is page 1
        let none = try await app.get("/api/v1/catalog/books?q=zzzzzz", token: parent.token)
        #expect(try none.meta["total_pages"] == 0 && none.meta["total_count"] == 0)
        #expect(none.headers.first(name: "Link")?.contains("page=1>; rel=\"last\"") == true)
    }

    @Test("a list page is a fixed number of SQL statements whatever per_page is (no N+1): five on the SQL path", .app)
    func queryCount() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let categories = [try await app.makeCategory("One", slug: "one"), try await app.makeCategory("Two", slug: "two")]
        let publisher = try await app.makePublisher()
        for i in 0..<30 { try await app.makeBook("Dragon \(i)", publisher: publisher, categories: categories) }
        // The parent's country is read once per instance (again only after some parent's country changes).
        _ = try await app.get("/api/v1/catalog/books?per_page=1", token: parent.token)
        for query in ["per_page=1", "per_page=100", "q=dragon&per_page=100", "q=dragno&per_page=100",
                      "category=one&age=4&per_page=100"] {
            var rows = 0
            let count = try await app.countQueries {
                rows = try await app.get("/api/v1/catalog/books?\(query)", token: parent.token).dataArray.count
            }
            #expect(rows > 0)
            #expect(count <= 5, "\(query): \(count) statements")
        }
        let detail = try await app.countQueries { _ = try await app.get("/api/v1/catalog/books/1", token: parent.token) }
        #expect(detail <= 2)   // the catalog version, then the book (or a cache hit)
    }

    @Test("categories: public, ordered by display_order then name, with an ETag honoured by If-None-Match", .app)
    func categories() async throws {
        let app = try app()
        try await app.makeCategory("Zebra", slug: "zebra", order: 1, icon: "hare")
        try await app.makeCategory("Apple", slug: "apple", order: 2)
        try await app.makeCategory("Bear", slug: "bear", order: 1)
        let response = try await app.get("/api/v1/catalog/categories")
        #expect(response.status == .ok)
        let data = try response.dataArray
        #expect(data.map { $0["slug"] as! String } == ["bear", "zebra", "apple"])
        #expect(data[0]["icon_name"] is NSNull && data[1]["icon_name"] as? String == "hare")
        let etag = try #require(response.headers.first(name: .eTag))
        let cached = try await app.get("/api/v1/catalog/categories", headers: ["If-None-Match": etag])
        #expect(cached.status == .notModified && cached.body.readableBytes == 0)
        // a change gives a new ETag
        try await app.sql.raw("UPDATE categories SET name = 'Bears' WHERE slug = 'bear'").run()
        let changed = try await app.get("/api/v1/catalog/categories", headers: ["If-None-Match": etag])
        #expect(changed.status == .ok && changed.headers.first(name: .eTag) != etag)
    }

    @Test("unknown routes under /api are problem+json 404s", .app)
    func unknownRoute() async throws {
        let app = try app()
        let response = try await app.get("/api/v1/nope")
        #expect(response.status == .notFound)
        #expect(try response.json["code"] as? String == "not_found")
    }
}
