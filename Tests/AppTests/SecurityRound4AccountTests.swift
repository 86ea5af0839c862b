@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Round 4 on family accounts and mail, replayed over HTTP: an email change parked by someone who
/// once had the password, against every recovery step (and against a reset released at the same
/// moment); `POST /me/email` as an oracle and a mail cannon; a reset link in the old mailbox after
/// the address changed; address forms past the mail budget. Mail is read from the outbox.
@Suite("Security round 4: accounts")
struct SecurityRound4AccountTests {
    static let password = SelfServiceAccountsTests.password
    static let owner = "owner@example.com"
    static let thief = "thief@example.net"

    /// The token of the latest link of `kind` mailed to `recipient`.
    static func link(_ app: Application, to recipient: String, kind: String) async throws -> String {
        let body = try await app.sql.raw("""
            SELECT text_body FROM mail_outbox WHERE lower(recipient) = lower(\(bind: recipient)) AND kind = \(bind: kind) ORDER BY id DESC LIMIT 1
            """).first()?.decode(column: "text_body", as: String.self)
        guard let body, let range = body.range(of: #"token=[A-Za-z0-9_-]+"#, options: .regularExpression) else {
            throw TestFailure("no \(kind) link to \(recipient)")
        }
        return String(body[range].dropFirst("token=".count))
    }

    static func mails(_ app: Application, to recipient: String, kind: String? = nil) async throws -> Int {
        try await app.count("""
            SELECT count(*) AS n FROM mail_outbox WHERE lower(recipient) = lower(\(bind: recipient)) AND (\(bind: kind)::text IS NULL OR kind = \(bind: kind))
            """)
    }

    static func json(_ fields: [String: String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
    }

    static func askChange(_ app: Application, _ token: String, to email: String) async throws -> TestingHTTPResponse {
        try await app.send(.POST, "/api/v1/me/email", token: token, json: try json(["email": email, "password": password]))
    }

    /// Someone who had the password parks a change of the account to an address of theirs.
    static func park(_ app: Application, _ token: String, to email: String = thief) async throws -> String {
        let asked = try await askChange(app, token, to: email)
        #expect(asked.status == .accepted)
        return try await link(app, to: email, kind: "new_email")
    }

    static func confirm(_ app: Application, _ token: String) async throws -> TestingHTTPResponse {
        try await app.send(.POST, "/api/v1/accounts/verify", json: #"{"token":"\#(token)"}"#)
    }

    static func useReset(_ app: Application, _ token: String, password: String) async throws -> TestingHTTPResponse {
        try await app.send(.POST, "/api/v1/auth/password-reset/confirm", json: try json(["token": token, "password": password]))
    }

    static func askReset(_ app: Application, _ address: String) async throws -> String {
        #expect(try await app.send(.POST, "/api/v1/auth/password-reset", json: try json(["email": address])).status == .accepted)
        return try await link(app, to: address, kind: "reset")
    }

    static func email(_ app: Application, _ parent: Int) async throws -> String {
        try await app.sql.raw("SELECT email FROM parents WHERE id = \(bind: parent)").first()!.decode(column: "email", as: String.self)
    }

    static func expectInvalidToken(_ response: TestingHTTPResponse, _ comment: Comment? = nil) throws {
        #expect(response.status == .badRequest, comment)
        #expect(try response.json["code"] as? String == "invalid_token", comment)
    }

    enum Recovery: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case passwordReset, passwordChange, signOutEverywhere, consoleSignOut, consoleLock, newerChange
        var testDescription: String { rawValue }
    }

    @Test("each recovery step ends a parked email change: its link is refused and the address stays the owner's", .app,
          arguments: Recovery.allCases)
    func recoveryEndsParkedChange(_ step: Recovery) async throws {
        let app = try app()
        let family = try await app.makeParent(email: Self.owner, password: Self.password)
        let parked = try await Self.park(app, family.token)
        switch step {
        case .passwordReset:
            #expect(try await Self.useReset(app, try await Self.askReset(app, Self.owner), password: "the owner's new password").status == .noContent)
        case .passwordChange:
            let changed = try await app.send(.POST, "/api/v1/me/password", token: family.token,
                                             json: try Self.json(["current_password": Self.password, "new_password": "the owner's new password"]))
            #expect(changed.status == .noContent)
        case .signOutEverywhere:
            #expect(try await app.send(.DELETE, "/api/v1/me/devices", token: family.token).status == .noContent)
        case .consoleSignOut, .consoleLock:
            // Support acting for the family: the console's "Sign every device out" and "Lock".
            let admin = try await app.console(role: .admin)
            let action = step == .consoleLock ? "lock" : "sign_out"
            let done = try await admin.post("/admin/parents/batch", [("action", action), ("ids[]", String(family.id)), ("return_to", "/admin/parents")])
            #expect(done.status == .seeOther)
        case .newerChange:
            let newer = try await Self.park(app, family.token, to: "owner.new@example.com")
            try Self.expectInvalidToken(try await Self.confirm(app, parked))
            #expect(try await Self.confirm(app, newer).status == .noContent)
            #expect(try await Self.email(app, family.id) == "owner.new@example.com")
            return
        }
        try Self.expectInvalidToken(try await Self.confirm(app, parked))
        #expect(try await Self.email(app, family.id) == Self.owner)
    }

    @Test("an address signed up by someone else, with a change parked: the owner's verification ends the change", .app)
    func verificationEndsParkedChange() async throws {
        let app = try app()
        #expect(try await SelfServiceAccountsTests.signUp(app, Self.owner).status == .accepted)
        let squatter = try await FamilyAccountsTests.signIn(app, Self.owner, password: Self.password)
        let parked = try await Self.park(app, squatter.access)
        // The owner, mailed "Confirm your email", confirms the address the account was made with.
        #expect(try await Self.confirm(app, try await Self.link(app, to: Self.owner, kind: "verify")).status == .noContent)
        try Self.expectInvalidToken(try await Self.confirm(app, parked))
        let parent = try await app.count("SELECT id AS n FROM parents")
        #expect(try await Self.email(app, parent) == Self.owner)
    }

    @Test("a parked change confirmed at the moment the owner resets the password: one of the two wins, never both", .app)
    func confirmRacesReset() async throws {
        let app = try app()
        for trial in 0..<4 {
            let owner = "owner\(trial)@example.com", thief = "thief\(trial)@example.net"
            let family = try await app.makeParent(email: owner, password: Self.password)
            let parked = try await Self.park(app, family.token, to: thief)
            let reset = try await Self.askReset(app, owner)
            async let confirming = Self.confirm(app, parked)
            async let resetting = Self.useReset(app, reset, password: "the owner's new password")
            let (confirmed, wasReset) = try await (confirming, resetting)
            let statuses = "trial \(trial): confirm \(confirmed.status.code), reset \(wasReset.status.code)"
            #expect([confirmed.status, wasReset.status].filter { $0 == .noContent }.count == 1, "\(statuses)")
            #expect([confirmed.status, wasReset.status].allSatisfy { $0 == .noContent || $0 == .badRequest }, "\(statuses)")
            #expect(try await Self.email(app, family.id) == (confirmed.status == .noContent ? thief : owner), "\(statuses)")
        }
    }

    @Test("a reset link mailed to the old address ends when the address changes", .app)
    func resetLinkEndsWithAddressChange() async throws {
        let app = try app()
        let family = try await app.makeParent(email: Self.owner, password: Self.password)
        let oldReset = try await Self.askReset(app, Self.owner)
        #expect(try await Self.confirm(app, try await Self.park(app, family.token, to: "owner.new@example.com")).status == .noContent)
        try Self.expectInvalidToken(try await Self.useReset(app, oldReset, password: "whoever reads the old mailbox"))
        _ = try await FamilyAccountsTests.signIn(app, "owner.new@example.com", password: Self.password)
    }

    @Test("POST /me/email answers and mails the same whether or not the address is taken, within the per-address mail budget", .app)
    func emailChangeIsNoOracle() async throws {
        let app = try app()
        let family = try await app.makeParent(email: Self.owner, password: Self.password)
        _ = try await app.makeParent(email: "taken@example.com", password: Self.password)
        let taken = try await Self.askChange(app, family.token, to: "taken@example.com")
        let mailsAfterTaken = try await app.count("SELECT count(*) AS n FROM mail_outbox")
        let free = try await Self.askChange(app, family.token, to: "free@example.com")
        let mailsAfterFree = try await app.count("SELECT count(*) AS n FROM mail_outbox")
        #expect(taken.status == .accepted && free.status == .accepted && taken.body.string == free.body.string)
        #expect(mailsAfterTaken == mailsAfterFree - mailsAfterTaken, "mails of the taken request \(mailsAfterTaken), of the free one \(mailsAfterFree - mailsAfterTaken)")
        // The caller's own mailbox gets the same notice, the address named, either way.
        let notices = try await app.sql.raw("""
            SELECT subject, text_body FROM mail_outbox WHERE recipient = \(bind: Self.owner) AND kind = 'email_change' ORDER BY id
            """).all().map { (try $0.decode(column: "subject", as: String.self), try $0.decode(column: "text_body", as: String.self)) }
        #expect(notices.count == 2)
        if notices.count == 2 {
            #expect(notices[0].0 == notices[1].0)
            #expect(notices[0].1.replacingOccurrences(of: "taken@example.com", with: "X") == notices[1].1.replacingOccurrences(of: "free@example.com", with: "X"))
        }
        // Seven requests for one address: five mailed, then 429 with Retry-After.
        var statuses: [UInt] = []
        for _ in 0..<7 { statuses.append(try await Self.askChange(app, family.token, to: "Spam@example.com").status.code) }
        #expect(statuses == [202, 202, 202, 202, 202, 429, 429])
        #expect(try await Self.mails(app, to: "spam@example.com") == 5)
        #expect(try await Self.mails(app, to: Self.owner, kind: "email_change") == 7)
    }

    @Test("an address with a name, brackets, a comment or a second address is a 422 naming the field at each entry; the budget keys on the address", .app)
    func addressFormsRefused() async throws {
        let app = try app()
        let family = try await app.makeParent(email: "fam@example.com", password: Self.password)
        _ = try await app.makeParent(email: "victim@example.com", password: Self.password)
        let forms = ["n0<victim@example.com>", "<victim@example.com>", #""Victim" <victim@example.com>"#, "Victim <victim@example.com>",
                     "victim@example.com (home)", "victim@example.com, other@example.com", "victim@example.com;other@example.com"]
        for form in forms {
            let entries: [(String, String?, [String: String])] = [
                ("/api/v1/accounts", nil, ["email": form, "password": Self.password, "country": "FR", "time_zone": "Europe/Paris",
                                           "privacy_notice": PrivacyNotice.version]),
                ("/api/v1/auth/password-reset", nil, ["email": form]),
                ("/api/v1/accounts/verify/resend", nil, ["email": form]),
                ("/api/v1/me/email", family.token, ["email": form, "password": Self.password]),
            ]
            for (path, token, fields) in entries {
                let response = try await app.send(.POST, path, token: token, json: try Self.json(fields))
                #expect(response.status == .unprocessableEntity, "\(path) \(form)")
                #expect(try response.json["field"] as? String == "email", "\(path) \(form)")
            }
        }
        #expect(try await app.count("SELECT count(*) AS n FROM mail_outbox WHERE recipient ~ '[<>(),;\"]'") == 0)
        #expect(try await app.count("SELECT count(*) AS n FROM parents") == 2)
        // The forms spent nothing of the victim's budget; its spellings up to case and Unicode form share one.
        let spellings = ["victim@example.com", "VICTIM@example.com", " Victim@Example.com ", "victim@example.com", "victim@EXAMPLE.com", "victim@example.com"]
        var statuses: [UInt] = []
        for spelling in spellings {
            statuses.append(try await app.send(.POST, "/api/v1/auth/password-reset", json: try Self.json(["email": spelling])).status.code)
        }
        #expect(statuses == [202, 202, 202, 202, 202, 429])
        #expect(try await Self.mails(app, to: "victim@example.com", kind: "reset") == 5)
        statuses = []
        for spelling in ["zo\u{E9}@example.com", "zoe\u{301}@example.com", "zo\u{E9}@example.com", "zoe\u{301}@example.com", "zo\u{E9}@example.com", "zoe\u{301}@example.com"] {
            statuses.append(try await app.send(.POST, "/api/v1/accounts/verify/resend", json: try Self.json(["email": spelling])).status.code)
        }
        #expect(statuses == [202, 202, 202, 202, 202, 429])
    }
}
