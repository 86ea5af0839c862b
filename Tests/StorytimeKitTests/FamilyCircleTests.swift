import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing
@testable import StorytimeKit

/// The family circle's calls as they go over the wire, against an in-memory family that keeps
/// the server's rules that the client must carry back: roles, the last parent, a caregiver's 403.
@Suite("StorytimeKit: the family circle over an in-memory server")
struct FamilyCircleTests {
    /// A family of a parent (1, the caller) and whoever accepts; answers the family routes.
    actor FamilyServer: ClientTransport {
        struct Sent: Equatable { let method: String; let path: String; let body: [String: String]; let idempotent: Bool }
        private(set) var sent: [Sent] = []
        var members: [(id: Int, email: String, role: String, answers: Bool)] = [(1, "pat@example.com", "parent", false)]
        var invitations: [(id: Int, email: String, role: String)] = []
        /// The caller's role: a caregiver's change is the server's 403.
        var callerRole = "parent"

        func become(_ role: String) { callerRole = role }

        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            if operationID == "createToken" {
                return json(200, #"{"access_token": "t", "refresh_token": "r", "token_type": "Bearer", "expires_in": 3600, "device_id": 1}"#)
            }
            let data = body == nil ? Data() : try await Data(collecting: body!, upTo: 4096)
            let fields = (data.isEmpty ? [:] : try JSONSerialization.jsonObject(with: data) as! [String: Any]).mapValues { "\($0)" }
            let path = request.path ?? ""
            sent.append(Sent(method: request.method.rawValue, path: path, body: fields,
                             idempotent: request.headerFields[HTTPField.Name("Idempotency-Key")!] != nil))
            let last = path.split(separator: "/").last.flatMap { Int($0) }
            if request.method != .get, operationID != "leaveFamily", operationID != "acceptFamilyInvitation", callerRole != "parent" {
                return problem(403, "parent_role_required")
            }
            switch operationID {
            case "getFamily", "acceptFamilyInvitation":
                if operationID == "acceptFamilyInvitation", fields["token"] != "s3cret" { return problem(400, "invalid_token") }
                return json(200, #"{"data": \#(family())}"#)
            case "inviteToFamily":
                if members.contains(where: { $0.email == fields["email"] }) { return problem(409, "already_a_member") }
                invitations.append((invitations.count + 10, fields["email"]!, fields["role"]!))
                return json(201, #"{"data": \#(invitation(invitations.last!))}"#)
            case "revokeFamilyInvitation":
                guard invitations.contains(where: { $0.id == last }) else { return problem(404, "not_found") }
                invitations.removeAll { $0.id == last }
                return (HTTPResponse(status: .noContent), nil)
            case "updateFamilyMember":
                guard let index = members.firstIndex(where: { $0.id == last }) else { return problem(404, "not_found") }
                if fields["role"] == "caregiver", members.filter({ $0.role == "parent" }).count <= 1, members[index].role == "parent" {
                    return problem(409, "last_parent")
                }
                if let role = fields["role"] { members[index].role = role }
                if let answers = fields["may_answer_requests"] { members[index].answers = answers == "1" || answers == "true" }
                return json(200, #"{"data": \#(member(members[index]))}"#)
            case "removeFamilyMember":
                guard members.contains(where: { $0.id == last }) else { return problem(404, "not_found") }
                members.removeAll { $0.id == last }
                return (HTTPResponse(status: .noContent), nil)
            case "leaveFamily":
                return members.count <= 1 ? problem(409, "only_member") : json(200, #"{"data": \#(family())}"#)
            default:
                return problem(404, "not_found")
            }
        }

        func join(_ id: Int, _ email: String, as role: String) { members.append((id, email, role, false)) }

        private func member(_ m: (id: Int, email: String, role: String, answers: Bool)) -> String {
            #"{"account_id": \#(m.id), "email": "\#(m.email)", "role": "\#(m.role)", "may_answer_requests": \#(m.answers), "joined_at": "2026-11-26T08:00:00Z"}"#
        }

        private func invitation(_ i: (id: Int, email: String, role: String)) -> String {
            #"{"id": \#(i.id), "email": "\#(i.email)", "role": "\#(i.role)", "invited_by": null, "created_at": "2026-11-26T08:00:00Z", "expires_at": "2026-12-03T08:00:00Z"}"#
        }

        private func family() -> String {
            let shown = callerRole == "parent" ? invitations.map(invitation).joined(separator: ",") : ""
            return #"{"id": 7, "role": "\#(callerRole)", "members": [\#(members.map(member).joined(separator: ","))], "invitations": [\#(shown)], "#
                + #""children": [{"id": 3, "name": "Ada", "birth_year": null, "avatar": null, "library_count": 0}]}"#
        }

        private func json(_ status: Int, _ text: String) -> (HTTPResponse, HTTPBody?) {
            var response = HTTPResponse(status: .init(code: status))
            response.headerFields[.contentType] = "application/json"
            return (response, HTTPBody(text))
        }

        private func problem(_ status: Int, _ code: String) -> (HTTPResponse, HTTPBody?) {
            var response = HTTPResponse(status: .init(code: status))
            response.headerFields[.contentType] = "application/problem+json"
            return (response, HTTPBody(#"{"type": "about:blank", "title": "x", "status": \#(status), "detail": "\#(code) here", "code": "\#(code)"}"#))
        }
    }

    static func make() async throws -> (FamilyServer, StorytimeClient) {
        let server = FamilyServer()
        let client = StorytimeClient(baseURL: URL(string: "https://storytime.test")!, transport: server)
        try await client.signIn(email: "pat@example.com", password: "pw")
        return (server, client)
    }

    @Test("a parent invites, withdraws, promotes and removes: each call's method, path and body; the writes carry an Idempotency-Key, the PATCH none")
    func parentCalls() async throws {
        let (server, client) = try await Self.make()
        let invitation = try await client.invite(email: "gran@example.com", role: .caregiver)
        #expect(invitation.role == .caregiver && invitation.invitedBy == nil)
        #expect(try await client.family().invitations.map(\.email) == ["gran@example.com"])
        try await client.revokeInvitation(invitation.id)
        await server.join(2, "gran@example.com", as: "caregiver")
        let family = try await client.family()
        #expect(family.role == .parent && family.role.isParent && family.members.map(\.role) == [.parent, .caregiver])
        #expect(try await client.updateMember(2, mayAnswerRequests: true).mayAnswerRequests)
        #expect(try await client.updateMember(2, role: .parent).role == .parent)
        try await client.removeMember(2)
        let sent = await server.sent.filter { $0.method != "GET" }
        #expect(sent == [
            .init(method: "POST", path: "/api/v1/family/invitations", body: ["email": "gran@example.com", "role": "caregiver"], idempotent: true),
            .init(method: "DELETE", path: "/api/v1/family/invitations/10", body: [:], idempotent: true),
            .init(method: "PATCH", path: "/api/v1/family/members/2", body: ["may_answer_requests": "1"], idempotent: false),
            .init(method: "PATCH", path: "/api/v1/family/members/2", body: ["role": "parent"], idempotent: false),
            .init(method: "DELETE", path: "/api/v1/family/members/2", body: [:], idempotent: true),
        ])
    }

    @Test("the server's refusals come back typed: a caregiver's 403, 409s by their code, a bad link's 400; a pasted link sends its token")
    func refusals() async throws {
        let (server, client) = try await Self.make()
        await #expect(throws: StorytimeError.conflict(code: "last_parent", detail: "last_parent here")) {
            try await client.updateMember(1, role: .caregiver)
        }
        await #expect(throws: StorytimeError.conflict(code: "already_a_member", detail: "already_a_member here")) {
            try await client.invite(email: "pat@example.com", role: .parent)
        }
        do {
            try await client.leaveFamily()
            Issue.record("the only member left")
        } catch let error as StorytimeError {
            #expect(error.code == "only_member" && !error.requiresParentRole)
        }
        await #expect(throws: StorytimeError.invalidParameter(code: "invalid_token", field: nil, detail: "invalid_token here")) {
            try await client.accept(token: "nope")
        }
        let joined = try await client.accept(token: " https://storytime.test/account/invitation?token=s3cret \n")
        #expect(joined.children.map(\.name) == ["Ada"])
        #expect(await server.sent.last == .init(method: "POST", path: "/api/v1/family/invitations/accept", body: ["token": "s3cret"], idempotent: true))

        await server.become("caregiver")
        let family = try await client.family()
        #expect(family.role == .caregiver && !family.role.isParent && family.invitations.isEmpty)
        do {
            try await client.invite(email: "sitter@example.com", role: .caregiver)
            Issue.record("a caregiver invited")
        } catch let error as StorytimeError {
            #expect(error.requiresParentRole && error == .forbidden(code: "parent_role_required", detail: "parent_role_required here", retryAfter: nil))
        }
        // A 409 `duplicate` is still its own case (the library's optimistic add relies on it).
        #expect(StorytimeError(status: 409, problem: .init(code: "duplicate", detail: "d", field: nil), retryAfter: nil) == .duplicate(detail: "d"))
    }
}
