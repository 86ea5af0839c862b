@testable import App
import Core
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Child mode over HTTP, against PostgreSQL: a device paired to one child, what it may and may
/// not do, the parent PIN, asking a parent, schedules and the child's export.
@Suite("Child mode: child devices, the parent gate, requests, schedules, export")
struct ChildModeTests {
    struct Device { let access: String; let refresh: String; let id: Int }

    static func pair(_ app: Application, parent: String, child: Int, name: String = "Ada's tablet") async throws -> Device {
        let response = try await app.send(.POST, "/api/v1/children/\(child)/devices", token: parent, json: #"{"name": "\#(name)"}"#)
        guard response.status == .created else { throw TestFailure("pairing: \(response.status) \(response.body.string)") }
        #expect(response.headers.first(name: .cacheControl) == "no-store")
        let data = try response.dataObject
        let device = try #require(data["device"] as? [String: Any])
        #expect(data["child_id"] as? Int == child && device["child_id"] as? Int == child && device["name"] as? String == name)
        return Device(access: try #require(data["access_token"] as? String), refresh: try #require(data["refresh_token"] as? String),
                      id: try #require(device["id"] as? Int))
    }

    static func code(_ response: TestingHTTPResponse) -> String? { try? response.json["code"] as? String }

    @Test("a child device: browses as its child (a forged child_id ignored), reads its library, today and continue, plays; every parent-only route and every other child is 403 parent_only", .app)
    func childDevice() async throws {
        let app = try app()
        let shelf = try await FamilyControlsTests.shelf(app)
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent(children: ["Ada", "Ben"])
        let (ada, ben) = (parent.children[0], parent.children[1])
        #expect(try await FamilyControlsTests.put(app, ada, #"{"max_age": 5, "blocked_categories": [\#(shelf.category)]}"#, token: parent.token).status == .ok)
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: ada), \(bind: shelf.young)), (\(bind: ben), \(bind: shelf.old))").run()
        let device = try await Self.pair(app, parent: parent.token, child: ada)

        // The catalog is Ada's, engine and SQL alike, whatever child_id says.
        for engine in [true, false] {
            app.settings.catalogEngine = engine
            for path in ["/api/v1/catalog/books?q=bear", "/api/v1/catalog/books?q=bear&child_id=\(ben)", "/api/v1/catalog/books?q=bear&child_id=999999"] {
                let page = try await app.get(path, token: device.access)
                #expect(page.status == .ok, "\(path)")
                #expect(try page.dataArray.compactMap { $0["id"] as? Int }.sorted() == [shelf.young, shelf.byBlockedPublisher, shelf.plain].sorted(), "engine \(engine) \(path)")
            }
            #expect(try await app.get("/api/v1/catalog/books/\(shelf.old)?child_id=\(ben)", token: device.access).status == .notFound)
            #expect(try await app.get("/api/v1/catalog/books/\(shelf.young)", token: device.access).status == .ok)
        }
        // What a child may do.
        #expect(try await app.get("/api/v1/children/\(ada)", token: device.access).dataObject["name"] as? String == "Ada")
        #expect(try await app.get("/api/v1/children/\(ada)/library", token: device.access).dataArray.compactMap { $0["id"] as? Int } == [shelf.young])
        #expect(try await app.get("/api/v1/children/\(ada)/today", token: device.access).status == .ok)
        #expect(try await app.get("/api/v1/children/\(ada)/continue", token: device.access).status == .ok)
        #expect(try await app.send(.POST, "/api/v1/children/\(ada)/library/\(shelf.young)/plays", token: device.access,
                                   json: #"{"position_seconds": 30, "completed": false}"#).status == .created)
        #expect(try await app.get("/api/v1/children/\(ada)/requests", token: device.access).status == .ok)

        // Everything else: the same 403 parent_only, and nothing changes.
        let parentOnly: [(HTTPMethod, String, String?)] = [
            (.GET, "/api/v1/children", nil), (.POST, "/api/v1/children", #"{"name": "Cy"}"#),
            (.PATCH, "/api/v1/children/\(ada)", #"{"name": "Ada Lovelace"}"#), (.DELETE, "/api/v1/children/\(ada)", nil),
            (.GET, "/api/v1/children/\(ada)/controls", nil), (.PUT, "/api/v1/children/\(ada)/controls", #"{"max_age": null}"#),
            (.POST, "/api/v1/children/\(ada)/library", #"{"book_id": \#(shelf.plain)}"#),
            (.DELETE, "/api/v1/children/\(ada)/library/\(shelf.young)", nil),
            (.POST, "/api/v1/children/\(ada)/library/\(shelf.young)/copy", #"{"to_child_id": \#(ben)}"#),
            (.POST, "/api/v1/children/\(ada)/library/\(shelf.young)/move", #"{"to_child_id": \#(ben)}"#),
            (.POST, "/api/v1/children/\(ada)/library/bulk", #"{"book_ids": [\#(shelf.plain)]}"#),
            (.POST, "/api/v1/children/\(ada)/library/categories/calm", "{}"),
            (.GET, "/api/v1/children/\(ada)/history", nil), (.GET, "/api/v1/children/\(ada)/history/export", nil),
            (.DELETE, "/api/v1/children/\(ada)/history?book_id=\(shelf.young)", nil), (.DELETE, "/api/v1/children/\(ada)/history/1", nil),
            (.GET, "/api/v1/children/\(ada)/stats", nil), (.GET, "/api/v1/children/\(ada)/export", nil),
            (.POST, "/api/v1/children/\(ada)/devices", #"{"name": "Another"}"#),
            (.POST, "/api/v1/children/\(ada)/requests/1/approve", nil), (.POST, "/api/v1/children/\(ada)/requests/1/decline", nil),
            (.GET, "/api/v1/me", nil), (.PATCH, "/api/v1/me", #"{"time_zone": "Pacific/Kiritimati"}"#),
            (.GET, "/api/v1/me/devices", nil), (.DELETE, "/api/v1/me/devices", nil), (.DELETE, "/api/v1/me/devices/\(device.id)", nil),
            (.POST, "/api/v1/me/password", #"{"current_password": "correct horse battery", "new_password": "a much longer secret"}"#),
            (.PUT, "/api/v1/me/pin", #"{"pin": "1234", "password": "correct horse battery"}"#),
            (.POST, "/api/v1/me/email", #"{"email": "kid@example.com", "password": "correct horse battery"}"#),
            (.DELETE, "/api/v1/me", #"{"password": "correct horse battery"}"#),
            (.POST, "/api/v1/auth/logout", nil),
            // The sibling, even on routes the child may use for itself; an unknown child the same.
            (.GET, "/api/v1/children/\(ben)", nil), (.GET, "/api/v1/children/\(ben)/library", nil), (.GET, "/api/v1/children/\(ben)/today", nil),
            (.POST, "/api/v1/children/\(ben)/library/\(shelf.old)/plays", #"{"position_seconds": 30, "completed": false}"#),
            (.POST, "/api/v1/children/\(ben)/requests", #"{"book_id": \#(shelf.plain)}"#), (.GET, "/api/v1/children/999999/library", nil),
        ]
        let before = try await app.count("SELECT (SELECT count(*) FROM library_entries) + (SELECT count(*) FROM children) + (SELECT count(*) FROM plays) AS n")
        for (method, path, body) in parentOnly {
            let response = try await app.send(method, path, token: device.access, json: body)
            #expect(response.status == .forbidden && Self.code(response) == "parent_only", "\(method) \(path): \(response.status) \(response.body.string)")
        }
        #expect(try await app.count("SELECT (SELECT count(*) FROM library_entries) + (SELECT count(*) FROM children) + (SELECT count(*) FROM plays) AS n") == before)
        #expect(try await app.count("SELECT count(*) AS n FROM parent_devices WHERE id = \(bind: device.id) AND revoked_at IS NULL") == 1)

        // The parent sees the device among theirs; refreshing keeps it a child device.
        let listed = try await app.get("/api/v1/me/devices", token: parent.token).dataArray
        #expect(listed.first { $0["id"] as? Int == device.id }?["child_id"] as? Int == ada)
        let refreshed = try await app.send(.POST, "/api/v1/auth/refresh", json: #"{"refresh_token": "\#(device.refresh)"}"#)
        #expect(try refreshed.json["child_id"] as? Int == ada)
        let next = try #require(try refreshed.json["access_token"] as? String)
        #expect(Self.code(try await app.get("/api/v1/children", token: next)) == "parent_only")
        #expect(try await app.get("/api/v1/children/\(ada)/library", token: next).status == .ok)
    }

    @Test("signing a child device out — or removing its child — is seen by a second instance within a second")
    func revocation() async throws {
        try await withTwoApps { app, other in
            let parent = try await app.makeParent(children: ["Ada", "Ben"])
            let ada = try await Self.pair(app, parent: parent.token, child: parent.children[0])
            let ben = try await Self.pair(app, parent: parent.token, child: parent.children[1], name: "Ben's tablet")
            // The other instance has verified (and cached) both tokens.
            #expect(try await other.get("/api/v1/children/\(parent.children[0])/library", token: ada.access).status == .ok)
            #expect(try await other.get("/api/v1/children/\(parent.children[1])/library", token: ben.access).status == .ok)
            #expect(try await app.send(.DELETE, "/api/v1/me/devices/\(ada.id)", token: parent.token).status == .noContent)
            let removed = try await app.send(.DELETE, "/api/v1/children/\(parent.children[1])", token: parent.token)
            #expect(try removed.dataObject["devices_signed_out"] as? Int == 1)
            // A second later for the other instance (its sets aged, not waited for).
            try await other.appServices.revokedSessions.age(by: .milliseconds(1100))
            #expect(try await other.get("/api/v1/catalog/books", token: ada.access).status == .unauthorized)
            #expect(try await other.get("/api/v1/catalog/books", token: ben.access).status == .unauthorized)
            #expect(try await app.send(.POST, "/api/v1/auth/refresh", json: #"{"refresh_token": "\#(ben.refresh)"}"#).status == .badRequest)
            #expect(try await app.count("SELECT count(*) AS n FROM parent_devices WHERE id = \(bind: ben.id) AND revoked_at IS NOT NULL AND child_id IS NULL") == 1)
        }
    }

    @Test("the parent gate: PIN set with the password; five wrong PINs lock it 15 minutes (recorded for the parent, concurrent guesses counted one by one); the password still opens it; the gate token is a parent's for five minutes", .app)
    func parentGate() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let device = try await Self.pair(app, parent: parent.token, child: child)
        let unlock = { (json: String) in try await app.send(.POST, "/api/v1/auth/pin", token: device.access, json: json) }
        #expect(Self.code(try await unlock(#"{"pin": "1234"}"#)) == "pin_not_set")
        let wrongPassword = try await app.send(.PUT, "/api/v1/me/pin", token: parent.token, json: #"{"pin": "1234", "password": "nope nope nope"}"#)
        #expect(wrongPassword.status == .forbidden && Self.code(wrongPassword) == "wrong_password")
        for bad in [#""12""#, #""1234567""#, #""12a4""#, "1234"] {
            let refused = try await app.send(.PUT, "/api/v1/me/pin", token: parent.token, json: #"{"pin": \#(bad), "password": "correct horse battery"}"#)
            #expect(try refused.status == .badRequest && (refused.json["field"] as? String) == "pin", "\(bad)")
        }
        #expect(try await app.send(.PUT, "/api/v1/me/pin", token: parent.token, json: #"{"pin": "0428", "password": "correct horse battery"}"#).status == .noContent)

        // The right PIN: a parent token for five minutes, on the same device, without a refresh token.
        let opened = try await unlock(#"{"pin": "0428"}"#)
        #expect(opened.status == .ok && opened.headers.first(name: .cacheControl) == "no-store")
        #expect(try opened.json["expires_in"] as? Int == 300 && opened.json["refresh_token"] == nil && opened.json["device_id"] as? Int == device.id)
        let gate = try #require(try opened.json["access_token"] as? String)
        #expect(try await app.get("/api/v1/children/\(child)/controls", token: gate).status == .ok)
        #expect(try await app.get("/api/v1/children", token: gate).status == .ok)

        // Ten wrong PINs at once: four are told wrong, the fifth locks, the rest are refused unchecked.
        let statuses = try await withThrowingTaskGroup(of: String?.self) { group in
            let token = device.access
            for _ in 0..<10 {
                group.addTask { Self.code(try await app.send(.POST, "/api/v1/auth/pin", token: token, json: #"{"pin": "9999"}"#)) }
            }
            return try await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == "wrong_pin" }.count == 4 && statuses.filter { $0 == "pin_locked" }.count == 6, "\(statuses)")
        let locked = try await unlock(#"{"pin": "0428"}"#)
        #expect(locked.status == .tooManyRequests && Self.code(locked) == "pin_locked")
        #expect((840...900).contains(Int(locked.headers.first(name: "Retry-After") ?? "") ?? 0))
        #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE parent_id = \(bind: parent.id) AND action = 'pin.locked'") == 1)
        // The account password still opens the gate; a wrong one is refused.
        #expect(try await unlock(#"{"password": "correct horse battery"}"#).status == .ok)
        #expect(Self.code(try await unlock(#"{"password": "wrong wrong wrong"}"#)) == "wrong_password")
        // Fifteen minutes later the PIN works again.
        try await app.sql.raw("UPDATE parents SET pin_locked_until = now() - interval '1 second' WHERE id = \(bind: parent.id)").run()
        #expect(try await unlock(#"{"pin": "0428"}"#).status == .ok)
        #expect(Self.code(try await unlock(#"{"pin": "1111"}"#)) == "wrong_pin")
    }

    @Test("ask a parent: ask (again: no change), at most 20 pending, hidden books 404; approve puts it in the library (playable, and in an approved-only catalog); decline; a decision is final", .app)
    func requests() async throws {
        let app = try app()
        let shelf = try await FamilyControlsTests.shelf(app)
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent()
        let child = parent.children[0]
        #expect(try await FamilyControlsTests.put(app, child, #"{"approved_only": true, "max_age": 6}"#, token: parent.token).status == .ok)
        let device = try await Self.pair(app, parent: parent.token, child: child)
        let ask = { (book: Int) in try await app.send(.POST, "/api/v1/children/\(child)/requests", token: device.access, json: #"{"book_id": \#(book)}"#) }
        #expect(try await app.get("/api/v1/catalog/books", token: device.access).dataArray.isEmpty)

        let asked = try await ask(shelf.plain)
        #expect(try asked.status == .created && (try asked.dataObject["status"] as? String) == "pending")
        let request = try #require(try asked.dataObject["id"] as? Int)
        #expect(((try asked.dataObject["book"] as? [String: Any])?["title"] as? String) == "Plain Bear")
        let again = try await ask(shelf.plain)
        #expect(try again.status == .ok && (try again.dataObject["id"] as? Int) == request)
        #expect(try await ask(shelf.old).status == .notFound)   // too old for the child: not in its catalog
        #expect(try await ask(999_999).status == .notFound)
        let listed = try await app.get("/api/v1/children/\(child)/requests", token: parent.token)
        #expect(try listed.dataArray.compactMap { $0["id"] as? Int } == [request])

        // Approve: in the library, in the approved-only catalog, playable by the device.
        let approved = try await app.send(.POST, "/api/v1/children/\(child)/requests/\(request)/approve", token: parent.token)
        #expect(approved.status == .ok, "\(approved.body.string)")
        #expect(((try approved.dataObject["request"] as? [String: Any])?["status"] as? String) == "approved")
        #expect(try await app.get("/api/v1/children/\(child)/library", token: device.access).dataArray.compactMap { $0["id"] as? Int } == [shelf.plain])
        #expect(try await app.get("/api/v1/catalog/books", token: device.access).dataArray.compactMap { $0["id"] as? Int } == [shelf.plain])
        #expect(try await app.send(.POST, "/api/v1/children/\(child)/library/\(shelf.plain)/plays", token: device.access,
                                   json: #"{"position_seconds": 12, "completed": true}"#).status == .created)
        let twice = try await app.send(.POST, "/api/v1/children/\(child)/requests/\(request)/decline", token: parent.token)
        #expect(twice.status == .conflict && Self.code(twice) == "request_decided")
        #expect(Self.code(try await ask(shelf.plain)) == "duplicate")

        // Decline; then the limit of 20 pending.
        let declined = try await app.send(.POST, "/api/v1/children/\(child)/requests/\(try #require(try await ask(shelf.young).dataObject["id"] as? Int))/decline",
                                          token: parent.token)
        #expect(((try declined.dataObject["status"]) as? String) == "declined")
        #expect(try await app.get("/api/v1/children/\(child)/requests?status=all", token: device.access).meta["total_count"] == 2)
        var books: [Int] = []
        for n in 0..<21 { books.append(try await app.makeBook("Extra \(n)", ages: 1...3)) }
        try await app.appServices.catalogEngine.build(on: app.db)
        for book in books.prefix(20) { #expect(try await ask(book).status == .created) }
        let over = try await ask(books[20])
        #expect(over.status == .unprocessableEntity && Self.code(over) == "too_many_requests_pending")
        #expect(try await app.count("SELECT count(*) AS n FROM book_requests WHERE child_id = \(bind: child) AND status = 'pending'") == 20)
        // Another parent cannot see or decide them.
        let other = try await app.makeParent()
        #expect(try await app.send(.POST, "/api/v1/children/\(child)/requests/\(request)/approve", token: other.token).status == .notFound)
        #expect(try await app.get("/api/v1/children/\(child)/requests", token: other.token).status == .notFound)
    }

    @Test("concurrent: the same ask sent eight times at once makes one request; asks racing for the last pending places never pass 20; two approvals at once add the book once", .app)
    func concurrentRequests() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let device = try await Self.pair(app, parent: parent.token, child: child)
        var made: [Int] = []
        for n in 0..<30 { made.append(try await app.makeBook("Race \(n)", ages: 1...3)) }
        let books = made, token = device.access
        let ask = { @Sendable (book: Int) in
            try await app.send(.POST, "/api/v1/children/\(child)/requests", token: token, json: #"{"book_id": \#(book)}"#).status
        }
        let same = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
            for _ in 0..<8 { group.addTask { try await ask(books[0]) } }
            return try await group.reduce(into: [HTTPStatus]()) { $0.append($1) }
        }
        #expect(same.filter { $0 == .created }.count == 1 && same.filter { $0 == .ok }.count == 7, "\(same)")
        #expect(try await app.count("SELECT count(*) AS n FROM book_requests WHERE child_id = \(bind: child)") == 1)
        for book in books[1..<15] { #expect(try await ask(book) == .created) }
        let racing = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
            for book in books[15..<25] { group.addTask { try await ask(book) } }
            return try await group.reduce(into: [HTTPStatus]()) { $0.append($1) }
        }
        #expect(racing.filter { $0 == .created }.count == 5 && racing.filter { $0 == .unprocessableEntity }.count == 5, "\(racing)")
        #expect(try await app.count("SELECT count(*) AS n FROM book_requests WHERE child_id = \(bind: child) AND status = 'pending'") == 20)
        let request = try await app.count("SELECT min(id) AS n FROM book_requests WHERE child_id = \(bind: child)")
        let parentToken = parent.token
        let decisions = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
            for _ in 0..<2 {
                group.addTask { try await app.send(.POST, "/api/v1/children/\(child)/requests/\(request)/approve", token: parentToken).status }
            }
            return try await group.reduce(into: [HTTPStatus]()) { $0.append($1) }
        }
        #expect(decisions.sorted { $0.code < $1.code } == [.ok, .conflict], "\(decisions)")
        #expect(try await app.count("SELECT count(*) AS n FROM library_entries WHERE child_id = \(bind: child)") == 1)
    }

    @Test("schedules: weekday and weekend limits are stored, shown, and today and plays follow today's weekday", .app)
    func schedules() async throws {
        let app = try app()
        let shelf = try await FamilyControlsTests.shelf(app)
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let zone = FamilyControlsTests.daytimeZone()
        #expect(try await app.send(.PATCH, "/api/v1/me", token: parent.token, json: #"{"time_zone": "\#(zone)"}"#).status == .ok)
        let saved = try await FamilyControlsTests.put(app, child, """
            {"daily_minutes": 60, "schedule": {"weekdays": {"daily_minutes": 1}, "weekend": {"daily_minutes": 2, "bedtime": {"start": "22:00", "end": "05:00"}}}}
            """, token: parent.token)
        #expect(saved.status == .ok, "\(saved.body.string)")
        let schedule = try #require(try saved.dataObject["schedule"] as? [String: [String: Any]])
        #expect(Set(schedule.keys) == Set(WeekSchedule.dayNames))
        #expect(schedule["monday"]?["daily_minutes"] as? Int == 1 && schedule["monday"]?["bedtime"] is NSNull)
        #expect((schedule["sunday"]?["bedtime"] as? [String: String]) == ["start": "22:00", "end": "05:00"])
        // One day back to every day's values; a bad key or value names its field.
        let friday = try await FamilyControlsTests.put(app, child, #"{"schedule": {"friday": null}}"#, token: parent.token)
        #expect((try friday.dataObject["schedule"] as? [String: Any])?.keys.contains("friday") == false)
        let badKey = try FamilyControlsTests.problem(try await FamilyControlsTests.put(app, child, #"{"schedule": {"someday": null}}"#, token: parent.token))
        #expect(badKey.status == .badRequest && badKey.field == "schedule.someday")
        let badValue = try FamilyControlsTests.problem(try await FamilyControlsTests.put(app, child, #"{"schedule": {"monday": {"daily_minutes": 0}}}"#, token: parent.token))
        #expect(badValue.field == "schedule.monday.daily_minutes")
        let badTime = try FamilyControlsTests.problem(try await FamilyControlsTests.put(app, child, #"{"schedule": {"monday": {"bedtime": {"start": "25:00", "end": "07:00"}}}}"#, token: parent.token))
        #expect(badTime.field == "schedule.monday.bedtime.start")

        // Today's limit is the weekday's: 1, 2 or (Friday) 60 minutes.
        let clock = FamilyClock(timeZone: zone)!
        let weekday = clock.weekday(ofDayStarting: clock.day(containing: Date()).start)
        let expected = weekday == 4 ? 60 : weekday >= 5 ? 2 : 1
        let device = try await Self.pair(app, parent: parent.token, child: child)
        let today = try await app.get("/api/v1/children/\(child)/today", token: device.access).dataObject
        #expect(today["daily_minutes"] as? Int == expected, "weekday \(weekday): \(today)")
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: child), \(bind: shelf.young))").run()
        let play = { (position: Int) in
            try await app.send(.POST, "/api/v1/children/\(child)/library/\(shelf.young)/plays", token: device.access,
                               json: #"{"position_seconds": \#(position), "completed": false}"#)
        }
        #expect(try await play(expected * 60).status == .created)
        let refused = try await play(expected * 60 + 10)
        #expect(refused.status == .forbidden && Self.code(refused) == "time_limit_reached")
    }

    @Test("the export holds every row of every table with the child's data (held to the schema), and a CSV of plays", .app)
    func export() async throws {
        let app = try app()
        let shelf = try await FamilyControlsTests.shelf(app)
        let parent = try await app.makeParent(children: ["Ada", "Ben"])
        let (ada, ben) = (parent.children[0], parent.children[1])
        #expect(try await FamilyControlsTests.put(app, ada, #"{"max_age": 6, "schedule": {"weekend": {"daily_minutes": 90}}}"#, token: parent.token).status == .ok)
        let device = try await Self.pair(app, parent: parent.token, child: ada)
        for book in [shelf.young, shelf.plain] {
            #expect(try await app.send(.POST, "/api/v1/children/\(ada)/library", token: parent.token, json: #"{"book_id": \#(book)}"#).status == .created)
            #expect(try await app.send(.POST, "/api/v1/children/\(ada)/library/\(book)/plays", token: device.access,
                                       json: #"{"position_seconds": 40, "completed": true}"#).status == .created)
        }
        #expect(try await app.send(.POST, "/api/v1/children/\(ada)/requests", token: device.access, json: #"{"book_id": \#(shelf.byBlockedPublisher)}"#).status == .created)
        #expect(try await app.send(.POST, "/api/v1/children/\(ada)/plays/batch", token: device.access,
                                   json: RetriesTests.batch([("offline-1", shelf.young, 10, 5)])).status == .ok)
        try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: ben), \(bind: shelf.old))").run()
        try await app.sql.raw("""
            INSERT INTO play_month_totals VALUES (\(bind: ada), \(bind: shelf.young), DATE '2023-01-01', 3, 1, 0, 300);
            """).run()
        try await app.sql.raw("INSERT INTO play_day_totals VALUES (\(bind: ada), DATE '2023-01-05', 3, 300)").run()
        try await app.sql.raw("INSERT INTO play_fold_tails VALUES (\(bind: ada), \(bind: shelf.young), now() - interval '3 years', 100, true, true)").run()
        try await app.sql.raw("""
            INSERT INTO playback_reservations (child_id, book_id, grant_id, granted_at, expires_at, seconds)
            VALUES (\(bind: ada), \(bind: shelf.young), gen_random_uuid(), now(), now() + interval '2 minutes', 120)
            """).run()

        let response = try await app.get("/api/v1/children/\(ada)/export", token: parent.token)
        #expect(response.status == .ok && response.headers.first(name: .cacheControl) == "no-store")
        let document = try response.json
        #expect((document["profile"] as? [String: Any])?["name"] as? String == "Ada")
        // Every table with a child_id column is a section, with exactly the child's rows.
        let tables = try await app.sql.raw("""
            SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'child_id' ORDER BY 1
            """).all().map { try $0.decode(column: "table_name", as: String.self) }
        #expect(Set(tables) == Set(ChildExportController.sections.map(\.table)), "\(tables)")
        for section in ChildExportController.sections {
            let rows = try #require(document[section.name] as? [[String: Any]], "\(section.name)")
            let count = try await app.count("SELECT count(*) AS n FROM \(ident: section.table) WHERE child_id = \(bind: ada)")
            #expect(rows.count == count && count > 0, "\(section.name): \(rows.count) exported, \(count) kept")
            #expect(rows.allSatisfy { $0["child_id"] as? Int == ada }, "\(section.name)")
        }
        let csv = try await app.get("/api/v1/children/\(ada)/export?format=csv", token: parent.token)
        #expect(csv.headers.contentType?.subType == "csv" && csv.body.string.split(whereSeparator: \.isNewline).count == 4)
        #expect(try await app.get("/api/v1/children/\(ada)/export", token: (try await app.makeParent()).token).status == .notFound)
    }

    @Test("differential: 200 random catalog queries from a child device equal the parent's with child_id, engine and SQL, while controls change", .app)
    func deviceDifferential() async throws {
        let app = try app()
        let seeder = DemoSeeder(books: 800, reference: Date().addingTimeInterval(-400 * 86400), seedsDirectory: TestDatabase.projectDirectory + "seeds",
                                hashPassword: { try $0.hashedForTests() })
        _ = try await seeder.run(on: app.sql, skipIfNotEmpty: false) { _ in }
        try await app.appServices.catalogEngine.build(on: app.db)
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let device = try await Self.pair(app, parent: parent.token, child: child)
        let (words, slugs, categoryIDs, publishers) = try await CatalogEngineTests.vocabulary(app)
        var random = CatalogEngineTests.Random(state: 20261124)
        var compared = 0
        for round in 0..<10 {
            let controls = #"{"max_age": \#(random.int(2...10)), "blocked_categories": [\#(random.pick(categoryIDs))]}"#
            #expect(try await FamilyControlsTests.put(app, child, controls, token: parent.token).status == .ok)
            for _ in 0..<20 {
                let query = CatalogEngineTests.randomQuery(&random, words: words, slugs: slugs, categoryIDs: categoryIDs, publishers: publishers)
                app.settings.catalogEngine = false
                let sql = try await app.get("/api/v1/catalog/books?child_id=\(child)&" + query, token: parent.token)
                app.settings.catalogEngine = true
                // Twice: the first reads the child's scope, the second answers from the kept one.
                for _ in 0..<2 {
                    let engine = try await app.get("/api/v1/catalog/books?child_id=1&" + query, token: device.access)
                    #expect(try CatalogEngineTests.jsonObject(sql) == CatalogEngineTests.jsonObject(engine), "round \(round) \(controls) \(query)")
                }
                compared += 1
            }
        }
        #expect(compared == 200)
    }
}
