@testable import App
import Core
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Invitations by mail (issue 45): the mailed link and its page, signing up to accept, two parents
/// managing the same children; the same answer for any address, the mail budget, single use,
/// expiry, revocation and the checks on who accepts — over HTTP, against PostgreSQL.
@Suite("Family circle: invitations")
struct FamilyCircleInvitationTests {
    @Test("a parent invites by mail; the invitee signs up, verifies and accepts; both parents manage the same children")
    func inviteSignUpAccept() async throws {
        let sink = try await SMTPSink()
        defer { sink.stop() }
        try await withApp(adjust: { $0.smtpURL = sink.url; $0.publicBaseURL = "https://storytime.example" }) { app in
            let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada"])
            let ada = ann.children[0]
            let invited = try await Circle.invite(app, ann.token, "Bo@Example.com", role: "parent")
            #expect(invited.status == .created)
            let invitation = try invited.dataObject
            #expect(invitation["email"] as? String == "Bo@Example.com" && invitation["role"] as? String == "parent")
            #expect(invitation["invited_by"] as? String == "ann@example.com")
            let createdText = try #require(invitation["created_at"] as? String), expiresText = try #require(invitation["expires_at"] as? String)
            let created = try #require(Instants.dateTime(createdText)), expires = try #require(Instants.dateTime(expiresText))
            #expect(abs(expires.timeIntervalSince(created) - 7 * 24 * 3600) < 2)
            #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE action = 'family.invite' AND parent_id = \(bind: ann.id)") == 1)

            // The mail: through the outbox (its bodies blanked once sent), delivered over SMTP with the link.
            #expect(try await app.count("SELECT count(*) AS n FROM mail_outbox WHERE kind = 'family_invitation' AND recipient = 'Bo@Example.com'") == 1)
            let mail = try #require(try await sink.mails(to: "Bo@Example.com").first)
            #expect(mail.subject == "ann@example.com invited you to their family on Storytime")
            let token = try #require(mail.token)
            let link = "https://storytime.example/account/invitation?token=" + token
            #expect(mail.text?.contains(link) == true && mail.html?.contains(#"href="\#(link)""#) == true)
            // The token is kept only as its hash.
            #expect(try await app.count("SELECT count(*) AS n FROM family_invitations WHERE token_hash = \(bind: RefreshSecret.hash(token))") == 1)
            #expect(try await app.count("SELECT count(*) AS n FROM family_invitations WHERE encode(token_hash, 'escape') LIKE '%' || \(bind: token) || '%'") == 0)

            // The page says what it is and uses nothing up, however often it is opened.
            for _ in 0..<2 {
                let page = try await app.get("/account/invitation?token=\(token)")
                #expect(page.status == .ok && page.headers.contentType?.type == "text")
                #expect(page.body.string.contains("ann@example.com invited Bo@Example.com to join their family as a parent"))
            }
            let unknown = try await app.get("/account/invitation?token=not-a-token")
            #expect(unknown.status == .notFound && unknown.body.string.contains("expired, was already used or was withdrawn"))
            #expect(try await app.count("SELECT count(*) AS n FROM family_invitations WHERE accepted_at IS NULL AND revoked_at IS NULL") == 1)

            // Bo has no account yet: signs up (unverified: accepting is refused), verifies, accepts.
            #expect(try await SelfServiceAccountsTests.signUp(app, "bo@example.com", password: Circle.password).status == .accepted)
            let bo = try await FamilyAccountsTests.signIn(app, "bo@example.com", password: Circle.password)
            let early = try await Circle.accept(app, bo.access, invitation: token)
            #expect(early.status == .forbidden && Circle.code(early) == "email_unverified")
            let verify = try #require(try await sink.mails(to: "bo@example.com").first { $0.subject == "Confirm your email for Storytime" }?.token)
            #expect(try await app.send(.POST, "/api/v1/accounts/verify", json: #"{"token":"\#(verify)"}"#).status == .noContent)
            let boID = try #require(try await app.get("/api/v1/me", token: bo.access).dataObject["id"] as? Int)
            let ownFamily = try #require(try await Circle.familyID(app, of: boID))
            let accepted = try await Circle.accept(app, bo.access, invitation: token)
            #expect(accepted.status == .ok)
            let joined = try accepted.dataObject
            #expect(joined["role"] as? String == "parent")
            #expect((joined["children"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [ada])
            // Bo's own empty family is gone; the family lists both, and no pending invitation.
            #expect(try await app.count("SELECT count(*) AS n FROM families WHERE id = \(bind: ownFamily)") == 0)
            #expect(try await Circle.members(app, ann.token) == [ann.id: "parent", boID: "parent"])
            let family = try await Circle.family(app, ann.token)
            #expect((family["invitations"] as? [Any])?.isEmpty == true)
            #expect(family["id"] as? Int == joined["id"] as? Int)
            let member = try #require((family["members"] as? [[String: Any]])?.first { $0["account_id"] as? Int == boID })
            #expect(member["email"] as? String == "bo@example.com" && member["joined_at"] is String)
            #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE action = 'family.join' AND parent_id = \(bind: boID)") == 1)
            // The link is used up: the page and a second accept say so.
            #expect(try await app.get("/account/invitation?token=\(token)").status == .notFound)
            let again = try await Circle.accept(app, bo.access, invitation: token)
            #expect(again.status == .badRequest && Circle.code(again) == "invalid_token")

            // Both parents manage the same children: what one changes, the other sees.
            let book = try await app.makeBook("The Moon")
            #expect(try await app.send(.PUT, "/api/v1/children/\(ada)/controls", token: bo.access, json: #"{"daily_minutes":30}"#).status == .ok)
            #expect(try await app.get("/api/v1/children/\(ada)/controls", token: ann.token).dataObject["daily_minutes"] as? Int == 30)
            #expect(try await app.send(.POST, "/api/v1/children/\(ada)/library", token: bo.access, json: #"{"book_id":\#(book)}"#).status == .created)
            #expect(try await app.get("/api/v1/children/\(ada)/library", token: ann.token).dataArray.compactMap { $0["id"] as? Int } == [book])
            let added = try await app.send(.POST, "/api/v1/children", token: bo.access, json: #"{"name":"Ben"}"#)
            #expect(added.status == .created)
            let ben = try #require(try added.dataObject["id"] as? Int)
            #expect(try await Circle.childIDs(app, ann.token) == [ada, ben])
            #expect(try await app.send(.PATCH, "/api/v1/children/\(ada)", token: ann.token, json: #"{"name":"Ada L."}"#).status == .ok)
            #expect(try await app.get("/api/v1/children/\(ada)", token: bo.access).dataObject["name"] as? String == "Ada L.")
            // The family's log says which member did what.
            let controls = try await app.sql.raw("""
                SELECT parent_id, family_id FROM parent_audit_log WHERE child_id = \(bind: ada) AND action LIKE 'controls%'
                """).all().map { (try $0.decode(column: "parent_id", as: Int.self), try $0.decode(column: "family_id", as: Int.self)) }
            #expect(controls.count == 1 && controls.first?.0 == boID && controls.first?.1 == joined["id"] as? Int)
            try await Circle.expectInvariants(app)
        }
    }

    @Test("the same answer whether or not the address has an account; the address's mail budget; re-inviting ends the older link", .app)
    func sameAnswerAndBudget() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password)
        _ = try await app.makeParent(email: "known@example.com", password: Circle.password)
        let known = try await Circle.invite(app, ann.token, "known@example.com", role: "caregiver")
        let unknown = try await Circle.invite(app, ann.token, "unknown@example.com", role: "caregiver")
        #expect(known.status == .created && unknown.status == .created)
        #expect(known.headers.contentType == unknown.headers.contentType)
        let (a, b) = (try known.dataObject, try unknown.dataObject)
        #expect(Set(a.keys) == Set(b.keys) && Set(a.keys) == ["id", "email", "role", "invited_by", "created_at", "expires_at"])
        #expect(a["role"] as? String == b["role"] as? String && a["invited_by"] as? String == b["invited_by"] as? String)
        // Both mailed the same words (but the address and the link).
        let mails = [try await Circle.mails(app, to: "known@example.com"), try await Circle.mails(app, to: "unknown@example.com")]
        #expect(mails.map(\.count) == [1, 1])
        func masked(_ text: String) -> String {
            text.replacingOccurrences(of: #"token=[A-Za-z0-9_-]+"#, with: "token=T", options: .regularExpression)
                .replacingOccurrences(of: "unknown@example.com", with: "X").replacingOccurrences(of: "known@example.com", with: "X")
        }
        #expect(masked(mails[0][0]) == masked(mails[1][0]))

        // One address: five invitations mailed (each ends the one before), then 429.
        var statuses: [UInt] = []
        for _ in 0..<7 { statuses.append(try await Circle.invite(app, ann.token, "Spam@example.com").status.code) }
        #expect(statuses == [201, 201, 201, 201, 201, 429, 429])
        let over = try await Circle.invite(app, ann.token, "spam@example.com")
        #expect(Circle.code(over) == "too_many_requests" && over.headers.first(name: "Retry-After") != nil)
        #expect(try await Circle.mails(app, to: "spam@example.com").count == 5)
        #expect(try await app.count("""
            SELECT count(*) AS n FROM family_invitations WHERE lower(email) = 'spam@example.com' AND accepted_at IS NULL AND revoked_at IS NULL
            """) == 1)
        let pending = (try await Circle.family(app, ann.token)["invitations"] as? [[String: Any]]) ?? []
        #expect(pending.compactMap { $0["email"] as? String }.sorted() == ["Spam@example.com", "known@example.com", "unknown@example.com"])
        // The older links of a re-invited address are ended; the newest works.
        let spam = try await app.makeParent(email: "spam@example.com", password: Circle.password, children: [])
        let links = try await Circle.mails(app, to: "spam@example.com").map { String($0[$0.range(of: #"token=[A-Za-z0-9_-]+"#, options: .regularExpression)!].dropFirst(6)) }
        let old = try await Circle.accept(app, spam.token, invitation: links[0])
        #expect(old.status == .badRequest && Circle.code(old) == "invalid_token")
        #expect(try await Circle.accept(app, spam.token, invitation: links[4]).status == .ok)
        // A member is not invited again; a role must be one of the two.
        let member = try await Circle.invite(app, ann.token, "ANN@example.com")
        #expect(member.status == .conflict && Circle.code(member) == "already_a_member")
        let badRole = try await Circle.invite(app, ann.token, "new@example.com", role: "owner")
        #expect(badRole.status.code == 400 || badRole.status.code == 422)
        #expect(try badRole.json["field"] as? String == "role")
    }

    @Test("a token is single-use; expired after 7 days; revoked; for its own address, a verified account, one family", .app)
    func tokenRules() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password)
        // Expired: its end moved into the past (PostgreSQL's now() decides).
        _ = try await Circle.invite(app, ann.token, "late@example.com")
        let late = try await app.makeParent(email: "late@example.com", password: Circle.password, children: [])
        let lateToken = try await Circle.token(app, to: "late@example.com")
        try await app.sql.raw("UPDATE family_invitations SET expires_at = created_at + interval '7 days' - interval '8 days' WHERE lower(email) = 'late@example.com'").run()
        let expired = try await Circle.accept(app, late.token, invitation: lateToken)
        #expect(expired.status == .badRequest && Circle.code(expired) == "invalid_token")
        #expect(try await app.get("/account/invitation?token=\(lateToken)").status == .notFound)
        #expect((try await Circle.family(app, ann.token)["invitations"] as? [Any])?.isEmpty == true)

        // Revoked: unusable; revoking again, or another family's invitation, is a 404.
        let invited = try await Circle.invite(app, ann.token, "rev@example.com")
        let id = try #require(try invited.dataObject["id"] as? Int)
        let rev = try await app.makeParent(email: "rev@example.com", password: Circle.password, children: [])
        let stranger = try await app.makeParent(email: "stranger@example.com", password: Circle.password)
        #expect(try await app.send(.DELETE, "/api/v1/family/invitations/\(id)", token: stranger.token).status == .notFound)
        #expect(try await app.send(.DELETE, "/api/v1/family/invitations/\(id)", token: ann.token).status == .noContent)
        #expect(try await app.send(.DELETE, "/api/v1/family/invitations/\(id)", token: ann.token).status == .notFound)
        let revoked = try await Circle.accept(app, rev.token, invitation: try await Circle.token(app, to: "rev@example.com"))
        #expect(revoked.status == .badRequest && Circle.code(revoked) == "invalid_token")

        // Another address: 403, and the invitation stays usable by its own address.
        _ = try await Circle.invite(app, ann.token, "mine@example.com")
        let mine = try await Circle.token(app, to: "mine@example.com")
        let other = try await Circle.accept(app, stranger.token, invitation: mine)
        #expect(other.status == .forbidden && Circle.code(other) == "invitation_for_another_address")
        // An account with children: 409, with what to do; nothing changed.
        let busy = try await app.makeParent(email: "mine@example.com", password: Circle.password, children: ["Kim"])
        let conflict = try await Circle.accept(app, busy.token, invitation: mine)
        #expect(conflict.status == .conflict && Circle.code(conflict) == "already_in_a_family")
        #expect((try conflict.json["detail"] as? String)?.contains("Leave it first") == true)
        #expect(try await Circle.members(app, busy.token) == [busy.id: "parent"])
        #expect(try await Circle.childIDs(app, busy.token) == busy.children)
        // Its only child removed, the same account (its family now empty) joins; the empty family goes.
        let own = try #require(try await Circle.familyID(app, of: busy.id))
        #expect(try await app.send(.DELETE, "/api/v1/children/\(busy.children[0])", token: busy.token).status.code < 300)
        #expect(try await Circle.accept(app, busy.token, invitation: mine).status == .ok)
        #expect(try await app.count("SELECT count(*) AS n FROM families WHERE id = \(bind: own)") == 0)
        #expect(try await Circle.members(app, ann.token) == [ann.id: "parent", busy.id: "parent"])
        // A token nobody issued, and a missing one.
        #expect(Circle.code(try await Circle.accept(app, rev.token, invitation: "nonsense")) == "invalid_token")
        #expect(try await app.send(.POST, "/api/v1/family/invitations/accept", token: rev.token, json: "{}").status.code == 400)
        // A member of a family with others (a caregiver, here) is in a family too: 409.
        let zoe = try await app.makeParent(email: "zoe@example.com", password: Circle.password)
        _ = try await Circle.invite(app, zoe.token, "mine@example.com", role: "caregiver")
        let member = try await Circle.accept(app, busy.token, invitation: try await Circle.token(app, to: "mine@example.com"))
        #expect(member.status == .conflict && Circle.code(member) == "already_in_a_family")
        #expect(try await Circle.members(app, ann.token) == [ann.id: "parent", busy.id: "parent"])
        try await Circle.expectInvariants(app)
    }

    @Test("a family has at most 12 members and pending invitations together: then 409 family_full; re-inviting a pending address still works", .app)
    func familyFull() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password)
        _ = try await Circle.join(app, ann, email: "bo@example.com", role: "parent")
        var ids: [Int] = []
        for n in 0..<(FamilyInvitations.familyLimit - 2) {
            let invited = try await Circle.invite(app, ann.token, "guest\(n)@example.com", role: "caregiver")
            #expect(invited.status == .created)
            ids.append(try #require(try invited.dataObject["id"] as? Int))
        }
        let full = try await Circle.invite(app, ann.token, "one-more@example.com")
        #expect(full.status == .conflict && Circle.code(full) == "family_full")
        #expect(try await Circle.invite(app, ann.token, "guest0@example.com", role: "parent").status == .created)
        #expect(try await app.send(.DELETE, "/api/v1/family/invitations/\(ids[1])", token: ann.token).status == .noContent)
        #expect(try await Circle.invite(app, ann.token, "one-more@example.com").status == .created)
        // An expired invitation takes no place.
        try await app.sql.raw("UPDATE family_invitations SET expires_at = now() - interval '1 second' WHERE lower(email) = 'guest2@example.com'").run()
        #expect(try await Circle.invite(app, ann.token, "last-one@example.com").status == .created)
        #expect(try await app.count("SELECT count(*) AS n FROM mail_outbox WHERE recipient = 'one-more@example.com'") == 1)
    }
}
