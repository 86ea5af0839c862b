@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// The fourth round of attacks on the parent API's plumbing, replayed over HTTP (races with
/// concurrent requests released together): playback grants and the day's minutes, a deleted
/// account's tokens, Idempotency-Key and who holds it, concurrent refreshes.
@Suite("Security round 4: parent API")
struct SecurityRound4ParentAPITests {
    static let password = "correct horse battery"

    static func code(_ response: TestingHTTPResponse) -> String? { try? response.json["code"] as? String }

    static func grant(_ app: Application, child: Int, book: Int, token: String) async throws -> TestingHTTPResponse {
        try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/playback", token: token)
    }

    /// The seconds a grant answer allows from `asked` (nil when it is no grant).
    static func seconds(_ response: TestingHTTPResponse, asked: Date) throws -> Double? {
        guard response.status == .created, let text = try response.dataObject["expires_at"] as? String,
              let expires = ISO8601DateFormatter().date(from: text) else { return nil }
        return expires.timeIntervalSince(asked)
    }

    @Test("a grant spends the day's minutes: 2 minutes allow one 120-s grant, not four (one by one or released together); a play is not counted twice and the grant's end gives nothing back", .app)
    func grantsSpendMinutes() async throws {
        let app = try app()
        let parent = try await app.makeParent(children: ["Ada", "Ben"])
        let zone = FamilyControlsTests.daytimeZone()
        #expect(try await app.send(.PATCH, "/api/v1/me", token: parent.token, json: #"{"time_zone": "\#(zone)"}"#).status == .ok)
        let book = try await app.makeBook("Owl Night")
        for child in parent.children {
            try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: child), \(bind: book))").run()
            #expect(try await FamilyControlsTests.put(app, child, #"{"daily_minutes": 2}"#, token: parent.token).status == .ok)
        }
        let (ada, ben) = (parent.children[0], parent.children[1])
        // The app's clock stopped: a grant's expiry is exactly its seconds from now, however long
        // the request takes on a loaded machine.
        let asked = app.freezeClock()
        // One by one: the first grant takes the two minutes, the next ones get the play's 403.
        let first = try await Self.grant(app, child: ada, book: book, token: parent.token)
        let firstSeconds = try #require(try Self.seconds(first, asked: asked), "\(first.status) \(first.body.string)")
        let firstReason = try first.dataObject["expires_because"] as? String
        #expect(firstSeconds == 120 && firstReason == "time_limit", "\(firstSeconds) \(String(describing: firstReason))")
        #expect(try await app.count("SELECT COALESCE(sum(seconds), 0) AS n FROM playback_reservations WHERE child_id = \(bind: ada)") == 120)
        for _ in 0..<3 {
            let again = try await Self.grant(app, child: ada, book: book, token: parent.token)
            #expect(again.status == .forbidden && Self.code(again) == "time_limit_reached", "\(again.status) \(again.body.string)")
            #expect(again.headers.first(name: "Retry-After") != nil)
        }
        // Released together: the grants given add up to the budget at most.
        let answers = try await Self.together(4) { _ in try await Self.grant(app, child: ben, book: book, token: parent.token) }
        #expect(answers.allSatisfy { $0.status == .created || Self.code($0) == "time_limit_reached" }, "\(answers.map(\.status))")
        let granted = try answers.compactMap { try Self.seconds($0, asked: asked) }
        #expect(granted == [120], "\(granted)")
        #expect(try await app.count("SELECT COALESCE(sum(seconds), 0) AS n FROM playback_reservations WHERE child_id = \(bind: ben)") == 120)
        // A play recorded against the grant moves its seconds from the reservation to the plays:
        // 60 s watched, 60 s still reserved — nothing more to grant.
        #expect(try await app.send(.POST, "/api/v1/children/\(ada)/library/\(book)/plays", token: parent.token,
                                   json: #"{"position_seconds": 60, "completed": false}"#).status == .created)
        #expect(Self.code(try await Self.grant(app, child: ada, book: book, token: parent.token)) == "time_limit_reached")
        // The grant over (its expiry moved to the past of the app's clock rather than waited for): its unplayed
        // minute stays spent today (the token could be watched to its end) — no second grant; /today counts it.
        try await app.sql.raw("UPDATE playback_reservations SET expires_at = \(bind: app.now.addingTimeInterval(-1)) WHERE child_id = \(bind: ada)").run()
        let ended = try await Self.grant(app, child: ada, book: book, token: parent.token)
        #expect(ended.status == .forbidden && Self.code(ended) == "time_limit_reached", "\(ended.status) \(ended.body.string)")
        let today = try await app.get("/api/v1/children/\(ada)/today", token: parent.token).dataObject
        #expect(today["minutes_used"] as? Int == 2 && today["minutes_left"] as? Int == 0 && today["can_play"] as? Bool == false, "\(today)")
        // No daily limit: grants reserve nothing and are not limited by minutes.
        #expect(try await FamilyControlsTests.put(app, ada, #"{"daily_minutes": null}"#, token: parent.token).status == .ok)
        let free = try await Self.grant(app, child: ada, book: book, token: parent.token)
        let freeReason = try free.dataObject["expires_because"] as? String
        #expect(free.status == .created && freeReason == "max_lifetime")
    }

    @Test("a tablet that never reports plays gets no fresh grant when one ends: 1 minute a day gives one 60-s grant, then 403 until tomorrow; /today counts the minute", .app)
    func unreportedGrantsStaySpent() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let zone = FamilyControlsTests.daytimeZone()
        #expect(try await app.send(.PATCH, "/api/v1/me", token: parent.token, json: #"{"time_zone": "\#(zone)"}"#).status == .ok)
        let book = try await app.makeBook("Owl Night")
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: child), \(bind: book))").run()
        #expect(try await FamilyControlsTests.put(app, child, #"{"daily_minutes": 1}"#, token: parent.token).status == .ok)
        let tablet = try await ChildModeTests.pair(app, parent: parent.token, child: child)
        let first = try await Self.grant(app, child: child, book: book, token: tablet.access)
        #expect(first.status == .created, "\(first.status) \(first.body.string)")
        // The attack: wait out each grant (the app's clock moved past its expiry), never POST a play, ask again.
        for round in 1...3 {
            app.appServices.clock.advance(by: 62)
            let again = try await Self.grant(app, child: child, book: book, token: tablet.access)
            #expect(again.status == .forbidden && Self.code(again) == "time_limit_reached", "round \(round): \(again.status) \(again.body.string)")
            // Minutes come back tomorrow (a daytime zone: hours away), not when a grant ends.
            let retry = again.headers.first(name: "Retry-After").flatMap(Int.init) ?? 0
            #expect(retry > 5 * 3600, "round \(round): Retry-After \(retry)")
        }
        #expect(try await app.count("SELECT count(*) AS n FROM playback_reservations WHERE child_id = \(bind: child)") == 1)
        let today = try await app.get("/api/v1/children/\(child)/today", token: tablet.access).dataObject
        #expect(today["minutes_used"] as? Int == 1 && today["minutes_left"] as? Int == 0, "\(today)")
        #expect(today["can_play"] as? Bool == false && today["blocked_reason"] as? String == "time_limit_reached", "\(today)")
    }

    @Test("a deleted account's tokens are refused on every route and instance, at once and after the revocation cache refills; a write is a 401, never a 500", .app)
    func deletedAccountStaysOut() async throws {
        try await withTwoApps { a, b in
            let parent = try await a.makeParent()
            // A token from before devices (no `sid`), signed with the app's key.
            let old = try await a.jwt.keys.sign(ParentToken(parent: parent.id, device: nil, child: nil, lifetime: 3600, now: a.now))
            for app in [a, b] {
                #expect(try await app.get("/api/v1/children", token: parent.token).status == .ok)
                #expect(try await app.get("/api/v1/catalog/books", token: old).status == .ok)
            }
            #expect(try await a.send(.DELETE, "/api/v1/me", token: parent.token, json: #"{"password": "\#(Self.password)"}"#).status == .ok)
            for round in 0..<2 {
                for (name, app) in [("a", a), ("b", b)] {
                    for token in [parent.token, old] {
                        let add = try await app.send(.POST, "/api/v1/children", token: token, json: #"{"name": "Zed"}"#)
                        #expect(add.status == .unauthorized, "round \(round), \(name): \(add.status) \(add.body.string)")
                        if round == 1 {
                            #expect(try await app.get("/api/v1/catalog/books", token: token).status == .unauthorized, "\(name)")
                            #expect(try await app.get("/api/v1/children", token: token).status == .unauthorized, "\(name)")
                            #expect(try await app.get("/api/v1/me", token: token).status == .unauthorized, "\(name)")
                        }
                    }
                }
                // The revocation cache of each instance read again, as it is every quarter second.
                for app in [a, b] {
                    try await app.appServices.revokedSessions.read(on: app.eventLoopGroup.next(), window: 3700, sql: app.sql).get()
                }
            }
            #expect(try await a.count("SELECT count(*) AS n FROM children") == 0)
        }
    }

    @Test("Idempotency-Key is looked up after authentication, per credential: a signed-out token gets no stored answer, a child device neither gives nor takes the parent's", .app)
    func idempotencyAfterAuthentication() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let tablet = try await ChildModeTests.pair(app, parent: parent.token, child: parent.children[0])
        func add(_ token: String, key: String, name: String) async throws -> TestingHTTPResponse {
            try await app.send(.POST, "/api/v1/children", token: token, json: #"{"name": "\#(name)"}"#, headers: ["Idempotency-Key": key])
        }
        // A child device's refusal is not the key's answer: the parent's request with the key runs.
        let refused = try await add(tablet.access, key: "k-tablet", name: "Bo")
        #expect(refused.status == .forbidden && Self.code(refused) == "parent_only")
        let parentsOwn = try await add(parent.token, key: "k-tablet", name: "Bo")
        #expect(parentsOwn.status == .created && parentsOwn.headers.first(name: "Idempotent-Replayed") == nil, "\(parentsOwn.status) \(parentsOwn.body.string)")
        // The parent's stored answer is not replayed to the child device with the same key and body.
        let replayed = try await add(parent.token, key: "k-tablet", name: "Bo")
        #expect(replayed.status == .created && replayed.headers.first(name: "Idempotent-Replayed") == "true")
        let tabletAgain = try await add(tablet.access, key: "k-tablet", name: "Bo")
        #expect(tabletAgain.status == .forbidden && Self.code(tabletAgain) == "parent_only" && tabletAgain.headers.first(name: "Idempotent-Replayed") == nil)
        // A signed-out device's token gets a 401, not the answer it once had.
        let signIn = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email": "\#(try await Self.email(app, parent.id))", "password": "\#(Self.password)"}"#)
        let second = try #require(try signIn.json["access_token"] as? String)
        #expect(try await add(second, key: "k-second", name: "Cy").status == .created)
        #expect(try await app.send(.POST, "/api/v1/auth/logout", token: second).status == .noContent)
        let afterLogout = try await add(second, key: "k-second", name: "Cy")
        #expect(afterLogout.status == .unauthorized && afterLogout.headers.first(name: "Idempotent-Replayed") == nil, "\(afterLogout.status)")
        #expect(try await app.count("SELECT count(*) AS n FROM children WHERE added_by = \(bind: parent.id)") == 3)
    }

    @Test("six concurrent refreshes of one refresh token: exactly one gets tokens, the others the clean reuse answer, never a 500", .app)
    func concurrentRefresh() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        for trial in 0..<3 {
            let signIn = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email": "\#(try await Self.email(app, parent.id))", "password": "\#(Self.password)"}"#)
            let refresh = try #require(try signIn.json["refresh_token"] as? String)
            let answers = try await Self.together(6) { _ in
                try await app.send(.POST, "/api/v1/auth/refresh", json: #"{"refresh_token": "\#(refresh)"}"#)
            }
            let statuses = answers.map(\.status.code)
            #expect(statuses.filter { $0 == 200 }.count == 1, "trial \(trial): \(statuses) \(answers.map(\.body.string))")
            #expect(answers.filter { $0.status != .ok }.allSatisfy { $0.status == .badRequest && Self.code($0) == "invalid_token" }, "trial \(trial): \(statuses)")
        }
    }

    static func email(_ app: Application, _ parent: Int) async throws -> String {
        try await app.sql.raw("SELECT email FROM parents WHERE id = \(bind: parent)").first()!.decode(column: "email", as: String.self)
    }

    /// Runs `count` copies of `work`, each waiting until all have started, then released together.
    static func together<T: Sendable>(_ count: Int, _ work: @escaping @Sendable (Int) async throws -> T) async throws -> [T] {
        let barrier = Barrier(count: count)
        return try await withThrowingTaskGroup(of: T.self) { group in
            for n in 0..<count { group.addTask { await barrier.arrive(); return try await work(n) } }
            return try await group.reduce(into: [T]()) { $0.append($1) }
        }
    }

    actor Barrier {
        let count: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []
        init(count: Int) { self.count = count }

        func arrive() async {
            if waiting.count + 1 >= count {
                waiting.forEach { $0.resume() }
                waiting = []
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }
    }
}
