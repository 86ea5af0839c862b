@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Families on their own: devices with rotating refresh tokens, signing out, the password, and
/// children managed from the app — over HTTP, against PostgreSQL.
@Suite("Family accounts: devices and children")
struct FamilyAccountsTests {
    struct Pair { let access: String; let refresh: String; let device: Int }

    static func signIn(_ app: Application, _ email: String, password: String = "correct horse battery", device: String? = nil) async throws -> Pair {
        let name = device.map { #","device_name":"\#($0)""# } ?? ""
        let response = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"\#(email)","password":"\#(password)"\#(name)}"#)
        guard response.status == .ok else { throw TestFailure("sign-in: \(response.status) \(response.body.string)") }
        #expect(response.headers.first(name: .cacheControl) == "no-store")
        return try pair(response)
    }

    static func pair(_ response: TestingHTTPResponse) throws -> Pair {
        let json = try response.json
        return Pair(access: try #require(json["access_token"] as? String), refresh: try #require(json["refresh_token"] as? String),
                    device: try #require(json["device_id"] as? Int))
    }

    static func refresh(_ app: Application, _ token: String) async throws -> TestingHTTPResponse {
        try await app.send(.POST, "/api/v1/auth/refresh", json: #"{"refresh_token":"\#(token)"}"#)
    }

    @Test("refresh rotates; a refresh token used twice signs its device out; tokens stay valid on another instance")
    func rotation() async throws {
        try await withTwoApps { app, other in
            _ = try await app.makeParent(email: "ann@example.com")
            let first = try await Self.signIn(app, "ann@example.com", device: "Ann's phone")
            let rotated = try await Self.refresh(other, first.refresh)
            #expect(rotated.status == .ok && rotated.headers.first(name: .cacheControl) == "no-store")
            let second = try Self.pair(rotated)
            #expect(second.device == first.device && second.refresh != first.refresh)
            #expect(try await app.get("/api/v1/children", token: second.access).status == .ok)
            // The stolen copy of the first token is presented again: the device is signed out.
            let reused = try await Self.refresh(app, first.refresh)
            #expect(try reused.status == .badRequest && (reused.json["code"] as? String) == "invalid_token")
            let refused = try await app.get("/api/v1/children", token: second.access)
            #expect(try refused.status == .unauthorized && (refused.json["code"] as? String) == "invalid_token")
            #expect(refused.headers.first(name: .wwwAuthenticate)?.contains(#"error="invalid_token""#) == true)
            #expect(try await Self.refresh(app, second.refresh).status == .badRequest)
            // Unknown tokens are the same 400, and sign nothing out.
            let third = try await Self.signIn(app, "ann@example.com")
            let unknown = try await Self.refresh(app, "not-a-token")
            #expect(unknown.status == .badRequest && unknown.body.string == reused.body.string)
            #expect(try await app.get("/api/v1/children", token: third.access).status == .ok)
        }
    }

    @Test("two concurrent refreshes of one token: one rotates, the other is a reuse (and the device is signed out)", .app)
    func concurrentRefresh() async throws {
        let app = try app()
        _ = try await app.makeParent(email: "bo@example.com")
        let pair = try await Self.signIn(app, "bo@example.com")
        async let a = Self.refresh(app, pair.refresh)
        async let b = Self.refresh(app, pair.refresh)
        let statuses = try await [a.status, b.status]
        #expect(statuses.filter { $0 == .ok }.count == 1 && statuses.filter { $0 == .badRequest }.count == 1, "\(statuses)")
        #expect(try await app.count("SELECT count(*) AS n FROM parent_devices WHERE id = \(bind: pair.device) AND revoked_at IS NULL") == 0)
        #expect(try await app.get("/api/v1/children", token: pair.access).status == .unauthorized)
    }

    @Test("devices are listed; signing one out is seen by a second instance within a second; logout; sign every device out")
    func devices() async throws {
        try await withTwoApps { app, other in
            _ = try await app.makeParent(email: "cy@example.com")
            let phone = try await Self.signIn(app, "cy@example.com", device: "Phone")
            let tablet = try await Self.signIn(app, "cy@example.com", device: "Kitchen tablet")
            let listed = try await app.get("/api/v1/me/devices", token: phone.access).dataArray
            let names = listed.compactMap { $0["name"] as? String }
            #expect(names.contains("Phone") && names.contains("Kitchen tablet") && names.contains("Unnamed device"))
            #expect(listed.filter { $0["current"] as? Bool == true }.compactMap { $0["id"] as? Int } == [phone.device])
            // The other instance has verified (and cached) the tablet's token.
            #expect(try await other.get("/api/v1/children", token: tablet.access).status == .ok)
            #expect(try await app.send(.DELETE, "/api/v1/me/devices/\(tablet.device)", token: phone.access).status == .noContent)
            #expect(try await app.get("/api/v1/children", token: tablet.access).status == .unauthorized)
            try await other.appServices.revokedSessions.age(by: .seconds(1))   // (a second later, without waiting one)
            #expect(try await other.get("/api/v1/children", token: tablet.access).status == .unauthorized)
            #expect(try await Self.refresh(other, tablet.refresh).status == .badRequest)
            #expect(try await app.send(.DELETE, "/api/v1/me/devices/\(tablet.device)", token: phone.access).status == .notFound)
            // Another parent's device is unknown.
            let stranger = try await app.makeParent()
            #expect(try await app.send(.DELETE, "/api/v1/me/devices/\(phone.device)", token: stranger.token).status == .notFound)
            #expect(try await app.get("/api/v1/children", token: phone.access).status == .ok)
            // Logout ends this device only; signing all out ends the rest.
            let laptop = try await Self.signIn(app, "cy@example.com", device: "Laptop")
            #expect(try await app.send(.POST, "/api/v1/auth/logout", token: laptop.access).status == .noContent)
            #expect(try await app.get("/api/v1/children", token: laptop.access).status == .unauthorized)
            #expect(try await app.get("/api/v1/children", token: phone.access).status == .ok)
            #expect(try await app.send(.DELETE, "/api/v1/me/devices", token: phone.access).status == .noContent)
            #expect(try await app.get("/api/v1/children", token: phone.access).status == .unauthorized)
            try await other.appServices.revokedSessions.age(by: .seconds(1))   // (a second later, without waiting one)
            #expect(try await other.get("/api/v1/children", token: phone.access).status == .unauthorized)
            #expect(try await app.count("SELECT count(*) AS n FROM refresh_tokens") == 1)   // the stranger's
        }
    }

    @Test("changing the password: weak ones refused, the current one required and throttled; other devices signed out", .app)
    func password() async throws {
        let app = try app()
        _ = try await app.makeParent(email: "di@example.com")
        let here = try await Self.signIn(app, "di@example.com")
        let there = try await Self.signIn(app, "di@example.com")
        func change(_ current: String, _ new: String) async throws -> TestingHTTPResponse {
            try await app.send(.POST, "/api/v1/me/password", token: here.access,
                               json: #"{"current_password":"\#(current)","new_password":"\#(new)"}"#)
        }
        for weak in ["short", "password123", "Qwertyuiop", "1234567890"] {
            let refused = try await change("correct horse battery", weak)
            #expect(try refused.status == .unprocessableEntity && (refused.json["field"] as? String) == "new_password", "\(weak)")
            #expect(try refused.json["code"] as? String == "weak_password")
        }
        let wrong = try await change("not my password", "a much better passphrase")
        #expect(try wrong.status == .forbidden && (wrong.json["field"] as? String) == "current_password")
        let changed = try await change("correct horse battery", "a much better passphrase")
        #expect(changed.status == .noContent)
        #expect(try await app.get("/api/v1/children", token: here.access).status == .ok)
        #expect(try await app.get("/api/v1/children", token: there.access).status == .unauthorized)
        #expect(try await Self.refresh(app, there.refresh).status == .badRequest)
        #expect(try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"di@example.com","password":"correct horse battery"}"#).status == .unauthorized)
        _ = try await Self.signIn(app, "di@example.com", password: "a much better passphrase")
        #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE action = 'account.password'") == 1)
        // The current password is a guess like a sign-in: 5 wrong, then locked even when right.
        for _ in 0..<LoginThrottle.perEmail { #expect(try await change("guess", "another fine passphrase").status == .forbidden) }
        #expect(try await change("a much better passphrase", "another fine passphrase").status == .tooManyRequests)
    }

    @Test("children: add, rename, clear, validate; at most ten even when added concurrently; another parent's child is a 404", .app)
    func children() async throws {
        let app = try app()
        let parent = try await app.makeParent(children: [])
        let added = try await app.send(.POST, "/api/v1/children", token: parent.token, json: #"{"name":"  Ada  ","birth_year":2020,"avatar":"owl"}"#)
        #expect(added.status == .created)
        let ada = try added.dataObject
        #expect(ada["name"] as? String == "Ada" && ada["birth_year"] as? Int == 2020 && ada["avatar"] as? String == "owl" && ada["library_count"] as? Int == 0)
        let id = try #require(ada["id"] as? Int)
        for (body, field) in [(#"{"name":""}"#, "name"), (#"{"name":"Bo","birth_year":1950}"#, "birth_year"), (#"{"name":"Bo","avatar":"dragon"}"#, "avatar"),
                              (#"{"birth_year":2019}"#, "name"), (#"{"name":"a\u0007b"}"#, "name")] {
            let refused = try await app.send(.POST, "/api/v1/children", token: parent.token, json: body)
            #expect(try refused.status == .badRequest && (refused.json["field"] as? String) == field, "\(body)")
        }
        let renamed = try await app.send(.PATCH, "/api/v1/children/\(id)", token: parent.token, json: #"{"name":"Ada L.","avatar":null}"#)
        #expect(renamed.status == .ok)
        #expect(try renamed.dataObject["name"] as? String == "Ada L." && renamed.dataObject["avatar"] is NSNull && renamed.dataObject["birth_year"] as? Int == 2020)
        let stranger = try await app.makeParent()
        #expect(try await app.send(.PATCH, "/api/v1/children/\(id)", token: stranger.token, json: #"{"name":"Mine"}"#).status == .notFound)
        #expect(try await app.send(.DELETE, "/api/v1/children/\(id)", token: stranger.token).status == .notFound)
        #expect(try await app.get("/api/v1/children", token: stranger.token).dataArray.count == 1)
        // Up to 7 one by one, then 6 adds released together (fewer than the pool's connections, so
        // none waits for one): the account ends with exactly 10 children.
        for n in 0..<6 {
            #expect(try await app.send(.POST, "/api/v1/children", token: parent.token, json: #"{"name":"Kid \#(n)"}"#).status == .created)
        }
        let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
            for n in 6..<12 {
                group.addTask { try await app.send(.POST, "/api/v1/children", token: parent.token, json: #"{"name":"Kid \#(n)"}"#).status }
            }
            return try await group.reduce(into: [HTTPStatus]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == .created }.count == 3, "\(statuses.map(\.code))")
        #expect(statuses.filter { $0 == .unprocessableEntity }.count == 3)
        #expect(try await app.get("/api/v1/children", token: parent.token).dataArray.count == ChildrenQueries.limit)
        let over = try await app.send(.POST, "/api/v1/children", token: parent.token, json: #"{"name":"One more"}"#)
        #expect(try over.status == .unprocessableEntity && (over.json["code"] as? String) == "too_many_children")
    }

    @Test("removing a child removes its library, plays, controls and audit rows in one go, with a receipt; nothing answers for it after", .app(engine: true))
    func removeChild() async throws {
        let app = try app()
        let parent = try await app.makeParent(children: ["Ada", "Bo"])
        let (ada, bo) = (parent.children[0], parent.children[1])
        let books = [try await app.makeBook("Owl Moon"), try await app.makeBook("Sea Song")]
        for child in [ada, bo] {
            for book in books {
                #expect(try await app.send(.POST, "/api/v1/children/\(child)/library", token: parent.token, json: #"{"book_id": \#(book)}"#).status == .created)
                #expect(try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/plays", token: parent.token,
                                           json: #"{"position_seconds": 30, "completed": false}"#).status == .created)
            }
            #expect(try await app.send(.PUT, "/api/v1/children/\(child)/controls", token: parent.token, json: #"{"max_age": 8}"#).status == .ok)
        }
        // Answers kept in memory about Ada exist before.
        #expect(try await app.get("/api/v1/children/\(ada)/history", token: parent.token).status == .ok)
        #expect(try await app.get("/api/v1/catalog/books?child_id=\(ada)", token: parent.token).status == .ok)
        let removed = try await app.send(.DELETE, "/api/v1/children/\(ada)", token: parent.token)
        #expect(removed.status == .ok)
        let receipt = try removed.dataObject
        #expect(receipt["child_id"] as? Int == ada && receipt["library_entries"] as? Int == 2 && receipt["plays"] as? Int == 2)
        #expect(receipt["controls"] as? Int == 1 && receipt["audit_entries"] as? Int == 1)
        for table in ["library_entries", "plays", "child_controls", "parent_audit_log"] {
            #expect(try await app.count("SELECT count(*) AS n FROM \(unsafeRaw: table) WHERE child_id = \(bind: ada)") == 0, "\(table)")
            #expect(try await app.count("SELECT count(*) AS n FROM \(unsafeRaw: table) WHERE child_id = \(bind: bo)") > 0, "\(table)")
        }
        #expect(try await app.count("SELECT count(*) AS n FROM children WHERE id = \(bind: ada)") == 0)
        for path in ["/api/v1/children/\(ada)/history", "/api/v1/children/\(ada)/library", "/api/v1/children/\(ada)/today",
                     "/api/v1/catalog/books?child_id=\(ada)", "/api/v1/children/\(ada)/controls"] {
            #expect(try await app.get(path, token: parent.token).status == .notFound, "\(path)")
        }
        #expect(try await app.send(.DELETE, "/api/v1/children/\(ada)", token: parent.token).status == .notFound)
        #expect(try await app.get("/api/v1/children", token: parent.token).dataArray.compactMap { $0["id"] as? Int } == [bo])
        #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE action = 'child.remove' AND parent_id = \(bind: parent.id)") == 1)
    }
}
