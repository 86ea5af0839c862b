@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

@Suite("Parent API: sign-in, children and libraries")
struct LibraryAPITests {
    @Test("sign-in: a token for the right password, 401 for a wrong one, 400 naming a missing field", .app)
    func signIn() async throws {
        let app = try app()
        _ = try await app.makeParent(email: "pat@example.com", password: "right password")
        let ok = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"PAT@example.com","password":"right password"}"#)
        #expect(ok.status == .ok)
        let body = try ok.json
        #expect(body["token_type"] as? String == "Bearer" && (body["expires_in"] as? Int ?? 0) > 0)
        #expect((body["access_token"] as? String)?.split(separator: ".").count == 3)
        let wrong = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"pat@example.com","password":"wrong"}"#)
        #expect(wrong.status == .unauthorized)
        let unknown = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"nobody@example.com","password":"x"}"#)
        #expect(unknown.status == .unauthorized)
        let missing = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"pat@example.com"}"#)
        #expect(missing.status == .badRequest)
        #expect(try missing.json["code"] as? String == "invalid_parameter" && missing.json["field"] as? String == "password")
        let malformed = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email": "#)
        #expect(try malformed.status == .badRequest && (malformed.json["code"] as? String) == "invalid_body")
        let wrongType = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email": 5, "password": "x"}"#)
        #expect(try wrongType.status == .badRequest && (wrongType.json["field"] as? String) == "email")
    }

    @Test("repeated failed sign-ins for one email are throttled with 429, other emails are not", .app)
    func throttling() async throws {
        let app = try app()
        _ = try await app.makeParent(email: "pat@example.com", password: "right password")
        _ = try await app.makeParent(email: "sam@example.com", password: "right password")
        for _ in 0..<LoginThrottle.perEmail {
            let response = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"pat@example.com","password":"nope"}"#)
            #expect(response.status == .unauthorized)
        }
        let throttled = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"pat@example.com","password":"right password"}"#)
        #expect(throttled.status == .tooManyRequests)
        #expect(try throttled.json["code"] as? String == "too_many_requests")
        #expect(throttled.headers.first(name: "Retry-After") != nil)
        let other = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"sam@example.com","password":"right password"}"#)
        #expect(other.status == .ok)
    }

    @Test("children: only the caller's", .app)
    func children() async throws {
        let app = try app()
        let mine = try await app.makeParent(children: ["Ada", "Ben"])
        _ = try await app.makeParent(children: ["Cy"])
        let response = try await app.get("/api/v1/children", token: mine.token)
        #expect(try response.dataArray.map { $0["name"] as! String } == ["Ada", "Ben"])
        #expect(try response.dataArray.map { $0["id"] as! Int } == mine.children)
    }

    @Test("add: 201 with the entry; 409 duplicate first; 404 unknown or inactive book; 422 without rights; 400 bad body", .app)
    func add() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let book = try await app.makeBook("Owl Moon", duration: 125)
        let upcoming = try await app.makeBook("Soon", rights: .upcoming)
        let expired = try await app.makeBook("Gone", rights: .expired)
        let draft = try await app.makeBook("Draft", status: "draft")
        let path = "/api/v1/children/\(child)/library"

        let created = try await app.send(.POST, path, token: parent.token, json: #"{"book_id": \#(book)}"#)
        #expect(created.status == .created)
        let entry = try created.dataObject
        #expect(entry["id"] as? Int == book && entry["title"] as? String == "Owl Moon")
        #expect(entry["duration_seconds"] as? Int == 125 && entry["added_at"] is String && entry["last_played_at"] is NSNull)

        func problem(_ json: String) async throws -> (HTTPStatus, String?, String?) {
            let response = try await app.send(.POST, path, token: parent.token, json: json)
            let body = try response.json
            return (response.status, body["code"] as? String, body["field"] as? String)
        }
        #expect(try await problem(#"{"book_id": \#(book)}"#) == (.conflict, "duplicate", nil))
        #expect(try await problem(#"{"book_id": 999999}"#) == (.notFound, "not_found", nil))
        #expect(try await problem(#"{"book_id": \#(draft)}"#) == (.notFound, "not_found", nil))
        #expect(try await problem(#"{"book_id": \#(upcoming)}"#) == (.unprocessableEntity, "rights_unavailable", nil))
        #expect(try await problem(#"{"book_id": \#(expired)}"#) == (.unprocessableEntity, "rights_unavailable", nil))
        for body in [#"{"book_id": "\#(book)"}"#, #"{"book_id": 1.5}"#, #"{"book_id": null}"#, #"{"book_id": true}"#, "{}", "[1]", "5"] {
            #expect(try await problem(body) == (.badRequest, "invalid_parameter", "book_id"), "\(body)")
        }
        for body in ["{", "not json", #"{"book_id": }"#] {
            #expect(try await problem(body).1 == "invalid_body", "\(body)")
        }
        // the duplicate is checked before rights: make the first book's rights lapse
        try await app.sql.raw("UPDATE rights_windows SET starts_at = now() - interval '2 days', ends_at = now() - interval '1 day' WHERE book_id = \(bind: book)").run()
        #expect(try await problem(#"{"book_id": \#(book)}"#).0 == .conflict)
        let rows = try await app.sql.raw("SELECT count(*) AS n FROM library_entries").first()!.decode(column: "n", as: Int.self)
        #expect(rows == 1)
    }

    @Test("another parent's child is answered exactly like an unknown child on every route", .app)
    func otherParentsChild() async throws {
        let app = try app()
        let me = try await app.makeParent()
        let other = try await app.makeParent()
        let book = try await app.makeBook("Owl Moon")
        let theirs = other.children[0]
        _ = try await app.send(.POST, "/api/v1/children/\(theirs)/library", token: other.token, json: #"{"book_id": \#(book)}"#)
        for child in [theirs, 999_999] {
            let base = "/api/v1/children/\(child)/library"
            let responses = [
                try await app.get(base, token: me.token),
                try await app.send(.POST, base, token: me.token, json: #"{"book_id": \#(book)}"#),
                try await app.send(.DELETE, "\(base)/\(book)", token: me.token),
                try await app.send(.POST, "\(base)/\(book)/plays", token: me.token, json: #"{"position_seconds": 1, "completed": false}"#),
            ]
            for response in responses {
                #expect(response.status == .notFound)
                #expect(try response.json["code"] as? String == "not_found")
            }
        }
        // their entry is untouched
        let left = try await app.get("/api/v1/children/\(theirs)/library", token: other.token)
        #expect(try left.meta["total_count"] == 1)
    }

    @Test("library sorts: recently_added (default), title, recently_watched with never-played last", .app)
    func sorts() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let c = try await app.makeBook("charlie")
        let a = try await app.makeBook("Alpha")
        let b = try await app.makeBook("bravo")
        let hidden = try await app.makeBook("Archived Later")
        for (book, daysAgo, playedDaysAgo) in [(c, 3, 1 as Int?), (a, 2, nil), (b, 1, 2), (hidden, 0, 0)] {
            try await app.sql.raw("""
                INSERT INTO library_entries (child_id, book_id, added_at, last_played_at)
                VALUES (\(bind: child), \(bind: book), now() - make_interval(days => \(bind: daysAgo)::int),
                        CASE WHEN \(bind: playedDaysAgo)::int IS NULL THEN NULL ELSE now() - make_interval(days => \(bind: playedDaysAgo ?? 0)::int) END)
                """).run()
        }
        try await app.sql.raw("UPDATE books SET status = 'archived' WHERE id = \(bind: hidden)").run()
        func ids(_ query: String) async throws -> [Int] {
            try await app.get("/api/v1/children/\(child)/library\(query)", token: parent.token).dataArray.map { $0["id"] as! Int }
        }
        #expect(try await ids("") == [b, a, c])
        #expect(try await ids("?sort=recently_added") == [b, a, c])
        #expect(try await ids("?sort=title") == [a, b, c])
        #expect(try await ids("?sort=recently_watched") == [c, b, a])
        let paged = try await app.get("/api/v1/children/\(child)/library?sort=title&per_page=2&page=2", token: parent.token)
        #expect(try paged.dataArray.map { $0["id"] as! Int } == [c])
        #expect(try paged.meta == ["page": 2, "per_page": 2, "total_count": 3, "total_pages": 2])
        #expect(paged.headers.first(name: "Link")?.contains("sort=title&per_page=2&page=1>; rel=\"prev\"") == true)
        let bad = try await app.get("/api/v1/children/\(child)/library?sort=newest", token: parent.token)
        #expect(try bad.status == .badRequest && (bad.json["field"] as? String) == "sort")
        let count = try await app.countQueries { _ = try await app.get("/api/v1/children/\(child)/library?per_page=100", token: parent.token) }
        #expect(count <= 3)
    }

    @Test("delete: 204, then 404", .app)
    func delete() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let book = try await app.makeBook("Owl Moon")
        let path = "/api/v1/children/\(parent.children[0])/library"
        _ = try await app.send(.POST, path, token: parent.token, json: #"{"book_id": \#(book)}"#)
        #expect(try await app.send(.DELETE, "\(path)/\(book)", token: parent.token).status == .noContent)
        let again = try await app.send(.DELETE, "\(path)/\(book)", token: parent.token)
        #expect(try again.status == .notFound && (again.json["code"] as? String) == "not_found")
    }

    @Test("plays: every play is stored, last_played_at follows; not in the library is 404; bad body is 400", .app)
    func plays() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let book = try await app.makeBook("Owl Moon")
        let elsewhere = try await app.makeBook("Not Added")
        let path = "/api/v1/children/\(child)/library"
        _ = try await app.send(.POST, path, token: parent.token, json: #"{"book_id": \#(book)}"#)
        let first = try await app.send(.POST, "\(path)/\(book)/plays", token: parent.token, json: #"{"position_seconds": 30, "completed": false}"#)
        #expect(first.status == .created)
        let play = try first.dataObject
        #expect(play["book_id"] as? Int == book && play["position_seconds"] as? Int == 30 && play["completed"] as? Bool == false)
        #expect(play["played_at"] is String)
        let second = try await app.send(.POST, "\(path)/\(book)/plays", token: parent.token, json: #"{"position_seconds": 300, "completed": true}"#)
        #expect(second.status == .created)
        let stored = try await app.sql.raw("SELECT count(*) AS n FROM plays WHERE child_id = \(bind: child)").first()!.decode(column: "n", as: Int.self)
        #expect(stored == 2)
        let library = try await app.get(path, token: parent.token).dataArray
        #expect(try library.first?["last_played_at"] as? String == (second.dataObject["played_at"] as? String))
        let missing = try await app.send(.POST, "\(path)/\(elsewhere)/plays", token: parent.token, json: #"{"position_seconds": 1, "completed": false}"#)
        #expect(missing.status == .notFound)
        for (body, field) in [(#"{"completed": true}"#, "position_seconds"), (#"{"position_seconds": -1, "completed": true}"#, "position_seconds"),
                              (#"{"position_seconds": 5}"#, "completed"), (#"{"position_seconds": 5, "completed": "yes"}"#, "completed")] {
            let response = try await app.send(.POST, "\(path)/\(book)/plays", token: parent.token, json: body)
            #expect(try response.status == .badRequest && (response.json["field"] as? String) == field, "\(body)")
        }
    }
}

@Suite("Parent API over real HTTP")
struct HTTPTests {
    @Test("an oversized JSON body is a 413 problem, never a 500", .app)
    func oversized() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        // Port 0: the server takes a free port for the request and the tester reads which (a random
        // port could be one of the suite's own client connections: "Address already in use").
        let tester = try app.testing(method: .running(hostname: "127.0.0.1", port: 0))
        let big = #"{"book_id": 1, "padding": ""# + String(repeating: "x", count: 100_000) + #""}"#
        var headers = HTTPHeaders()
        headers.bearerAuthorization = .init(token: parent.token)
        headers.contentType = .json
        let response = try await tester.sendRequest(.POST, "/api/v1/children/\(parent.children[0])/library",
                                                     headers: headers, body: ByteBuffer(string: big))
        #expect(response.status == .payloadTooLarge)
        #expect(response.headers.contentType?.description.hasPrefix("application/problem+json") == true)
        #expect(try response.json["code"] as? String == "payload_too_large")
    }
}
