@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

/// Families sign themselves up: sign-up, the mailed links (verify, reset, new address), account
/// deletion — over HTTP, with mail delivered to a real SMTP server (aiosmtpd) and read back.
@Suite("Self-service accounts and mail")
struct SelfServiceAccountsTests {
    static let password = "a long family password"

    static func signUp(_ app: Application, _ email: String, password: String = password, notice: String = PrivacyNotice.version) async throws -> TestingHTTPResponse {
        try await app.send(.POST, "/api/v1/accounts", json: """
            {"email":"\(email)","password":"\(password)","country":"FR","time_zone":"Europe/Paris","privacy_notice":"\(notice)"}
            """)
    }

    static func code(_ response: TestingHTTPResponse) throws -> String? { try response.json["code"] as? String }

    @Test("sign-up → mail → verify → add a child → reset the password → old sessions refused")
    func signUpToReset() async throws {
        let sink = try await SMTPSink()
        defer { sink.stop() }
        try await withApp(adjust: { $0.smtpURL = sink.url; $0.publicBaseURL = "https://storytime.example" }) { app in
            #expect(try await app.get("/api/v1/privacy-notice").json["data"] as? [String: String] == ["version": PrivacyNotice.version])
            // Bad input: a field-named 422 or 400, and no account.
            let weak = try await Self.signUp(app, "ann@example.com", password: "password12")
            #expect(try weak.status == .unprocessableEntity && Self.code(weak) == "weak_password" && weak.json["field"] as? String == "password")
            let outdated = try await Self.signUp(app, "ann@example.com", notice: "2001-01-01")
            #expect(try outdated.status == .unprocessableEntity && outdated.json["field"] as? String == "privacy_notice")
            let badEmail = try await Self.signUp(app, "ann at example.com")
            #expect(try badEmail.status == .badRequest && badEmail.json["field"] as? String == "email")
            #expect(try await app.sql.raw("SELECT count(*) AS n FROM parents").one().decode(column: "n", as: Int.self) == 0)

            let created = try await Self.signUp(app, "ann@example.com")
            #expect(created.status == .accepted)
            let consent = try await app.sql.raw("""
                SELECT c.notice_version, c.address, p.email_verified_at IS NULL AS unverified, p.country, p.time_zone
                  FROM privacy_consents c JOIN parents p ON p.id = c.parent_id
                """).all()
            #expect(consent.count == 1)
            #expect(try consent.first?.decode(column: "notice_version", as: String.self) == PrivacyNotice.version)
            #expect(try consent.first?.decode(column: "unverified", as: Bool.self) == true)
            #expect(try consent.first?.decode(column: "country", as: String.self) == "FR")

            // The same address again: the same answer; its owner is mailed instead.
            let again = try await Self.signUp(app, "ANN@example.com")
            #expect(again.status == .accepted && again.body.string == created.body.string)
            let mails = try await sink.mails(to: "ann@example.com", count: 2)
            let verify = try #require(mails.first { $0.subject == "Confirm your email for Storytime" })
            #expect(mails.contains { $0.subject == "You already have a Storytime account" })
            #expect(verify.from == "hello@storytime.example")
            #expect(verify.text?.contains("https://storytime.example/account/verify?token=") == true)
            #expect(verify.html?.contains(#"href="https://storytime.example/account/verify?token="#) == true)
            let token = try #require(verify.token)

            // Unverified: signs in and browses, adds no child.
            let session = try await FamilyAccountsTests.signIn(app, "ann@example.com", password: Self.password, device: "Ann's phone")
            #expect(try await app.get("/api/v1/catalog/categories", token: session.access).status == .ok)
            let early = try await app.send(.POST, "/api/v1/children", token: session.access, json: #"{"name":"Ada"}"#)
            #expect(try early.status == .forbidden && Self.code(early) == "email_unverified")

            #expect(try await app.send(.POST, "/api/v1/accounts/verify", json: #"{"token":"\#(token)"}"#).status == .noContent)
            let reused = try await app.send(.POST, "/api/v1/accounts/verify", json: #"{"token":"\#(token)"}"#)
            #expect(try reused.status == .badRequest && Self.code(reused) == "invalid_token")
            let unknown = try await app.send(.POST, "/api/v1/accounts/verify", json: #"{"token":"nonsense"}"#)
            #expect(unknown.body.string == reused.body.string)
            #expect(try await app.send(.POST, "/api/v1/children", token: session.access, json: #"{"name":"Ada"}"#).status == .created)

            // A forgotten password: the link, a weak choice refused (the link still works), then every session ends.
            let second = try await FamilyAccountsTests.signIn(app, "ann@example.com", password: Self.password, device: "Tablet")
            let nobody = try await app.send(.POST, "/api/v1/auth/password-reset", json: #"{"email":"nobody@example.com"}"#)
            let known = try await app.send(.POST, "/api/v1/auth/password-reset", json: #"{"email":"ann@example.com"}"#)
            #expect(nobody.status == .accepted && known.status == .accepted && nobody.body.string == known.body.string)
            let reset = try #require(try await sink.mails(to: "ann@example.com", count: 3).last { $0.subject == "Reset your Storytime password" })
            let resetToken = try #require(reset.token)
            #expect(reset.text?.contains("https://storytime.example/account/reset?token=") == true)
            let tooWeak = try await app.send(.POST, "/api/v1/auth/password-reset/confirm", json: #"{"token":"\#(resetToken)","password":"short"}"#)
            #expect(try tooWeak.status == .unprocessableEntity && tooWeak.json["field"] as? String == "password")
            #expect(try await app.send(.POST, "/api/v1/auth/password-reset/confirm",
                                       json: #"{"token":"\#(resetToken)","password":"a brand new family password"}"#).status == .noContent)
            for old in [session, second] {
                let refused = try await app.get("/api/v1/children", token: old.access)
                #expect(try refused.status == .unauthorized && Self.code(refused) == "invalid_token")
                #expect(try await FamilyAccountsTests.refresh(app, old.refresh).status == .badRequest)
            }
            let again2 = try await app.send(.POST, "/api/v1/auth/password-reset/confirm", json: #"{"token":"\#(resetToken)","password":"another family password"}"#)
            #expect(try again2.status == .badRequest && Self.code(again2) == "invalid_token")
            #expect(try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"ann@example.com","password":"\#(Self.password)"}"#).status == .unauthorized)
            _ = try await FamilyAccountsTests.signIn(app, "ann@example.com", password: "a brand new family password")
            // The unknown address got nothing: no mail was ever written for it (the outbox is written in the
            // request's transaction, so this does not depend on how long delivery takes), and none arrived.
            #expect(try await app.count("SELECT count(*) AS n FROM mail_outbox WHERE recipient <> 'ann@example.com'") == 0)
            #expect(try sink.received().allSatisfy { $0.to == ["ann@example.com"] })
        }
    }

    @Test("a new address is confirmed from its mailbox before it takes effect, and the old one is told")
    func emailChange() async throws {
        let sink = try await SMTPSink(user: "mailer", password: "mail secret")
        defer { sink.stop() }
        try await withApp(adjust: { $0.smtpURL = "smtp+insecure://mailer:mail%20secret@127.0.0.1:\(sink.port)" }) { app in
            _ = try await app.makeParent(email: "bo@example.com", password: Self.password)
            _ = try await app.makeParent(email: "taken@example.com", password: Self.password)
            let session = try await FamilyAccountsTests.signIn(app, "bo@example.com", password: Self.password)
            let wrong = try await app.send(.POST, "/api/v1/me/email", token: session.access, json: #"{"email":"new@example.com","password":"not it at all"}"#)
            #expect(try wrong.status == .forbidden && Self.code(wrong) == "wrong_password")
            let same = try await app.send(.POST, "/api/v1/me/email", token: session.access, json: #"{"email":"BO@example.com","password":"\#(Self.password)"}"#)
            #expect(try same.status == .badRequest && same.json["field"] as? String == "email")
            let taken = try await app.send(.POST, "/api/v1/me/email", token: session.access, json: #"{"email":"taken@example.com","password":"\#(Self.password)"}"#)
            #expect(taken.status == .accepted)
            let asked = try await app.send(.POST, "/api/v1/me/email", token: session.access, json: #"{"email":"new@example.com","password":"\#(Self.password)"}"#)
            #expect(asked.status == .accepted && asked.body.string == taken.body.string)
            let confirm = try #require(try await sink.mails(to: "new@example.com").first)
            // The old address is told of both requests alike, the taken address as the free one.
            let notices = try await sink.mails(to: "bo@example.com", count: 2)
            #expect(notices.count == 2 && notices.allSatisfy { $0.subject == "Your Storytime email is about to change" })
            let told = try #require(notices.first { $0.text?.contains("new@example.com") == true })
            #expect(told.text?.contains("taken@example.com") == false)
            // Nothing changed yet.
            #expect(try await app.get("/api/v1/me", token: session.access).json["data"].flatMap { ($0 as? [String: Any])?["email"] as? String } == "bo@example.com")
            #expect(try await app.send(.POST, "/api/v1/accounts/verify", json: #"{"token":"\#(try #require(confirm.token))"}"#).status == .noContent)
            let me = try await app.get("/api/v1/me", token: session.access).json["data"] as? [String: Any]
            #expect(me?["email"] as? String == "new@example.com")
            _ = try await FamilyAccountsTests.signIn(app, "new@example.com", password: Self.password)
            #expect(try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"bo@example.com","password":"\#(Self.password)"}"#).status == .unauthorized)
            // The address already taken was told, with no link (round 4: the asking account learns nothing).
            let toTaken = try await sink.mails(to: "taken@example.com")
            #expect(toTaken.count == 1 && toTaken.allSatisfy { $0.token == nil && $0.subject == AccountMail.addressInUse().subject })
        }
    }

    @Test("deleting the account (password required) leaves no row of the family in any table, with a receipt")
    func deleteAccount() async throws {
        try await withApp { app in
            let keep = try await app.makeParent(email: "keep@example.com", password: Self.password, children: ["Kim"]).id
            let family = try await app.makeParent(email: "gone@example.com", password: Self.password, children: ["Ada", "Ben"])
            let (parent, children, token) = (family.id, family.children, family.token)
            let book = try await app.makeBook("The Moon")
            for child in children {
                #expect(try await app.send(.POST, "/api/v1/children/\(child)/library", token: token, json: #"{"book_id":\#(book)}"#).status.code < 300)
                #expect(try await app.send(.POST, "/api/v1/children/\(child)/library/\(book)/plays", token: token,
                                           json: #"{"position_seconds":30,"completed":false}"#).status.code < 300)
                #expect(try await app.get("/api/v1/children/\(child)/library", token: token).status == .ok)
            }
            #expect(try await app.send(.PUT, "/api/v1/children/\(children[0])/controls", token: token,
                                       json: #"{"daily_minutes":30}"#).status == .ok)
            #expect(children.allSatisfy { app.appServices.childAnswers.keepsAnswers(about: $0) })
            try await app.sql.raw("INSERT INTO mail_outbox (parent_id, kind, recipient, subject, text_body, html_body) VALUES (\(bind: parent), 'verify', 'gone@example.com', 's', 't', 'h')").run()

            let wrong = try await app.send(.DELETE, "/api/v1/me", token: token, json: #"{"password":"not the password"}"#)
            #expect(try wrong.status == .forbidden && Self.code(wrong) == "wrong_password")
            let deleted = try await app.send(.DELETE, "/api/v1/me", token: token, json: #"{"password":"\#(Self.password)"}"#)
            #expect(deleted.status == .ok)
            let receipt = try #require(try deleted.json["data"] as? [String: Any])
            let counts = receipt.compactMapValues { $0 as? Int }.filter { $0.key != "family_removed" }
            #expect(counts == ["children": 2, "library_entries": 2, "plays": 2, "controls": 1, "devices": 1])
            #expect(receipt["family_removed"] as? Bool == true)

            // Table by table: every column that names a parent or a child.
            let columns = try await app.sql.raw("""
                SELECT table_name, column_name FROM information_schema.columns
                 WHERE table_schema = 'public' AND column_name IN ('parent_id', 'child_id', 'account_id', 'added_by', 'invited_by')
                """).all().map { (try $0.decode(column: "table_name", as: String.self), try $0.decode(column: "column_name", as: String.self)) }
            #expect(columns.count >= 8)
            for (table, column) in columns {
                let ids = column == "child_id" ? children : [parent]
                let left = try await app.sql.raw("SELECT count(*) AS n FROM \(ident: table) WHERE \(ident: column) = ANY(\(bind: ids))").one()
                    .decode(column: "n", as: Int.self)
                // `ended_accounts` keeps the bare id (no data about the family) so a token of the
                // deleted account is refused on every instance however late it comes back.
                #expect(left == (table == "ended_accounts" ? 1 : 0), "\(table).\(column)")
            }
            #expect(try await app.sql.raw("SELECT count(*) AS n FROM parents WHERE id = \(bind: parent)").one().decode(column: "n", as: Int.self) == 0)
            #expect(try await app.sql.raw("SELECT count(*) AS n FROM children WHERE added_by = \(bind: keep)").one().decode(column: "n", as: Int.self) == 1)
            // Its token is refused at once, and nothing about its children is answered.
            #expect(try await app.get("/api/v1/children/\(children[0])/library", token: token).status == .unauthorized)
            #expect(children.allSatisfy { !app.appServices.childAnswers.keepsAnswers(about: $0) })
        }
    }

    @Test("mail waits in the outbox through an SMTP outage and is delivered once the server is back")
    func outboxSurvivesOutage() async throws {
        // A port nothing listens on yet: the sink is started there later.
        let probe = try await SMTPSink()
        let port = probe.port
        probe.stop()
        try await withApp(adjust: { $0.smtpURL = "smtp+insecure://127.0.0.1:\(port)"; $0.mailRetrySeconds = 1 }) { app in
            #expect(try await Self.signUp(app, "cy@example.com").status == .accepted)
            // Two failed attempts (a retry while the server is down), waited for under a hang guard, not a count
            // of polls: a full parallel run on two cores can take minutes over them.
            let deadline = ContinuousClock.now + .seconds(600)
            var attempts = 0
            while attempts < 2 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                attempts = try await app.sql.raw("SELECT attempts FROM mail_outbox").one().decode(column: "attempts", as: Int.self)
            }
            let pending = try await app.sql.raw("SELECT attempts, sent_at IS NULL AS unsent, last_error FROM mail_outbox").one()
            #expect(try pending.decode(column: "unsent", as: Bool.self))
            #expect(try pending.decode(column: "attempts", as: Int.self) >= 1)
            #expect(try pending.decode(column: "last_error", as: String?.self) != nil)

            let sink = try await SMTPSink(port: port)
            defer { sink.stop() }
            let mail = try #require(try await sink.mails(to: "cy@example.com").first)
            #expect(mail.subject == "Confirm your email for Storytime")
            var sent = false
            let delivered = ContinuousClock.now + .seconds(600)
            while !sent && ContinuousClock.now < delivered {
                sent = try await app.sql.raw("SELECT sent_at IS NOT NULL AS sent FROM mail_outbox").one().decode(column: "sent", as: Bool.self)
                if !sent { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(sent)
            #expect(try sink.received().count == 1)
        }
    }

    @Test("five concurrent sign-ups of one address make one account and one consent")
    func concurrentSignUps() async throws {
        try await withApp { app in
            let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
                for _ in 0..<5 { group.addTask { try await Self.signUp(app, "dee@example.com").status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == .accepted }, "\(statuses)")
            #expect(try await app.sql.raw("SELECT count(*) AS n FROM parents").one().decode(column: "n", as: Int.self) == 1)
            #expect(try await app.sql.raw("SELECT count(*) AS n FROM privacy_consents").one().decode(column: "n", as: Int.self) == 1)
            let kinds = try await app.sql.raw("SELECT kind FROM mail_outbox ORDER BY kind").all().map { try $0.decode(column: "kind", as: String.self) }
            #expect(kinds == ["sign_up_existing", "sign_up_existing", "sign_up_existing", "sign_up_existing", "verify"])
        }
    }

    @Test("sign-up, resend and reset spend a per-address budget: the sixth request in a window is a 429")
    func mailBudget() async throws {
        try await withApp { app in
            var statuses: [UInt] = []
            for _ in 0..<6 {
                statuses.append(try await app.send(.POST, "/api/v1/auth/password-reset", json: #"{"email":"eve@example.com"}"#).status.code)
            }
            #expect(statuses == [202, 202, 202, 202, 202, 429])
            let resend = try await app.send(.POST, "/api/v1/accounts/verify/resend", json: #"{"email":"EVE@example.com"}"#)
            #expect(resend.status == .tooManyRequests && resend.headers.first(name: "Retry-After") != nil)
        }
    }

    @Test("the mail is a multipart message: plain text and HTML, escaped, the subject encoded when not ASCII")
    func mimeMessage() throws {
        let mail = AccountMail.emailChangeRequested(to: "<script>@example.com")
        #expect(mail.html.contains("&lt;script&gt;@example.com") && !mail.html.contains("<script>"))
        let message = MIMEMessage(from: "Storytime <hello@storytime.example>", to: "a@example.com", subject: "Bonne nuit, Zoé",
                                  text: mail.text, html: mail.html, messageID: "1.abc@storytime", date: Date(timeIntervalSince1970: 0)).rendered
        #expect(message.contains("Subject: =?UTF-8?B?\(Data("Bonne nuit, Zoé".utf8).base64EncodedString())?="))
        #expect(message.contains("Date: Thu, 01 Jan 1970 00:00:00 +0000"))
        #expect(message.contains("Content-Type: text/plain; charset=utf-8") && message.contains("Content-Type: text/html; charset=utf-8"))
        #expect(message.split(separator: "\r\n", omittingEmptySubsequences: false).allSatisfy { $0.utf8.count <= 998 })
        #expect(SMTPClient.dotStuffed(".hidden\nline\n..two") == "..hidden\r\nline\r\n...two")
        #expect(SMTPServer(url: "smtps://u%40x:p%20w@mail.example:2465") == SMTPServer(url: "smtps://u%40x:p%20w@mail.example:2465"))
        let server = try #require(SMTPServer(url: "smtps://u%40x:p%20w@mail.example"))
        #expect(server.security == .implicitTLS && server.port == 465 && server.user == "u@x" && server.password == "p w")
        #expect(SMTPServer(url: "http://mail.example") == nil)
    }
    @Test("the mailed links open pages: one click confirms, a weak password keeps the form, a used link says so; the Outbox shows the mail to admins only")
    func linkPagesAndOutbox() async throws {
        try await withApp { app in
            #expect(try await Self.signUp(app, "fay@example.com").status == .accepted)
            let admin = try await app.console(role: .admin)
            let outbox = try await admin.get("/admin/outbox")
            #expect(outbox.status == .ok && outbox.html.contains("fay@example.com") && outbox.html.contains("No <code>SMTP_URL</code>"))
            // The Outbox never shows the link itself; the family's mailbox (here: the stored mail) has it.
            let token = try await SecurityRound4AccountTests.link(app, to: "fay@example.com", kind: "verify")
            #expect(!outbox.html.contains(token) && !outbox.html.contains("token="))
            let link = "http://localhost:8080/account/verify?token=\(token)"
            #expect(try await app.console(role: .editor).get("/admin/outbox").status == .forbidden)

            let path = String(link.dropFirst("http://localhost:8080".count))
            let form = try await app.get(path)
            #expect(form.status == .ok && form.body.string.contains("Confirm my email"))
            #expect(form.headers.first(name: .cacheControl) == "no-store")
            // Opening the link confirms nothing (a mail scanner may follow it); the button does.
            #expect(try await app.sql.raw("SELECT email_verified_at IS NULL AS pending FROM parents").one().decode(column: "pending", as: Bool.self))
            let confirmed = try await app.send(.POST, "/account/verify", headers: ["Content-Type": "application/x-www-form-urlencoded"], form: "token=\(token)")
            #expect(confirmed.status == .ok && confirmed.body.string.contains("Email confirmed"))
            let used = try await app.send(.POST, "/account/verify", headers: ["Content-Type": "application/x-www-form-urlencoded"], form: "token=\(token)")
            #expect(used.status == .badRequest && used.body.string.contains("expired or was already used"))

            #expect(try await app.send(.POST, "/api/v1/auth/password-reset", json: #"{"email":"fay@example.com"}"#).status == .accepted)
            let reset = try await app.sql.raw("SELECT text_body FROM mail_outbox WHERE kind = 'reset'").one().decode(column: "text_body", as: String.self)
            let resetLink = try #require(OutboxController.link(in: reset))
            let resetToken = String(resetLink.split(separator: "=").last!)
            #expect(try await app.get(String(resetLink.dropFirst("http://localhost:8080".count))).body.string.contains("New password"))
            let weak = try await app.send(.POST, "/account/reset", headers: ["Content-Type": "application/x-www-form-urlencoded"], form: "token=\(resetToken)&password=short")
            #expect(weak.status == .unprocessableEntity && weak.body.string.contains(resetToken))
            let done = try await app.send(.POST, "/account/reset", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                          form: "token=\(resetToken)&password=a+brand+new+password")
            #expect(done.status == .ok && done.body.string.contains("Password changed"))
            _ = try await FamilyAccountsTests.signIn(app, "fay@example.com", password: "a brand new password")
        }
    }
    @Test("Parents in the console (admins): the list shows state, not secrets; lock signs every device out and refuses sign-in; the audit keeps no email")
    func consoleParents() async throws {
        try await withApp { app in
            let family = try await app.makeParent(email: "gus@example.com", password: Self.password, children: ["Ada", "Ben"])
            #expect(try await app.console(role: .editor).get("/admin/parents").status == .forbidden)
            let admin = try await app.console(role: .admin)
            let list = try await admin.get("/admin/parents")
            #expect(list.status == .ok && list.html.contains("gus@example.com") && !list.html.contains("$2"))
            #expect(!list.html.contains("Ada"))
            let locked = try await admin.post("/admin/parents/batch", [("action", "lock"), ("ids[]", String(family.id)), ("return_to", "/admin/parents")])
            #expect(locked.status == .seeOther)
            // Console batches sign out through the database: every instance, this one too, knows within a second.
            let refused = try await Self.aSecondLater(app, family.token)
            #expect(try refused.status == .unauthorized && Self.code(refused) == "invalid_token")
            let signIn = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"gus@example.com","password":"\#(Self.password)"}"#)
            #expect(try signIn.status == .forbidden && Self.code(signIn) == "account_locked")
            let wrong = try await app.send(.POST, "/api/v1/auth/token", json: #"{"email":"gus@example.com","password":"not the password"}"#)
            #expect(wrong.status == .unauthorized)
            let audit = try await app.sql.raw("SELECT before::text AS b, after::text AS a FROM audit_log WHERE table_name = 'parents'").all()
            #expect(audit.count == 1)
            let texts = try audit.flatMap { [try $0.decode(column: "a", as: String.self), try $0.decode(column: "b", as: String.self)] }
            #expect(texts.count == 2 && texts.allSatisfy { !$0.contains("gus@") && $0.contains("locked_at") })
            #expect(try await admin.post("/admin/parents/batch", [("action", "unlock"), ("ids[]", String(family.id)), ("return_to", "/admin/parents")]).status == .seeOther)
            let again = try await FamilyAccountsTests.signIn(app, "gus@example.com", password: Self.password)
            #expect(try await admin.post("/admin/parents/batch", [("action", "sign_out"), ("ids[]", String(family.id)), ("return_to", "/admin/parents")]).status == .seeOther)
            #expect(try await Self.aSecondLater(app, again.access).status == .unauthorized)
        }
    }

    /// The answer to a signed-in request a second later, as the app's revocation sets see it: they are
    /// aged by 1.1 s once any read under way has ended (`RevokedSessions.age(by:)`), not waited for.
    /// (Polling for 1.2 s of wall time took whatever answer came after it: on a loaded machine, a
    /// request begun while the sets were still fresh, and answered from them, ended past that.)
    static func aSecondLater(_ app: Application, _ token: String) async throws -> TestingHTTPResponse {
        try await app.appServices.revokedSessions.age(by: .milliseconds(1100))
        return try await app.get("/api/v1/children", token: token)
    }
}
