@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Steps of the family circle (issue 45) shared by its suites: inviting by mail, reading the
/// mailed link back from the outbox, accepting, and a second adult joining a family — all over HTTP.
enum Circle {
    static let password = "correct horse battery"

    static func code(_ response: TestingHTTPResponse) -> String? { try? response.json["code"] as? String }

    static func invite(_ app: Application, _ token: String, _ email: String, role: String = "parent") async throws -> TestingHTTPResponse {
        try await app.send(.POST, "/api/v1/family/invitations", token: token, json: #"{"email":"\#(email)","role":"\#(role)"}"#)
    }

    static func accept(_ app: Application, _ token: String, invitation: String) async throws -> TestingHTTPResponse {
        try await app.send(.POST, "/api/v1/family/invitations/accept", token: token, json: #"{"token":"\#(invitation)"}"#)
    }

    /// The mails of `kind` to `email` in the outbox, oldest first (their plain-text bodies).
    static func mails(_ app: Application, to email: String, kind: String = "family_invitation") async throws -> [String] {
        try await app.sql.raw("""
            SELECT text_body FROM mail_outbox WHERE lower(recipient) = lower(\(bind: email)) AND kind = \(bind: kind) ORDER BY id
            """).all().map { try $0.decode(column: "text_body", as: String.self) }
    }

    /// The link of the newest mail of `kind` to `email` (its whole address).
    static func link(_ app: Application, to email: String, kind: String = "family_invitation") async throws -> String {
        let text = try #require(try await mails(app, to: email, kind: kind).last, "no \(kind) mail to \(email)")
        let range = try #require(text.range(of: #"https?://[^\s]+token=[A-Za-z0-9_-]+"#, options: .regularExpression), "no link in \(text)")
        return String(text[range])
    }

    /// The token of the newest mail of `kind` to `email`.
    static func token(_ app: Application, to email: String, kind: String = "family_invitation") async throws -> String {
        let link = try await link(app, to: email, kind: kind)
        return String(link[link.range(of: "token=")!.upperBound...])
    }

    /// `email` — a new verified account without children — joins `inviter`'s family as `role`.
    static func join(_ app: Application, _ inviter: Application.ParentFixture, email: String = "adult-\(UUID().uuidString.prefix(8))@example.com",
                     role: String) async throws -> Application.ParentFixture {
        let adult = try await app.makeParent(email: email, password: password, children: [])
        let invited = try await invite(app, inviter.token, email, role: role)
        guard invited.status == .created else { throw TestFailure("invite: \(invited.status) \(invited.body.string)") }
        let accepted = try await accept(app, adult.token, invitation: try await token(app, to: email))
        guard accepted.status == .ok else { throw TestFailure("accept: \(accepted.status) \(accepted.body.string)") }
        return adult
    }

    /// `GET /api/v1/family` as `token` (its `data`).
    static func family(_ app: Application, _ token: String) async throws -> [String: Any] {
        let response = try await app.get("/api/v1/family", token: token)
        guard response.status == .ok else { throw TestFailure("family: \(response.status) \(response.body.string)") }
        return try response.dataObject
    }

    /// The members of the caller's family: account id → role.
    static func members(_ app: Application, _ token: String) async throws -> [Int: String] {
        let members = (try await family(app, token)["members"] as? [[String: Any]]) ?? []
        return Dictionary(uniqueKeysWithValues: members.compactMap { member in
            (member["account_id"] as? Int).map { ($0, member["role"] as? String ?? "?") }
        })
    }

    static func childIDs(_ app: Application, _ token: String) async throws -> [Int] {
        try await app.get("/api/v1/children", token: token).dataArray.compactMap { $0["id"] as? Int }
    }

    /// The family `account` is in, read from the database.
    static func familyID(_ app: Application, of account: Int) async throws -> Int? {
        try await app.sql.raw("SELECT family_id FROM family_members WHERE account_id = \(bind: account)").first()?
            .decode(column: "family_id", as: Int.self)
    }

    /// Every family keeps a parent, and no family is left without members (the rules of migrations/0038).
    static func expectInvariants(_ app: Application, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(try await app.count("""
            SELECT count(*) AS n FROM families f WHERE NOT EXISTS (SELECT 1 FROM family_members m WHERE m.family_id = f.id AND m.role = 'parent')
            """) == 0, "a family without a parent", sourceLocation: sourceLocation)
        #expect(try await app.count("""
            SELECT count(*) AS n FROM parents p WHERE NOT EXISTS (SELECT 1 FROM family_members m WHERE m.account_id = p.id)
            """) == 0, "an account in no family", sourceLocation: sourceLocation)
    }

    /// What requests released together answered: their statuses in order, and their codes for messages.
    struct Outcomes: CustomStringConvertible {
        let statuses: [HTTPStatus]
        let codes: [String?]
        var description: String { zip(statuses, codes).map { "\($0.code) \($1 ?? "")" }.joined(separator: ", ") }
    }

    /// Runs `work` concurrently, released together; never a 500.
    static func together(_ work: [@Sendable () async throws -> TestingHTTPResponse]) async throws -> Outcomes {
        try await withThrowingTaskGroup(of: (Int, HTTPStatus, String).self) { group in
            for (index, step) in work.enumerated() {
                group.addTask { let response = try await step(); return (index, response.status, response.body.string) }
            }
            var statuses = [HTTPStatus](repeating: .ok, count: work.count)
            var codes = [String?](repeating: nil, count: work.count)
            for try await (index, status, body) in group {
                statuses[index] = status
                codes[index] = (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["code"] as? String
                #expect(status.code < 500, "a concurrent request failed: \(status) \(body)")
            }
            return Outcomes(statuses: statuses, codes: codes)
        }
    }
}
