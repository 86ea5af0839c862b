@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Retries that are safe: Idempotency-Key on the parent API's writes, offline plays sent in
/// batches, history read by cursor while plays arrive.
@Suite("Retries and offline plays")
struct RetriesTests {
    static func plays(_ app: Application, child: Int) async throws -> Int {
        try await app.sql.raw("SELECT count(*) AS n FROM plays WHERE child_id = \(bind: child)").first()!.decode(column: "n", as: Int.self)
    }

    static func post(_ app: Application, _ path: String, token: String, key: String?, json: String) async throws -> TestingHTTPResponse {
        try await app.send(.POST, path, token: token, json: json, headers: key.map { ["Idempotency-Key": $0] } ?? [:])
    }

    @Test("a retried play with its Idempotency-Key is stored once and answered byte for byte; another body is 422; a key is the account's own", .app)
    func replays() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let stranger = try await app.makeParent()
        let child = parent.children[0]
        let book = try await app.makeBook("Owl Moon")
        #expect(try await app.send(.POST, "/api/v1/children/\(child)/library", token: parent.token, json: #"{"book_id": \#(book)}"#).status == .created)
        let path = "/api/v1/children/\(child)/library/\(book)/plays"
        let body = #"{"position_seconds": 120, "completed": false}"#
        let first = try await Self.post(app, path, token: parent.token, key: "play-1", json: body)
        #expect(first.status == .created && first.headers.first(name: "Idempotent-Replayed") == nil)
        let retry = try await Self.post(app, path, token: parent.token, key: "play-1", json: body)
        #expect(retry.status == .created && retry.body == first.body && retry.headers.first(name: "Idempotent-Replayed") == "true")
        #expect(retry.headers.contentType == first.headers.contentType)
        #expect(try await Self.plays(app, child: child) == 1)

        let reused = try await Self.post(app, path, token: parent.token, key: "play-1", json: #"{"position_seconds": 300, "completed": true}"#)
        #expect(reused.status == .unprocessableEntity)
        #expect(try reused.json["code"] as? String == "idempotency_key_reused")
        #expect(try await Self.plays(app, child: child) == 1)
        // Without a key every play counts; another account's same key is its own.
        #expect(try await Self.post(app, path, token: parent.token, key: nil, json: body).status == .created)
        #expect(try await Self.plays(app, child: child) == 2)
        let theirs = try await Self.post(app, "/api/v1/children/\(stranger.children[0])/library", token: stranger.token, key: "play-1", json: #"{"book_id": \#(book)}"#)
        #expect(theirs.status == .created)

        // A refusal is kept and replayed too (the retry must not turn it into a success).
        let missing = try await Self.post(app, "/api/v1/children/\(child)/library/999999/plays", token: parent.token, key: "play-404", json: body)
        #expect(missing.status == .notFound)
        #expect(try await Self.post(app, "/api/v1/children/\(child)/library/999999/plays", token: parent.token, key: "play-404", json: body).body == missing.body)
        // A DELETE too: the second is the first's 204, not a 404.
        let removed = try await app.send(.DELETE, "/api/v1/children/\(child)/library/\(book)", token: parent.token, headers: ["Idempotency-Key": "remove-1"])
        let removedAgain = try await app.send(.DELETE, "/api/v1/children/\(child)/library/\(book)", token: parent.token, headers: ["Idempotency-Key": "remove-1"])
        #expect(removed.status == .noContent && removedAgain.status == .noContent && removedAgain.headers.first(name: "Idempotent-Replayed") == "true")
        let bad = try await Self.post(app, path, token: parent.token, key: String(repeating: "k", count: 300), json: body)
        #expect(bad.status == .badRequest)
        #expect(try bad.json["field"] as? String == "Idempotency-Key")
        // Past 24 hours the key is free again.
        try await app.sql.raw("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'play-1'").run()
        #expect(try await Self.post(app, "/api/v1/children/\(child)/library", token: parent.token, key: "play-1", json: #"{"book_id": \#(book)}"#).status == .created)
    }

    @Test("the same key sent at once: one play stored, the others 409 idempotency_key_in_use or the replay; on two instances too")
    func concurrentDuplicates() async throws {
        try await withTwoApps { first, second in
            let parent = try await first.makeParent()
            let child = parent.children[0]
            let book = try await first.makeBook("Owl Moon")
            #expect(try await first.send(.POST, "/api/v1/children/\(child)/library", token: parent.token, json: #"{"book_id": \#(book)}"#).status == .created)
            let path = "/api/v1/children/\(child)/library/\(book)/plays"
            for round in 0..<5 {
                let statuses = try await withThrowingTaskGroup(of: (HTTPStatus, String?).self) { group in
                    for index in 0..<8 {
                        let app = index % 2 == 0 ? first : second
                        group.addTask {
                            let response = try await Self.post(app, path, token: parent.token, key: "round-\(round)", json: #"{"position_seconds": 60, "completed": false}"#)
                            return (response.status, response.headers.first(name: "Idempotent-Replayed"))
                        }
                    }
                    return try await group.reduce(into: [(HTTPStatus, String?)]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0.0 == .created && $0.1 == nil }.count == 1, "round \(round): \(statuses)")
                #expect(statuses.allSatisfy { $0.0 == .created || $0.0 == .conflict }, "round \(round): \(statuses)")
                #expect(try await Self.plays(first, child: child) == round + 1)
            }
            // The answer kept by one instance is replayed by the other.
            let kept = try await Self.post(first, path, token: parent.token, key: "cross", json: #"{"position_seconds": 61, "completed": false}"#)
            let replayed = try await Self.post(second, path, token: parent.token, key: "cross", json: #"{"position_seconds": 61, "completed": false}"#)
            #expect(kept.status == .created && replayed.body == kept.body && replayed.headers.first(name: "Idempotent-Replayed") == "true")
        }
    }

    /// A parent whose first child has two books in the library.
    static func twoBooksInLibrary(_ app: Application) async throws -> (parent: Application.ParentFixture, child: Int, owl: Int, bear: Int) {
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let owl = try await app.makeBook("Owl Moon")
        let bear = try await app.makeBook("Bear Hunt")
        for book in [owl, bear] {
            #expect(try await app.send(.POST, "/api/v1/children/\(child)/library", token: parent.token, json: #"{"book_id": \#(book)}"#).status == .created)
        }
        return (parent, child, owl, bear)
    }

    static func batch(_ plays: [(id: String, book: Int, position: Int, minutesAgo: Int)]) -> String {
        let now = Date()
        let items = plays.map { play in
            let at = ISO8601DateFormatter().string(from: now.addingTimeInterval(Double(-play.minutesAgo * 60)))
            return #"{"client_id": "\#(play.id)", "book_id": \#(play.book), "position_seconds": \#(play.position), "completed": false, "played_at": "\#(at)"}"#
        }
        return #"{"plays": [\#(items.joined(separator: ", "))]}"#
    }

    @Test("offline plays: a batch with duplicates inside and across sends records each client id once, in played_at order, one result per play", .app)
    func offlineBatch() async throws {
        let app = try app()
        let (parent, child, owl, bear) = try await Self.twoBooksInLibrary(app)
        let path = "/api/v1/children/\(child)/plays/batch"
        let first = try await app.send(.POST, path, token: parent.token, json: Self.batch([
            ("a", owl, 30, 50), ("b", bear, 60, 40), ("a", owl, 30, 50), ("c", 999_999, 10, 30)]))
        #expect(first.status == .ok)
        let results = try first.dataArray
        #expect(results.map { $0["client_id"] as? String } == ["a", "b", "a", "c"])
        #expect(results.map { $0["status"] as? String } == ["recorded", "recorded", "duplicate", "refused"])
        #expect(results[3]["code"] as? String == "not_found")
        #expect(try first.json["meta"] as? [String: Int] == ["recorded": 2, "duplicates": 1, "refused": 1])
        #expect(try await Self.plays(app, child: child) == 2)

        // Sent again (the answer was lost), with one new play: only the new one counts.
        let again = try await app.send(.POST, path, token: parent.token, json: Self.batch([("a", owl, 30, 50), ("b", bear, 60, 40), ("d", owl, 90, 10)]))
        #expect(try again.dataArray.map { $0["status"] as? String } == ["duplicate", "duplicate", "recorded"])
        #expect(try await Self.plays(app, child: child) == 3)
        // The same batch twice at once: each play once.
        let twice = Self.batch((0..<20).map { ("p\($0)", owl, $0 * 10, 20 - $0) })
        async let one = app.send(.POST, path, token: parent.token, json: twice)
        async let two = app.send(.POST, path, token: parent.token, json: twice)
        let (x, y) = try await (one, two)
        #expect(x.status == .ok && y.status == .ok)
        #expect(try await Self.plays(app, child: child) == 23)
        // The history shows them in played_at order (the last is the latest).
        let history = try await app.get("/api/v1/children/\(child)/history?per_page=1", token: parent.token)
        #expect(try history.dataArray.first?["position_seconds"] as? Int == 190)

        // A malformed play names itself and nothing is stored.
        let broken = try await app.send(.POST, path, token: parent.token, json: #"{"plays": [{"client_id": "z", "book_id": \#(owl), "position_seconds": 1, "completed": false, "played_at": "2026-01-01T00:00:00Z"}, {"client_id": "y", "book_id": \#(owl), "position_seconds": -5, "completed": false, "played_at": "2026-01-01T00:00:00Z"}]}"#)
        #expect(broken.status == .badRequest)
        #expect(try broken.json["field"] as? String == "plays[1].position_seconds")
        let tooMany = try await app.send(.POST, path, token: parent.token, json: Self.batch((0..<501).map { ("m\($0)", owl, 1, 1) }))
        #expect(tooMany.status == .badRequest || tooMany.status == .payloadTooLarge)
        #expect(try await Self.plays(app, child: child) == 23)
        // Another parent's child is a 404.
        let stranger = try await app.makeParent()
        #expect(try await app.send(.POST, "/api/v1/children/\(stranger.children[0])/plays/batch", token: parent.token, json: Self.batch([("q", owl, 1, 1)])).status == .notFound)
    }

    @Test("offline plays meet the family controls: past the day's minutes the rest are refused time_limit_reached", .app)
    func offlineBatchBudget() async throws {
        let app = try app()
        let (parent, child, owl, bear) = try await Self.twoBooksInLibrary(app)
        #expect(try await app.send(.PUT, "/api/v1/children/\(child)/controls", token: parent.token, json: #"{"daily_minutes": 5}"#).status == .ok)
        let answer = try await app.send(.POST, "/api/v1/children/\(child)/plays/batch", token: parent.token,
                                        json: Self.batch([("a", owl, 240, 30), ("b", bear, 240, 20), ("c", owl, 300, 10)]))
        #expect(answer.status == .ok)
        let statuses = try answer.dataArray.map { "\($0["status"] as? String ?? "")/\($0["code"] as? String ?? "")" }
        #expect(statuses == ["recorded/", "recorded/", "refused/time_limit_reached"], "\(statuses)")
    }
}
