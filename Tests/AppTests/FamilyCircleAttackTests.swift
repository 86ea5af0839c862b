@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// What an attack on the family circle found (docs/security.md), each written against the unfixed code.
@Suite("Family circle: found by the attack")
struct FamilyCircleAttackTests {
    @Test("adding children while accepting a caregiver's invitation never adds a child as a caregiver (released together, 4 rounds)", .app)
    func childrenRacingAccept() async throws {
        let app = try app()
        for round in 0..<4 {
            let ann = try await app.makeParent(email: "ann\(round)@example.com", password: Circle.password, children: ["Ada"])
            let email = "cy\(round)@example.com"
            let cy = try await app.makeParent(email: email, password: Circle.password, children: [])
            #expect(try await Circle.invite(app, ann.token, email, role: "caregiver").status == .created)
            let token = try await Circle.token(app, to: email)
            var work: [@Sendable () async throws -> TestingHTTPResponse] = (0..<6).map { _ in
                { try await app.send(.POST, "/api/v1/children", token: cy.token, json: #"{"name":"K"}"#) }
            }
            work.append { try await Circle.accept(app, cy.token, invitation: token) }
            _ = try await Circle.together(work.shuffled())
            // Whatever won, no child of any family was added by an account that is not its parent there.
            let wrong = try await app.count("""
                SELECT count(*) AS n FROM children c JOIN family_members m ON m.account_id = c.added_by AND m.family_id = c.family_id
                 WHERE m.role <> 'parent'
                """)
            #expect(wrong == 0, "round \(round): a caregiver's children")
            try await Circle.expectInvariants(app)
        }
    }

    @Test("a removed member browsing the catalog as the family's child is a 404 on every later request, not only the first", .app)
    func removedMemberCatalogScope() async throws {
        let app = try app()
        try await app.makeBook("Moon Song")
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada"])
        let gran = try await Circle.join(app, ann, role: "caregiver")
        let child = ann.children[0]
        let path = "/api/v1/catalog/books?child_id=\(child)&per_page=1"
        #expect(try await app.get(path, token: gran.token).status == .ok)   // the child's scope is now kept
        #expect(try await app.send(.DELETE, "/api/v1/family/members/\(gran.id)", token: ann.token).status == .noContent)
        for attempt in 0..<4 {
            #expect(try await app.get(path, token: gran.token).status == .notFound, "attempt \(attempt)")
            #expect(try await app.get("/api/v1/catalog/suggest?q=mo&child_id=\(child)", token: gran.token).status == .notFound)
        }
        #expect(try await app.get(path, token: ann.token).status == .ok)
    }

    @Test("joining a family keeps the account's own record (password and settings changes) in the log", .app)
    func acceptKeepsOwnRecord() async throws {
        let app = try app()
        let ann = try await app.makeParent(email: "ann@example.com", password: Circle.password, children: ["Ada"])
        let cy = try await app.makeParent(email: "cy@example.com", password: Circle.password, children: [])
        #expect(try await app.send(.PATCH, "/api/v1/me", token: cy.token, json: #"{"time_zone":"Europe/Paris"}"#).status == .ok)
        let before = try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE parent_id = \(bind: cy.id)")
        #expect(before >= 1)
        #expect(try await Circle.invite(app, ann.token, "cy@example.com", role: "caregiver").status == .created)
        #expect(try await Circle.accept(app, cy.token, invitation: try await Circle.token(app, to: "cy@example.com")).status == .ok)
        #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE parent_id = \(bind: cy.id) AND action = 'account.time_zone'") == 1)
        #expect(try await app.count("SELECT count(*) AS n FROM parent_audit_log WHERE parent_id = \(bind: cy.id)") == before + 1)   // + family.join
    }
}
