@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// The rules that stay true (issue 45): a family keeps a parent; removal ends access at once on
/// every instance; deleting an account removes the children only with the family's last parent
/// (the receipt says which); another family's members are unknown.
@Suite("Family circle: rules")
struct FamilyCircleRulesTests {
    @Test("the last parent cannot leave or be demoted (409 last_parent); the only member has nothing to leave; roles change and come back", .app)
    func lastParent() async throws {
        let app = try app()
        let solo = try await app.makeParent(children: ["Kim"])
        let only = try await app.send(.POST, "/api/v1/family/leave", token: solo.token)
        #expect(only.status == .conflict && Circle.code(only) == "only_member")
        let selfDemote = try await app.send(.PATCH, "/api/v1/family/members/\(solo.id)", token: solo.token, json: #"{"role":"caregiver"}"#)
        #expect(selfDemote.status == .conflict && Circle.code(selfDemote) == "last_parent")

        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada"])
        let gran = try await Circle.join(app, ann, role: "caregiver")
        let leave = try await app.send(.POST, "/api/v1/family/leave", token: ann.token)
        #expect(leave.status == .conflict && Circle.code(leave) == "last_parent")
        let demote = try await app.send(.PATCH, "/api/v1/family/members/\(ann.id)", token: ann.token, json: #"{"role":"caregiver"}"#)
        #expect(demote.status == .conflict && Circle.code(demote) == "last_parent")
        let removeSelf = try await app.send(.DELETE, "/api/v1/family/members/\(ann.id)", token: ann.token)
        #expect(removeSelf.status == .conflict && Circle.code(removeSelf) == "last_parent")
        let badRole = try await app.send(.PATCH, "/api/v1/family/members/\(gran.id)", token: ann.token, json: #"{"role":"owner"}"#)
        #expect(badRole.status.code == 400 || badRole.status.code == 422)
        #expect(try await app.send(.PATCH, "/api/v1/family/members/\(gran.id)", token: ann.token, json: "{}").status.code == 400)
        // The caregiver made a parent: now Ann may step down, and Gran may not.
        #expect(try await app.send(.PATCH, "/api/v1/family/members/\(gran.id)", token: ann.token, json: #"{"role":"parent"}"#).status == .ok)
        #expect(try await app.send(.PATCH, "/api/v1/family/members/\(ann.id)", token: ann.token, json: #"{"role":"caregiver"}"#).status == .ok)
        #expect(try await Circle.members(app, gran.token) == [ann.id: "caregiver", gran.id: "parent"])
        let last = try await app.send(.PATCH, "/api/v1/family/members/\(gran.id)", token: gran.token, json: #"{"role":"caregiver"}"#)
        #expect(last.status == .conflict && Circle.code(last) == "last_parent")
        // The organizer (the parent of longest standing) is now Gran: the children's day follows her zone.
        #expect(try await app.send(.PATCH, "/api/v1/me", token: gran.token, json: #"{"time_zone":"Asia/Tokyo"}"#).status == .ok)
        #expect(try await app.get("/api/v1/children/\(ann.children[0])/controls", token: gran.token).dataObject["time_zone"] as? String == "Asia/Tokyo")
        // A caregiver leaves for a family of their own.
        let left = try await app.send(.POST, "/api/v1/family/leave", token: ann.token)
        #expect(left.status == .ok)
        #expect(try left.dataObject["role"] as? String == "parent" && (left.dataObject["children"] as? [Any])?.isEmpty == true)
        #expect(try await Circle.members(app, ann.token) == [ann.id: "parent"])
        #expect(try await app.get("/api/v1/children/\(ann.children[0])", token: ann.token).status == .notFound)
        #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE action = 'family.leave' AND parent_id = \(bind: ann.id)") == 1)
        try await Circle.expectInvariants(app)
    }

    @Test("removing a member ends their access to the children at once, on a second instance too; their account stays, in a family of its own")
    func removalOnEveryInstance() async throws {
        try await withTwoApps { app, other in
            let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada"])
            let ada = ann.children[0]
            let bo = try await Circle.join(app, ann, email: "bo@example.com", role: "parent")
            let gran = try await Circle.join(app, ann, email: "gran@example.com", role: "caregiver")
            // Bo pairs Ada's tablet; both adults read Ada's library on the other instance.
            let paired = try await app.send(.POST, "/api/v1/children/\(ada)/devices", token: bo.token, json: #"{"name":"Ada's tablet"}"#)
            #expect(paired.status == .created)
            let tablet = try #require(try paired.dataObject["access_token"] as? String)
            for token in [bo.token, gran.token, tablet] {
                #expect(try await other.get("/api/v1/children/\(ada)/library", token: token).status == .ok)
            }
            #expect(try await app.send(.DELETE, "/api/v1/family/members/\(gran.id)", token: ann.token).status == .noContent)
            #expect(try await app.send(.DELETE, "/api/v1/family/members/\(bo.id)", token: ann.token).status == .noContent)
            // At once, on the instance that did not remove them: the children are unknown.
            for token in [bo.token, gran.token] {
                let gone = try await other.get("/api/v1/children/\(ada)/library", token: token)
                #expect(gone.status == .notFound, "\(gone.status) \(gone.body.string)")
                #expect(try await other.send(.POST, "/api/v1/children/\(ada)/library/1/playback", token: token).status == .notFound)
                #expect(try await other.get("/api/v1/children", token: token).dataArray.isEmpty)
                // Still signed in, in a family of their own.
                #expect(try await other.get("/api/v1/me", token: token).status == .ok)
                let own = try await Circle.family(other, token)
                #expect((own["members"] as? [Any])?.count == 1 && own["role"] as? String == "parent")
            }
            // The child device Bo paired for Ada is signed out with him.
            #expect(try await other.get("/api/v1/children/\(ada)/library", token: tablet).status == .unauthorized)
            #expect(try await Circle.members(app, ann.token) == [ann.id: "parent"])
            #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE action = 'family.member_remove'") == 2)
            // Removing again, or a stranger, is a 404.
            #expect(try await app.send(.DELETE, "/api/v1/family/members/\(bo.id)", token: ann.token).status == .notFound)
            #expect(try await app.send(.PATCH, "/api/v1/family/members/\(bo.id)", token: ann.token, json: #"{"role":"parent"}"#).status == .notFound)
            #expect(try await app.send(.DELETE, "/api/v1/family/members/999999", token: ann.token).status == .notFound)
            #expect(try await app.send(.DELETE, "/api/v1/family/members/\(ann.id)", token: bo.token).status == .notFound)
            try await Circle.expectInvariants(app)
        }
    }

    @Test("deleting a parent's account keeps the children while another parent remains; the last parent's takes them, and the caregivers found families", .app)
    func accountDeletion() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada", "Ben"])
        let book = try await app.makeBook("The Moon")
        #expect(try await app.send(.POST, "/api/v1/children/\(ann.children[0])/library", token: ann.token, json: #"{"book_id":\#(book)}"#).status == .created)
        let bo = try await Circle.join(app, ann, email: "bo@example.com", role: "parent")
        let gran = try await Circle.join(app, ann, email: "gran@example.com", role: "caregiver")
        let family = try #require(try await Circle.familyID(app, of: ann.id))

        let first = try await app.send(.DELETE, "/api/v1/me", token: ann.token, json: #"{"password":"\#(Circle.password)"}"#)
        #expect(first.status == .ok)
        let kept = try first.dataObject
        #expect(kept["family_removed"] as? Bool == false && kept["children"] as? Int == 0 && kept["library_entries"] as? Int == 0)
        #expect(try await Circle.childIDs(app, bo.token) == ann.children)
        #expect(try await Circle.childIDs(app, gran.token) == ann.children)
        #expect(try await Circle.members(app, bo.token) == [bo.id: "parent", gran.id: "caregiver"])
        // The children stay, their adder forgotten.
        #expect(try await app.count("SELECT count(*) AS n FROM children WHERE family_id = \(bind: family) AND added_by IS NULL") == 2)

        let second = try await app.send(.DELETE, "/api/v1/me", token: bo.token, json: #"{"password":"\#(Circle.password)"}"#)
        #expect(second.status == .ok)
        let removed = try second.dataObject
        #expect(removed["family_removed"] as? Bool == true && removed["children"] as? Int == 2 && removed["library_entries"] as? Int == 1)
        #expect(try await app.count("SELECT count(*) AS n FROM children WHERE id = ANY(\(bind: ann.children))") == 0)
        #expect(try await app.count("SELECT count(*) AS n FROM families WHERE id = \(bind: family)") == 0)
        // The caregiver is the parent of a family of their own, empty.
        let own = try await Circle.family(app, gran.token)
        #expect(own["role"] as? String == "parent" && (own["children"] as? [Any])?.isEmpty == true)
        #expect(try await app.get("/api/v1/children/\(ann.children[0])", token: gran.token).status == .notFound)
        // A caregiver deleting their account takes no child.
        let carol = try await app.makeParent(email: "carol@example.com", password: Circle.password, children: ["Cy"])
        let sitter = try await Circle.join(app, carol, email: "sitter@example.com", role: "caregiver")
        let sitterGone = try await app.send(.DELETE, "/api/v1/me", token: sitter.token, json: #"{"password":"\#(Circle.password)"}"#)
        #expect(try sitterGone.dataObject["family_removed"] as? Bool == false && sitterGone.dataObject["children"] as? Int == 0)
        #expect(try await Circle.childIDs(app, carol.token) == carol.children)
        #expect(try await Circle.members(app, carol.token) == [carol.id: "parent"])
        try await Circle.expectInvariants(app)
    }

    @Test("another family's member or invitation is a 404, whatever the caller's role", .app)
    func strangers() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password)
        let zoe = try await app.makeParent(email: "zoe@example.com", password: Circle.password)
        let zed = try await Circle.join(app, zoe, email: "zed@example.com", role: "caregiver")
        let invitation = try #require(try await Circle.invite(app, zoe.token, "x@example.com").dataObject["id"] as? Int)
        for (method, path, json) in [(HTTPMethod.PATCH, "/api/v1/family/members/\(zed.id)", #"{"role":"parent"}"#),
                                     (.PATCH, "/api/v1/family/members/\(zoe.id)", #"{"may_answer_requests":true}"#),
                                     (.DELETE, "/api/v1/family/members/\(zed.id)", nil),
                                     (.DELETE, "/api/v1/family/members/\(zoe.id)", nil),
                                     (.DELETE, "/api/v1/family/invitations/\(invitation)", nil)] as [(HTTPMethod, String, String?)] {
            let response = try await app.send(method, path, token: ann.token, json: json)
            #expect(response.status == .notFound, "\(method) \(path): \(response.status)")
        }
        #expect(try await Circle.members(app, zoe.token) == [zoe.id: "parent", zed.id: "caregiver"])
        #expect((try await Circle.family(app, zoe.token)["invitations"] as? [Any])?.count == 1)
        #expect(try await app.send(.DELETE, "/api/v1/family/members/abc", token: ann.token).status == .notFound)
    }
}
