@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// A caregiver (issue 45): sees the children, their libraries, history and today, records plays and
/// gets playback grants; every change a parent makes is the 403 `parent_role_required` (and
/// changes nothing); ask-a-parent requests only once a parent allowed it; their own account,
/// password and devices stay theirs.
@Suite("Family circle: caregivers")
struct FamilyCircleCaregiverTests {
    @Test("a caregiver reads, plays and gets a grant; every change of a parent's is 403 parent_role_required", .app)
    func caregiverReadsAndPlays() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada"])
        let ada = ann.children[0]
        let book = try await app.makeBook("Moon Song")
        let other = try await app.makeBook("Sun Song")
        #expect(try await app.send(.POST, "/api/v1/children/\(ada)/library", token: ann.token, json: #"{"book_id":\#(book)}"#).status == .created)
        #expect(try await app.send(.PUT, "/api/v1/children/\(ada)/controls", token: ann.token, json: #"{"daily_minutes":45}"#).status == .ok)
        let gran = try await Circle.join(app, ann, email: "gran@example.com", role: "caregiver")

        // Reads.
        let family = try await Circle.family(app, gran.token)
        #expect(family["role"] as? String == "caregiver" && (family["invitations"] as? [Any])?.isEmpty == true)
        #expect(try await Circle.members(app, gran.token) == [ann.id: "parent", gran.id: "caregiver"])
        #expect(try await Circle.childIDs(app, gran.token) == [ada])
        for path in ["", "/library", "/history", "/today", "/stats", "/continue", "/requests", "/controls"] {
            let response = try await app.get("/api/v1/children/\(ada)\(path)", token: gran.token)
            #expect(response.status == .ok, "GET \(path): \(response.status) \(response.body.string)")
        }
        #expect(try await app.get("/api/v1/children/\(ada)/library", token: gran.token).dataArray.compactMap { $0["id"] as? Int } == [book])
        // Plays and a grant.
        let play = try await app.send(.POST, "/api/v1/children/\(ada)/library/\(book)/plays", token: gran.token, json: #"{"position_seconds":30,"completed":false}"#)
        #expect(play.status.code < 300, "\(play.status) \(play.body.string)")
        let grant = try await PlaybackGrantTests.grant(app, child: ada, book: book, token: gran.token)
        #expect(grant.status == .created, "\(grant.body.string)")
        #expect(try await app.count("SELECT count(*) AS n FROM plays WHERE child_id = \(bind: ada)") == 1)

        // Changes: each a 403 parent_role_required.
        let refused: [(HTTPMethod, String, String?)] = [
            (.PUT, "/api/v1/children/\(ada)/controls", #"{"daily_minutes":120}"#),
            (.POST, "/api/v1/children/\(ada)/library", #"{"book_id":\#(other)}"#),
            (.DELETE, "/api/v1/children/\(ada)/library/\(book)", nil),
            (.DELETE, "/api/v1/children/\(ada)/history", nil),
            (.POST, "/api/v1/children", #"{"name":"Ben"}"#),
            (.PATCH, "/api/v1/children/\(ada)", #"{"name":"Mine"}"#),
            (.DELETE, "/api/v1/children/\(ada)", nil),
            (.PUT, "/api/v1/me/pin", #"{"pin":"1234","password":"\#(Circle.password)"}"#),
            (.DELETE, "/api/v1/me/pin", #"{"password":"\#(Circle.password)"}"#),
            (.POST, "/api/v1/children/\(ada)/devices", #"{"name":"Ada's tablet"}"#),
            (.GET, "/api/v1/children/\(ada)/export", nil),
            (.POST, "/api/v1/family/invitations", #"{"email":"friend@example.com","role":"caregiver"}"#),
            (.PATCH, "/api/v1/family/members/\(ann.id)", #"{"role":"caregiver"}"#),
            (.PATCH, "/api/v1/family/members/\(gran.id)", #"{"role":"parent"}"#),
            (.PATCH, "/api/v1/family/members/\(gran.id)", #"{"may_answer_requests":true}"#),
            (.DELETE, "/api/v1/family/members/\(ann.id)", nil),
        ]
        for (method, path, json) in refused {
            let response = try await app.send(method, path, token: gran.token, json: json)
            #expect(response.status == .forbidden && Circle.code(response) == "parent_role_required", "\(method) \(path): \(response.status) \(response.body.string)")
        }
        let invitation = try #require(try await Circle.invite(app, ann.token, "friend@example.com", role: "caregiver").dataObject["id"] as? Int)
        let revoke = try await app.send(.DELETE, "/api/v1/family/invitations/\(invitation)", token: gran.token)
        #expect(revoke.status == .forbidden && Circle.code(revoke) == "parent_role_required")
        // Nothing changed, and no mail went out for the caregiver's invitation.
        #expect(try await app.get("/api/v1/children/\(ada)/controls", token: ann.token).dataObject["daily_minutes"] as? Int == 45)
        #expect(try await app.get("/api/v1/children/\(ada)/library", token: ann.token).dataArray.compactMap { $0["id"] as? Int } == [book])
        #expect(try await app.get("/api/v1/children/\(ada)", token: ann.token).dataObject["name"] as? String == "Ada")
        #expect(try await Circle.childIDs(app, ann.token) == [ada])
        #expect(try await Circle.members(app, ann.token) == [ann.id: "parent", gran.id: "caregiver"])
        #expect(try await Circle.mails(app, to: "friend@example.com").count == 1)
        #expect(try await app.count("SELECT count(*) AS n FROM parent_devices WHERE child_id IS NOT NULL") == 0)
        #expect(try await app.count("SELECT count(*) AS n FROM parents WHERE pin_hash IS NOT NULL") == 0)
        #expect(try await app.count("SELECT count(*) AS n FROM plays WHERE child_id = \(bind: ada)") == 1)
        #expect((try await Circle.family(app, ann.token)["invitations"] as? [Any])?.count == 1)
    }

    @Test("a caregiver answers a child's requests only once a parent allowed it, and no longer once the parent takes it back", .app)
    func requestsNeedPermission() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada"])
        let ada = ann.children[0]
        let books = [try await app.makeBook("One"), try await app.makeBook("Two"), try await app.makeBook("Three")]
        let gran = try await Circle.join(app, ann, email: "gran@example.com", role: "caregiver")
        var requests: [Int] = []
        for book in books {
            let asked = try await app.send(.POST, "/api/v1/children/\(ada)/requests", token: ann.token, json: #"{"book_id":\#(book)}"#)
            #expect(asked.status == .created, "\(asked.body.string)")
            requests.append(try #require(try asked.dataObject["id"] as? Int))
        }
        for action in ["approve", "decline"] {
            let response = try await app.send(.POST, "/api/v1/children/\(ada)/requests/\(requests[0])/\(action)", token: gran.token)
            #expect(response.status == .forbidden && Circle.code(response) == "parent_role_required")
        }
        #expect(try await app.get("/api/v1/children/\(ada)/requests", token: gran.token).dataArray.count == 3)

        let allowed = try await app.send(.PATCH, "/api/v1/family/members/\(gran.id)", token: ann.token, json: #"{"may_answer_requests":true}"#)
        #expect(allowed.status == .ok)
        #expect(try allowed.dataObject["may_answer_requests"] as? Bool == true && allowed.dataObject["role"] as? String == "caregiver")
        #expect(try await app.send(.POST, "/api/v1/children/\(ada)/requests/\(requests[0])/approve", token: gran.token).status == .ok)
        #expect(try await app.send(.POST, "/api/v1/children/\(ada)/requests/\(requests[1])/decline", token: gran.token).status == .ok)
        #expect(try await app.get("/api/v1/children/\(ada)/library", token: ann.token).dataArray.compactMap { $0["id"] as? Int } == [books[0]])
        // Allowed to answer is not allowed to change anything else.
        let add = try await app.send(.POST, "/api/v1/children/\(ada)/library", token: gran.token, json: #"{"book_id":\#(books[2])}"#)
        #expect(add.status == .forbidden && Circle.code(add) == "parent_role_required")

        #expect(try await app.send(.PATCH, "/api/v1/family/members/\(gran.id)", token: ann.token, json: #"{"may_answer_requests":false}"#).status == .ok)
        let again = try await app.send(.POST, "/api/v1/children/\(ada)/requests/\(requests[2])/approve", token: gran.token)
        #expect(again.status == .forbidden && Circle.code(again) == "parent_role_required")
        #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE action = 'family.member_update' AND parent_id = \(bind: ann.id)") == 2)
    }

    @Test("a caregiver's own account: /me, the password, their devices and signing out still work", .app)
    func caregiverOwnAccount() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada"])
        let gran = try await Circle.join(app, ann, email: "gran@example.com", role: "caregiver")
        let phone = try await FamilyAccountsTests.signIn(app, "gran@example.com", password: Circle.password, device: "Gran's phone")
        let tablet = try await FamilyAccountsTests.signIn(app, "gran@example.com", password: Circle.password, device: "Gran's tablet")
        #expect(try await app.get("/api/v1/me", token: phone.access).dataObject["email"] as? String == "gran@example.com")
        #expect(try await app.send(.PATCH, "/api/v1/me", token: phone.access, json: #"{"time_zone":"Europe/Paris"}"#).status == .ok)
        // The children's day stays the family's (its parent's zone).
        #expect(try await app.get("/api/v1/children/\(ann.children[0])/controls", token: phone.access).dataObject["time_zone"] as? String == "UTC")
        let names = try await app.get("/api/v1/me/devices", token: phone.access).dataArray.compactMap { $0["name"] as? String }
        #expect(names.contains("Gran's phone") && names.contains("Gran's tablet"))
        #expect(try await app.send(.DELETE, "/api/v1/me/devices/\(tablet.device)", token: phone.access).status == .noContent)
        #expect(try await app.get("/api/v1/children", token: tablet.access).status == .unauthorized)
        // A parent's device is not the caregiver's to sign out, nor the other way round.
        let annDevice = try #require(try await app.get("/api/v1/me/devices", token: ann.token).dataArray.first?["id"] as? Int)
        #expect(try await app.send(.DELETE, "/api/v1/me/devices/\(annDevice)", token: phone.access).status == .notFound)
        #expect(try await app.send(.DELETE, "/api/v1/me/devices/\(phone.device)", token: ann.token).status == .notFound)
        let changed = try await app.send(.POST, "/api/v1/me/password", token: phone.access,
                                         json: #"{"current_password":"\#(Circle.password)","new_password":"a brand new caregiver password"}"#)
        #expect(changed.status == .noContent, "\(changed.body.string)")
        #expect(try await app.get("/api/v1/children", token: phone.access).status == .ok)
        #expect(try await app.get("/api/v1/children", token: gran.token).status == .unauthorized)
        #expect(try await app.send(.POST, "/api/v1/auth/logout", token: phone.access).status == .noContent)
        #expect(try await app.get("/api/v1/children", token: phone.access).status == .unauthorized)
        #expect(try await app.get("/api/v1/children", token: ann.token).status == .ok)
    }
}
