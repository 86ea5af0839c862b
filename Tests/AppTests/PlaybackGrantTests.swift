@testable import App
import Core
import Foundation
import JWT
import SQLKit
import Testing
import Vapor
import VaporTesting

/// `POST /children/:id/library/:book_id/playback`: a signed grant that ends at the earliest of the
/// rights' end, the next bedtime, the minutes left today and six hours; the play's refusals.
@Suite("Playback grants")
struct PlaybackGrantTests {
    static func grant(_ app: Application, child: Int, book: Int, token: String) async throws -> TestingHTTPResponse {
        try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/playback", token: token)
    }

    /// The grant's fields, its token checked under the playback key; the seconds from `asked` (the
    /// app's clock: the tests stop it, so that they are exact however long the request takes) to its expiry.
    static func granted(_ app: Application, child: Int, book: Int, token: String) async throws -> (reason: String, seconds: Double, payload: PlaybackGrant, url: String, expires: Date) {
        let asked = app.now
        let response = try await Self.grant(app, child: child, book: book, token: token)
        guard response.status == .created else { throw TestFailure("grant: \(response.status) \(response.body.string)") }
        #expect(response.headers.first(name: .cacheControl) == "no-store")
        let data = try response.dataObject
        let token = try #require(data["token"] as? String)
        let expiresText = try #require(data["expires_at"] as? String)
        let payload = try await app.playbackKeys.keys.verify(token, as: ClockedGrant.self).grant
        try payload.exp.verifyNotExpired(currentDate: app.now)
        let expires = try #require(Instants.dateTime(expiresText))
        #expect(abs(payload.exp.value.timeIntervalSince(expires)) < 1)
        return (try #require(data["expires_because"] as? String), expires.timeIntervalSince(asked), payload, try #require(data["url"] as? String), expires)
    }

    static func code(_ response: TestingHTTPResponse) -> String? { try? response.json["code"] as? String }

    /// A grant verified as `PlaybackGrant` is (signature, audience) but for its expiry, which
    /// `granted` checks against the app's clock: the tests stop it, and a grant of six minutes from
    /// then may be past its end by the wall clock jwt-kit reads when the machine is slow.
    struct ClockedGrant: JWTPayload {
        let grant: PlaybackGrant
        init(from decoder: any Decoder) throws { grant = try PlaybackGrant(from: decoder) }
        func encode(to encoder: any Encoder) throws { try grant.encode(to: encoder) }
        func verify(using algorithm: some JWTAlgorithm) async throws {
            try grant.aud.verifyIntendedAudience(includes: PlaybackGrant.audience)
        }
    }

    @Test("a grant: signed for the asset, book and child; six hours at most; the rights' end; never a parent token; no grant for another family", .app)
    func grantBasics() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let book = try await app.makeBook("Moon Song")
        let ending = try await app.makeBook("Leaving Soon", rights: .none)
        try await app.sql.raw("INSERT INTO rights_windows (book_id, starts_at, ends_at) VALUES (\(bind: ending), now() - interval '1 day', now() + interval '2 hours')").run()
        for id in [book, ending] {
            try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: child), \(bind: id))").run()
        }
        let asset = try await app.sql.raw("SELECT id FROM video_assets WHERE book_id = \(bind: book)").first()!.decode(column: "id", as: Int.self)
        app.freezeClock()
        let plain = try await Self.granted(app, child: child, book: book, token: parent.token)
        #expect(plain.reason == "max_lifetime" && plain.seconds == 6 * 3600, "\(plain)")
        #expect(plain.payload.sub.value == String(asset) && plain.payload.book == book && plain.payload.child == child)
        #expect(plain.payload.aud.value == [PlaybackGrant.audience])
        #expect(plain.url == "\(app.settings.playbackBaseURL)/\(asset).m3u8")
        // The token is a playback grant only: the parent API refuses it, and another key does not verify it.
        let response = try await Self.grant(app, child: child, book: book, token: parent.token)
        let tokenData = try response.dataObject
        let token = try #require(tokenData["token"] as? String)
        #expect(try await app.get("/api/v1/children/\(child)/library", token: token).status == .unauthorized)
        let other = await PlaybackKeys.make(secret: "another-playback-signing-key-0123456789abcdef")
        await #expect(throws: (any Error).self) { try await other.keys.verify(token, as: PlaybackGrant.self) }
        // Rights that end in two hours end the grant then.
        let leaving = try await Self.granted(app, child: child, book: ending, token: parent.token)
        let rightsEnd = try await app.sql.raw("SELECT ends_at FROM rights_windows WHERE book_id = \(bind: ending)").first()!.decode(column: "ends_at", as: Date.self)
        #expect(leaving.reason == "rights_end" && abs(leaving.expires.timeIntervalSince(rightsEnd)) < 1, "\(leaving) \(rightsEnd)")
        // Not in the library, another parent's child, a book unknown: 404; nothing for a stranger.
        let absent = try await app.makeBook("Not Added")
        #expect(try await Self.grant(app, child: child, book: absent, token: parent.token).status == .notFound)
        let stranger = try await app.makeParent()
        #expect(try await Self.grant(app, child: child, book: book, token: stranger.token).status == .notFound)
        #expect(try await Self.grant(app, child: stranger.children[0], book: book, token: stranger.token).status == .notFound)
        #expect(try await Self.grant(app, child: child, book: 9_999_999, token: parent.token).status == .notFound)
        #expect(try await Self.grant(app, child: child, book: book, token: "not-a-token").status == .unauthorized)
        // The child's own tablet may ask too (it plays the video).
        let device = try await ChildModeTests.pair(app, parent: parent.token, child: child)
        #expect(try await Self.granted(app, child: child, book: book, token: device.access).payload.child == child)
    }

    @Test("expiry follows the controls at once: the next bedtime, the minutes left today; refusals are the play's 403s and 422s", .app)
    func grantLimits() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let zone = FamilyControlsTests.daytimeZone()
        #expect(try await app.send(.PATCH, "/api/v1/me", token: parent.token, json: #"{"time_zone": "\#(zone)"}"#).status == .ok)
        let book = try await app.makeBook("Owl Night")
        let encoding = try await app.makeBook("Still Encoding", video: "processing", duration: nil)
        let expired = try await app.makeBook("Was Licensed")
        for id in [book, encoding, expired] {
            try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: child), \(bind: id))").run()
        }
        let clock = FamilyClock(timeZone: zone)!
        let frozen = app.freezeClock()   // the server's now, for the bedtimes and the minutes left
        let now = clock.calendar.dateComponents([.hour, .minute], from: frozen)
        let minutes = (now.hour ?? 0) * 60 + (now.minute ?? 0)
        // Bedtime in 90 minutes (whole wall-clock minutes: 89–91 minutes from now).
        let start = TimeOfDay(minutes: (minutes + 90) % 1440)!, end = TimeOfDay(minutes: (minutes + 300) % 1440)!
        #expect(try await FamilyControlsTests.put(app, child, #"{"bedtime": {"start": "\#(start.text)", "end": "\#(end.text)"}}"#, token: parent.token).status == .ok)
        let bedtime = try await Self.granted(app, child: child, book: book, token: parent.token)
        let bedtimeStart = clock.bedtime(Bedtime(start: start, end: end)!, around: frozen).start
        #expect(bedtime.reason == "bedtime" && bedtime.expires == bedtimeStart, "\(bedtime) \(bedtimeStart)")
        // 10 minutes a day, 4 used: the grant ends in 6 minutes (before the bedtime).
        #expect(try await FamilyControlsTests.put(app, child, #"{"daily_minutes": 10}"#, token: parent.token).status == .ok)
        #expect(try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/plays", token: parent.token,
                                   json: #"{"position_seconds": 240, "completed": false}"#).status == .created)
        let limited = try await Self.granted(app, child: child, book: book, token: parent.token)
        #expect(limited.reason == "time_limit" && limited.seconds == 360, "\(limited)")
        // The minutes used up: 403 time_limit_reached with Retry-After, like a play.
        #expect(try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/plays", token: parent.token,
                                   json: #"{"position_seconds": 600, "completed": false}"#).status == .created)
        let spent = try await Self.grant(app, child: child, book: book, token: parent.token)
        #expect(spent.status == .forbidden && Self.code(spent) == "time_limit_reached" && spent.headers.first(name: "Retry-After") != nil)
        // Bedtime now: 403 bedtime.
        let nowStart = TimeOfDay(minutes: (minutes + 1440 - 30) % 1440)!
        #expect(try await FamilyControlsTests.put(app, child, #"{"daily_minutes": null, "bedtime": {"start": "\#(nowStart.text)", "end": "\#(end.text)"}}"#, token: parent.token).status == .ok)
        let late = try await Self.grant(app, child: child, book: book, token: parent.token)
        #expect(late.status == .forbidden && Self.code(late) == "bedtime")
        // Blocked by the controls: 403; the asset not ready, the rights over: 422 — each with its code.
        #expect(try await FamilyControlsTests.put(app, child, #"{"bedtime": null, "blocked_books": [\#(book)]}"#, token: parent.token).status == .ok)
        let blocked = try await Self.grant(app, child: child, book: book, token: parent.token)
        #expect(blocked.status == .forbidden && Self.code(blocked) == "blocked_by_controls")
        let notReady = try await Self.grant(app, child: child, book: encoding, token: parent.token)
        #expect(notReady.status == .unprocessableEntity && Self.code(notReady) == "asset_not_ready")
        try await app.sql.raw("UPDATE rights_windows SET starts_at = now() - interval '9 days', ends_at = now() - interval '1 day' WHERE book_id = \(bind: expired)").run()
        let over = try await Self.grant(app, child: child, book: expired, token: parent.token)
        #expect(over.status == .unprocessableEntity && Self.code(over) == "rights_unavailable")
        // Controls lifted: a grant at once again.
        #expect(try await FamilyControlsTests.put(app, child, #"{"blocked_books": []}"#, token: parent.token).status == .ok)
        #expect(try await Self.granted(app, child: child, book: book, token: parent.token).reason == "max_lifetime")
    }

    @Test("expiry picks the earliest limit, ties in a fixed order, whole seconds")
    func expiryRule() throws {
        var controls = ChildControls()
        controls.timeZone = "UTC"
        let now = Date(timeIntervalSince1970: 1_790_000_000.75)
        var (date, reason) = PlaybackController.expiry(now: now, availableUntil: nil, controls: controls, usedToday: nil)
        #expect(reason == "max_lifetime" && date.timeIntervalSince1970 == (now.timeIntervalSince1970 + 6 * 3600).rounded(.down))
        (date, reason) = PlaybackController.expiry(now: now, availableUntil: now.addingTimeInterval(6 * 3600), controls: controls, usedToday: nil)
        #expect(reason == "rights_end")
        (date, reason) = PlaybackController.expiry(now: now, availableUntil: now.addingTimeInterval(60), controls: controls, usedToday: nil)
        #expect(reason == "rights_end" && date.timeIntervalSince1970 == (now.timeIntervalSince1970 + 60).rounded(.down))
    }

    @Test("on a limited day a grant reserves the book's length, not the whole day: the child can start another book, until the minutes are spent", .app)
    func limitedDayGrantsPerBook() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let zone = FamilyControlsTests.daytimeZone()
        #expect(try await app.send(.PATCH, "/api/v1/me", token: parent.token, json: #"{"time_zone": "\#(zone)"}"#).status == .ok)
        #expect(try await FamilyControlsTests.put(app, child, #"{"daily_minutes": 30}"#, token: parent.token).status == .ok)
        var books: [Int] = []
        for title in ["Owl Night", "Bear Day", "Fox Dusk"] {   // 300-second videos (the fixture's)
            let book = try await app.makeBook(title)
            try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: child), \(bind: book))").run()
            books.append(book)
        }
        // 30 minutes: each grant reserves its 5-minute book and lives 15 minutes (pauses) while more than
        // that is left; then the minutes left end it. Six grants spend the day, whichever books.
        var reasons: [String] = []
        app.freezeClock()
        for index in 0..<6 {
            let granted = try await Self.granted(app, child: child, book: books[index % 3], token: parent.token)
            if index == 0 { #expect(granted.seconds == 900, "\(granted.seconds)") }
            reasons.append(granted.reason)
        }
        #expect(reasons == ["book_length", "book_length", "book_length", "time_limit", "time_limit", "time_limit"], "\(reasons)")
        #expect(try await app.count("SELECT sum(seconds) AS n FROM playback_reservations WHERE child_id = \(bind: child)") == 1800)
        let refused = try await Self.grant(app, child: child, book: books[0], token: parent.token)
        #expect(try refused.status == .forbidden && refused.json["code"] as? String == "time_limit_reached")
    }
}
