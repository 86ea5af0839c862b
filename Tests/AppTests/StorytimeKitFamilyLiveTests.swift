@testable import App
import Foundation
import StorytimeKit
import Testing
import Vapor

/// The family circle through StorytimeKit, over real HTTP against the real server.
@Suite("StorytimeKit's family circle against the live server")
struct StorytimeKitFamilyLiveTests {
    /// The link mailed to `recipient` by the latest invitation (no SMTP here: it waits in the outbox).
    static func invitationLink(to recipient: String, app: Application) async throws -> String {
        struct Mail: Decodable { let textBody: String }
        let mail = try await app.sql.raw("""
            SELECT text_body FROM mail_outbox WHERE kind = 'family_invitation' AND recipient = \(bind: recipient) ORDER BY id DESC LIMIT 1
            """).first(decoding: Mail.self, keyDecodingStrategy: .convertFromSnakeCase)
        let text = try #require(mail?.textBody)
        return String(try #require(text.split(whereSeparator: \.isWhitespace).first { $0.contains("/account/invitation?token=") }))
    }

    static func client(_ url: URL, _ email: String) async throws -> StorytimeClient {
        let client = StorytimeClient(baseURL: url)
        try await client.signIn(email: email, password: "kit password")
        return client
    }

    /// `call` must fail with the StorytimeError whose code is `code`.
    static func refused(_ code: String, _ call: () async throws -> Void) async {
        do {
            try await call()
            Issue.record("expected \(code), got success")
        } catch let error as StorytimeError {
            #expect(error.code == code, "\(error)")
        } catch {
            Issue.record("expected \(code), got \(error)")
        }
    }

    @Test("a parent invites a grandparent by mail, who accepts with the pasted link, reads the children and gets parent_role_required on a change; roles, the last parent, removal and leaving come back typed")
    func familyCircle() async throws {
        try await StorytimeKitLiveTests.withServer { app, url in
            let book = try await app.makeBook("Owl Moon", ages: 2...4)
            try await app.appServices.catalogEngine.build(on: app.db)
            let pat = try await app.makeParent(email: "pat@example.com", password: "kit password", children: ["Ada"])
            let gran = try await app.makeParent(email: "gran@example.com", password: "kit password", children: [])
            _ = try await app.makeParent(email: "sam@example.com", password: "kit password", children: ["Sam's own"])
            let parent = try await Self.client(url, "pat@example.com")
            let grandparent = try await Self.client(url, "gran@example.com")
            let ada = pat.children[0]

            let invitation = try await parent.invite(email: "gran@example.com", role: .caregiver)
            #expect(invitation.role == .caregiver && invitation.invitedBy == "pat@example.com")
            #expect(try await parent.family().invitations.map(\.id) == [invitation.id])
            let joined = try await grandparent.accept(token: try await Self.invitationLink(to: "gran@example.com", app: app))
            #expect(joined.role == .caregiver && joined.children.map(\.id) == [ada] && joined.invitations.isEmpty)
            #expect(joined.members.map(\.email) == ["pat@example.com", "gran@example.com"])
            await Self.refused("invalid_token") {   // single use
                try await grandparent.accept(token: try await Self.invitationLink(to: "gran@example.com", app: app))
            }

            // A caregiver reads and records plays; changes are a parent's.
            #expect(try await grandparent.children().map(\.id) == [ada])
            _ = try await parent.addToLibrary(childID: ada, bookID: book)
            #expect(try await grandparent.library(childID: ada).data.map(\.id) == [book])
            #expect(try await grandparent.recordPlay(childID: ada, bookID: book, positionSeconds: 30).positionSeconds == 30)
            do {
                try await grandparent.removeFromLibrary(childID: ada, bookID: book)
                Issue.record("a caregiver removed a book")
            } catch let error as StorytimeError {
                #expect(error.requiresParentRole)
            }
            await Self.refused("parent_role_required") { try await grandparent.invite(email: "sitter@example.com", role: .caregiver) }
            await Self.refused("parent_role_required") { try await grandparent.updateMember(gran.id, role: .parent) }

            // Roles: the last parent stays a parent, and cannot leave; a promoted member can change things.
            await Self.refused("last_parent") { try await parent.updateMember(pat.id, role: .caregiver) }
            await Self.refused("last_parent") { try await parent.leaveFamily() }
            #expect(try await parent.updateMember(gran.id, mayAnswerRequests: true).mayAnswerRequests)
            #expect(try await parent.updateMember(gran.id, role: .parent).role == .parent)
            try await grandparent.removeFromLibrary(childID: ada, bookID: book)
            #expect(try await grandparent.updateMember(gran.id, role: .caregiver).role == .caregiver)

            // Someone whose own family has a child must leave it first.
            try await parent.invite(email: "sam@example.com", role: .parent)
            let sam = try await Self.client(url, "sam@example.com")
            await Self.refused("already_in_a_family") {
                try await sam.accept(token: try await Self.invitationLink(to: "sam@example.com", app: app))
            }
            let pending = try await parent.family().invitations
            #expect(pending.map(\.email) == ["sam@example.com"])
            try await parent.revokeInvitation(pending[0].id)
            #expect(try await parent.family().invitations.isEmpty)

            // Removal ends access at once; the removed account goes on in a family of its own.
            try await parent.removeMember(gran.id)
            #expect(try await grandparent.children().isEmpty)
            await Self.refused("not_found") { _ = try await grandparent.library(childID: ada) }
            let own = try await grandparent.family()
            #expect(own.role == .parent && own.members.map(\.accountId) == [gran.id] && own.id != joined.id)
            await Self.refused("only_member") { try await grandparent.leaveFamily() }

            let receipt = try await parent.deleteAccount(password: "kit password")
            #expect(receipt.familyRemoved && receipt.children == 1)
        }
    }
}
