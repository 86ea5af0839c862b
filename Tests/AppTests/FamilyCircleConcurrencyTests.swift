@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Concurrent changes of one family are decided once (issue 45): requests released together,
/// never a 500, and the rules hold after each round.
@Suite("Family circle: concurrency")
struct FamilyCircleConcurrencyTests {
    static let rounds = 4

    @Test("two accepts of one token: exactly one joins", .app)
    func doubleAccept() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada"])
        for round in 0..<Self.rounds {
            let email = "bo\(round)@example.com"
            let bo = try await app.makeParent(email: email, password: Circle.password, children: [])
            #expect(try await Circle.invite(app, ann.token, email).status == .created)
            let token = try await Circle.token(app, to: email)
            let second = try await FamilyAccountsTests.signIn(app, email, password: Circle.password)
            let statuses = try await Circle.together([
                { try await Circle.accept(app, bo.token, invitation: token) },
                { try await Circle.accept(app, second.access, invitation: token) },
            ])
            #expect(statuses.statuses.sorted { $0.code < $1.code } == [.ok, .badRequest], "\(statuses)")
            #expect(try await Circle.members(app, ann.token)[bo.id] == "parent")
            #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE action = 'family.join' AND parent_id = \(bind: bo.id)") == 1)
        }
        try await Circle.expectInvariants(app)
    }

    @Test("two parents demoting each other at once: at most one succeeds, and a parent remains", .app)
    func crossedDemotions() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada"])
        let bo = try await Circle.join(app, ann, email: "bo@example.com", role: "parent")
        for _ in 0..<Self.rounds {
            let statuses = try await Circle.together([
                { try await app.send(.PATCH, "/api/v1/family/members/\(bo.id)", token: ann.token, json: #"{"role":"caregiver"}"#) },
                { try await app.send(.PATCH, "/api/v1/family/members/\(ann.id)", token: bo.token, json: #"{"role":"caregiver"}"#) },
            ])
            #expect(statuses.statuses.filter { $0 == .ok }.count == 1, "\(statuses)")
            #expect(statuses.statuses.allSatisfy { $0 == .ok || $0 == .forbidden }, "\(statuses)")
            let members = try await Circle.members(app, ann.token)
            #expect(members.values.sorted() == ["caregiver", "parent"], "\(members)")
            try await Circle.expectInvariants(app)
            // The one left a parent makes the other a parent again for the next round.
            let (parent, demoted) = members[ann.id] == "parent" ? (ann, bo) : (bo, ann)
            #expect(try await app.send(.PATCH, "/api/v1/family/members/\(demoted.id)", token: parent.token, json: #"{"role":"parent"}"#).status == .ok)
        }
    }

    @Test("a removal racing the member's leave, an accept, a demotion; two parents deleting their accounts at once: never a 500, the rules hold", .app)
    func removalRaces() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada"])
        for round in 0..<Self.rounds {
            // Removal vs the member's own leave: one of them takes the member out.
            let gran = try await Circle.join(app, ann, email: "gran\(round)@example.com", role: "caregiver")
            let statuses = try await Circle.together([
                { try await app.send(.DELETE, "/api/v1/family/members/\(gran.id)", token: ann.token) },
                { try await app.send(.POST, "/api/v1/family/leave", token: gran.token) },
            ])
            // (A leave that read the family before the removal and locked it after is told the family changed.)
            #expect(statuses.statuses == [.noContent, .conflict] || statuses.statuses == [.notFound, .ok], "\(statuses)")
            #expect(statuses.codes[1] == nil || statuses.codes[1] == "only_member" || statuses.codes[1] == "family_changed", "\(statuses)")
            #expect(try await Circle.members(app, gran.token) == [gran.id: "parent"])

            // Removal of one member vs another's accept: both go through.
            let bo = try await Circle.join(app, ann, email: "bo\(round)@example.com", role: "parent")
            let cy = try await app.makeParent(email: "cy\(round)@example.com", password: Circle.password, children: [])
            _ = try await Circle.invite(app, ann.token, "cy\(round)@example.com", role: "caregiver")
            let token = try await Circle.token(app, to: "cy\(round)@example.com")
            let both = try await Circle.together([
                { try await app.send(.DELETE, "/api/v1/family/members/\(bo.id)", token: ann.token) },
                { try await Circle.accept(app, cy.token, invitation: token) },
            ])
            #expect(both.statuses == [.noContent, .ok], "\(both)")
            #expect(try await Circle.members(app, ann.token) == [ann.id: "parent", cy.id: "caregiver"])

            // Removal of a parent vs that parent demoting the remover: one wins, a parent remains.
            let di = try await Circle.join(app, ann, email: "di\(round)@example.com", role: "parent")
            let crossed = try await Circle.together([
                { try await app.send(.DELETE, "/api/v1/family/members/\(di.id)", token: ann.token) },
                { try await app.send(.PATCH, "/api/v1/family/members/\(ann.id)", token: di.token, json: #"{"role":"caregiver"}"#) },
            ])
            let removedFirst = crossed.statuses == [.noContent, .notFound] || (crossed.statuses == [.noContent, .conflict] && crossed.codes[1] == "family_changed")
            #expect(removedFirst || crossed.statuses == [.forbidden, .ok], "\(crossed)")
            try await Circle.expectInvariants(app)
            // Back to Ann as the only parent, for the next round.
            let members = try await Circle.members(app, ann.token)
            if members[ann.id] == "caregiver" {
                #expect(try await app.send(.PATCH, "/api/v1/family/members/\(ann.id)", token: di.token, json: #"{"role":"parent"}"#).status == .ok)
                #expect(try await app.send(.DELETE, "/api/v1/family/members/\(di.id)", token: ann.token).status == .noContent)
            }
            #expect(try await app.send(.DELETE, "/api/v1/family/members/\(cy.id)", token: ann.token).status == .noContent)
            #expect(try await Circle.members(app, ann.token) == [ann.id: "parent"])
        }

        // Two parents delete their accounts at once: one keeps the family, the other takes it.
        let eve = try await app.makeParent(email: "eve@example.com", password: Circle.password, children: ["Eli"])
        let fay = try await Circle.join(app, eve, email: "fay@example.com", role: "parent")
        let gus = try await Circle.join(app, eve, email: "gus@example.com", role: "caregiver")
        let deleted = try await withThrowingTaskGroup(of: (HTTPStatus, Bool?).self) { group in
            for parent in [eve, fay] {
                group.addTask {
                    let response = try await app.send(.DELETE, "/api/v1/me", token: parent.token, json: #"{"password":"\#(Circle.password)"}"#)
                    return (response.status, try response.dataObject["family_removed"] as? Bool)
                }
            }
            return try await group.reduce(into: [(HTTPStatus, Bool?)]()) { $0.append($1) }
        }
        #expect(deleted.allSatisfy { $0.0 == .ok }, "\(deleted)")
        #expect(deleted.compactMap(\.1).sorted { !$0 && $1 } == [false, true], "\(deleted)")
        #expect(try await app.count("SELECT count(*) AS n FROM children WHERE id = ANY(\(bind: eve.children))") == 0)
        #expect(try await Circle.members(app, gus.token) == [gus.id: "parent"])
        try await Circle.expectInvariants(app)
    }

    @Test("an accept racing a re-invitation of the same address, the invitation's revocation, or the inviter's account deletion: decided once, never a 500", .app)
    func acceptRaces() async throws {
        let app = try app()
        for round in 0..<Self.rounds {
            let ann = try await app.makeParent(email: "ann\(round)@example.com", password: Circle.password, children: ["Ada"])
            let keeper = try await Circle.join(app, ann, email: "keeper\(round)@example.com", role: "parent")
            // Re-invited while accepting: joined (and the new invitation refused), or the old link ended.
            let bo = try await app.makeParent(email: "bo\(round)@example.com", password: Circle.password, children: [])
            _ = try await Circle.invite(app, ann.token, "bo\(round)@example.com")
            let token = try await Circle.token(app, to: "bo\(round)@example.com")
            let reinvite = try await Circle.together([
                { try await Circle.accept(app, bo.token, invitation: token) },
                { try await Circle.invite(app, ann.token, "bo\(round)@example.com") },
            ])
            #expect(reinvite.statuses == [.ok, .conflict] || reinvite.statuses == [.badRequest, .created], "\(reinvite)")

            // Revoked while accepting.
            let cy = try await app.makeParent(email: "cy\(round)@example.com", password: Circle.password, children: [])
            let id = try #require(try await Circle.invite(app, ann.token, "cy\(round)@example.com").dataObject["id"] as? Int)
            let cyToken = try await Circle.token(app, to: "cy\(round)@example.com")
            let revoke = try await Circle.together([
                { try await Circle.accept(app, cy.token, invitation: cyToken) },
                { try await app.send(.DELETE, "/api/v1/family/invitations/\(id)", token: ann.token) },
            ])
            #expect(revoke.statuses == [.ok, .notFound] || revoke.statuses == [.badRequest, .noContent], "\(revoke)")
            #expect((try await Circle.members(app, ann.token)[cy.id] != nil) == (revoke.statuses[0] == .ok))

            // The inviter deletes their account while the invitee accepts (the family keeps a parent).
            let di = try await app.makeParent(email: "di\(round)@example.com", password: Circle.password, children: [])
            _ = try await Circle.invite(app, ann.token, "di\(round)@example.com", role: "caregiver")
            let diToken = try await Circle.token(app, to: "di\(round)@example.com")
            let gone = try await Circle.together([
                { try await Circle.accept(app, di.token, invitation: diToken) },
                { try await app.send(.DELETE, "/api/v1/me", token: ann.token, json: #"{"password":"\#(Circle.password)"}"#) },
            ])
            #expect(gone.statuses == [.ok, .ok], "\(gone)")
            #expect(try await Circle.members(app, keeper.token)[di.id] == "caregiver")
            try await Circle.expectInvariants(app)
        }
    }
}
