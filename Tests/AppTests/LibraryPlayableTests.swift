@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// `playable` on the parent API's library entries: what a playback grant would answer for the book,
/// with the grant's own refusal code (`Playability`).
@Suite("Library entries: playable")
struct LibraryPlayableTests {
    /// Each entry's `playable` object of the child's library, by book id.
    static func playable(_ app: Application, child: Int, token: String) async throws -> [Int: [String: Any]] {
        let response = try await app.get("/api/v1/children/\(child)/library?per_page=100", token: token)
        #expect(response.status == .ok)
        var found: [Int: [String: Any]] = [:]
        for entry in try response.dataArray {
            let id = try #require(entry["id"] as? Int)
            found[id] = try #require(entry["playable"] as? [String: Any], "\(entry)")
        }
        return found
    }

    static func reason(_ playable: [String: Any]?) -> String? { playable?["reason"] as? String }

    @Test("each entry says whether a grant would be given, with the grant's refusal code; the grant agrees entry by entry", .app)
    func playableMatchesTheGrant() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let ready = try await app.makeBook("Owl Night")
        let encoding = try await app.makeBook("Still Encoding", video: "processing", duration: nil)
        let noVideo = try await app.makeBook("No Video Yet", video: nil)
        let expired = try await app.makeBook("Was Licensed", rights: .expired)
        let upcoming = try await app.makeBook("Coming Soon", rights: .upcoming)
        for id in [ready, encoding, noVideo, expired, upcoming] {
            try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: child), \(bind: id))").run()
        }
        let entries = try await Self.playable(app, child: child, token: parent.token)
        #expect(entries.count == 5)
        // Playable: ok, and the reason is there as an explicit null.
        #expect(entries[ready]?["ok"] as? Bool == true && entries[ready]?["reason"] is NSNull, "\(String(describing: entries[ready]))")
        #expect(entries[encoding]?["ok"] as? Bool == false && Self.reason(entries[encoding]) == "asset_not_ready")
        #expect(Self.reason(entries[noVideo]) == "asset_not_ready")
        #expect(entries[expired]?["ok"] as? Bool == false && Self.reason(entries[expired]) == "rights_unavailable")
        #expect(Self.reason(entries[upcoming]) == "rights_unavailable")
        // The grant's answer for every entry: given when playable, else refused with that code.
        for (book, playable) in entries {
            let grant = try await PlaybackGrantTests.grant(app, child: child, book: book, token: parent.token)
            if playable["ok"] as? Bool == true {
                #expect(grant.status == .created, "\(book): \(grant.body.string)")
            } else {
                #expect(grant.status == .unprocessableEntity && PlaybackGrantTests.code(grant) == Self.reason(playable), "\(book): \(grant.body.string)")
            }
        }
        // The video becomes ready (a catalog change): the next page says so.
        try await app.sql.raw("UPDATE video_assets SET status = 'ready', duration_seconds = 200 WHERE book_id = \(bind: encoding)").run()
        let encoded = try await Self.playable(app, child: child, token: parent.token)
        #expect(encoded[encoding]?["ok"] as? Bool == true)
        // A book added through the API says it in its 201 too.
        let later = try await app.makeBook("Added Later", video: "processing", duration: nil)
        let added = try await app.send(.POST, "/api/v1/children/\(child)/library", token: parent.token, json: #"{"book_id": \#(later)}"#)
        #expect(added.status == .created)
        let addedPlayable = try added.dataObject["playable"] as? [String: Any]
        #expect(addedPlayable?["ok"] as? Bool == false && Self.reason(addedPlayable) == "asset_not_ready")
    }

    @Test("the controls: a blocked book says blocked_by_controls at once (a kept page is not served), before any other reason, and the grant refuses with it", .app)
    func blockedByControls() async throws {
        let app = try app()
        let parent = try await app.makeParent()
        let child = parent.children[0]
        let book = try await app.makeBook("Owl Night")
        let encoding = try await app.makeBook("Still Encoding", video: "processing", duration: nil)
        for id in [book, encoding] {
            try await app.sql.raw("INSERT INTO library_entries (child_id, book_id) VALUES (\(bind: child), \(bind: id))").run()
        }
        #expect(try await Self.playable(app, child: child, token: parent.token)[book]?["ok"] as? Bool == true)
        #expect(try await FamilyControlsTests.put(app, child, #"{"blocked_books": [\#(book), \#(encoding)]}"#, token: parent.token).status == .ok)
        let blocked = try await Self.playable(app, child: child, token: parent.token)
        #expect(blocked[book]?["ok"] as? Bool == false && Self.reason(blocked[book]) == "blocked_by_controls")
        // The first reason in the grant's order: blocked before a video that is not ready.
        #expect(Self.reason(blocked[encoding]) == "blocked_by_controls")
        let grant = try await PlaybackGrantTests.grant(app, child: child, book: book, token: parent.token)
        #expect(grant.status == .forbidden && PlaybackGrantTests.code(grant) == "blocked_by_controls")
        // Lifted: playable again, at once.
        #expect(try await FamilyControlsTests.put(app, child, #"{"blocked_books": []}"#, token: parent.token).status == .ok)
        let lifted = try await Self.playable(app, child: child, token: parent.token)
        #expect(lifted[book]?["ok"] as? Bool == true && Self.reason(lifted[encoding]) == "asset_not_ready")
    }

    @Test("one rule, in the grant's order; `reason` is written as null when playable")
    func rule() throws {
        func refusal(_ blocked: Bool, _ available: Bool, _ status: String?) -> String? {
            Playability.refusal(.init(playableBlocked: blocked, playableAvailable: available, playableAssetStatus: status))?.rawValue
        }
        #expect(refusal(true, false, nil) == "blocked_by_controls")
        #expect(refusal(false, false, "processing") == "rights_unavailable")
        #expect(refusal(false, true, "failed") == "asset_not_ready")
        #expect(refusal(false, true, nil) == "asset_not_ready")
        #expect(refusal(false, true, "ready") == nil)
        let ok = Playability(.init(playableBlocked: false, playableAvailable: true, playableAssetStatus: "ready"))
        let text = String(decoding: try JSONEncoder().encode(ok), as: UTF8.self)
        #expect(text.contains(#""reason":null"#) && text.contains(#""ok":true"#), "\(text)")
    }
}
