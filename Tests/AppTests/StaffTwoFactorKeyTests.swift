@testable import App
import Foundation
import SQLKit
import Testing
import Vapor

/// The key staff TOTP secrets are sealed under (`STAFF_2FA_KEY`): apart from `SESSION_SECRET`, so
/// rotating that one signs out console sessions and nothing more; secrets sealed under the legacy
/// `SESSION_SECRET` key keep working and move to the new key on use; `staff reseal-2fa` rotates it.
@Suite("Staff second-factor key")
struct StaffTwoFactorKeyTests {
    static let email = "sealed@storytime.test"

    /// A staff member enrolled with a new secret sealed by `box`; returns the secret.
    static func enrol(_ email: String = email, box: SecretBox, on app: Application) async throws -> [UInt8] {
        _ = try await Accounts.createStaff(email: email, passwordHash: try "staff password".hashedForTests(), role: .editor, on: app.sql)
        let secret = [UInt8].random(count: 20)
        try await StaffSecondFactorQueries.enrolWithoutCode(email: email, sealed: try box.seal(secret), on: app.sql)
        return secret
    }

    /// Password, then the code of the step now (at least `notBefore`: a step is used once) — the
    /// step read when the code is typed, as a phone shows it, and the app's clock (which checks it)
    /// stopped there: on a loaded machine one request may take longer than the server's drift
    /// allows. The answer's status (303 signed in).
    static func signIn(_ app: Application, secret: [UInt8], notBefore: Int64 = 0) async throws -> HTTPStatus {
        let browser = ConsoleClient(app)
        try await browser.get("/admin/login")
        let page = try await browser.post("/admin/login", [("email", email), ("password", "staff password")])
        let ticket = try #require(ConsoleWorkflowTests.value("ticket", in: page.html))
        let step = max(StaffTOTP.step(at: app.freezeClock()), notBefore)
        return try await browser.post("/admin/login/code", [("ticket", ticket), ("code", StaffTOTP.code(secret: secret, step: step))]).status
    }

    static func stored(_ app: Application, _ email: String = email) async throws -> String {
        try #require(try await StaffSecondFactorQueries.sealedSecret(email: email, on: app.sql))
    }

    @Test("rotating SESSION_SECRET leaves sign-in codes working")
    func sessionSecretRotation() async throws {
        try await withApp { app in
            let secret = try await Self.enrol(box: StaffSecretKeys(app.settings).current, on: app)
            app.settings.sessionSecret = "a-new-session-secret-after-a-restore-0123456789"
            #expect(try await Self.signIn(app, secret: secret) == .seeOther)
        }
    }

    @Test("a secret sealed under the legacy SESSION_SECRET key signs in, and is then sealed under STAFF_2FA_KEY")
    func legacyUpgradeOnUse() async throws {
        try await withApp { app in
            let legacy = SecretBox.legacy(sessionSecret: app.settings.sessionSecret)
            let secret = try await Self.enrol(box: legacy, on: app)
            let before = try await Self.stored(app)
            // A wrong code changes nothing.
            #expect(try await Self.signIn(app, secret: Array(secret.reversed())) == .unauthorized)
            #expect(try await Self.stored(app) == before)

            let used = StaffTOTP.step(at: app.now)
            #expect(try await Self.signIn(app, secret: secret, notBefore: used) == .seeOther)
            let after = try await Self.stored(app)
            #expect(after != before && legacy.open(after) == nil)
            #expect(SecretBox(staffKey: app.settings.staffTwoFactorKey).open(after) == secret)
            // Now SESSION_SECRET may rotate.
            app.settings.sessionSecret = "a-new-session-secret-after-a-restore-0123456789"
            let last = try await app.count("SELECT totp_last_step AS n FROM staff_users WHERE lower(email) = \(bind: Self.email)")
            #expect(try await Self.signIn(app, secret: secret, notBefore: Int64(last) + 1) == .seeOther)
        }
    }

    /// The binary with `arguments` and extra environment variables.
    static func run(_ arguments: [String], databaseURL: String, environment: [String: String]) throws -> CommandLineTests.Run {
        let process = CommandLineTests.process(arguments, databaseURL: databaseURL)
        for (name, value) in environment { process.environment?[name] = value }
        return try CommandLineTests.run(process)
    }

    @Test("staff reseal-2fa moves every secret to the new key; a wrong old key changes nothing; SESSION_SECRET upgrades legacy ones")
    func resealCommand() async throws {
        try await withApp { app in
            let oldKey = app.settings.staffTwoFactorKey, newKey = "the-rotated-staff-2fa-key-long-enough-0123456789"
            var secrets: [String: [UInt8]] = [:]
            for email in ["a@storytime.test", "b@storytime.test"] {
                secrets[email] = try await Self.enrol(email, box: SecretBox(staffKey: oldKey), on: app)
            }
            let url = app.settings.databaseURL
            func sealed() async throws -> [String] { try await StaffSecondFactorQueries.allSealedForUpdate(on: app.sql).map(\.totp_secret) }
            let before = try await sealed()

            let wrong = try Self.run(["staff", "reseal-2fa", "--old-key-env", "OLD_STAFF_2FA_KEY"], databaseURL: url,
                                     environment: ["STAFF_2FA_KEY": newKey, "OLD_STAFF_2FA_KEY": "not-the-old-key-but-long-enough-0123456789"])
            #expect(wrong.status != 0 && wrong.error.contains("nothing changed") && wrong.error.contains("a@storytime.test"), "\(wrong.error)")
            #expect(try await sealed() == before)
            let onCommandLine = try Self.run(["staff", "reseal-2fa", "--old-key-env", oldKey], databaseURL: url, environment: ["STAFF_2FA_KEY": newKey])
            #expect(onCommandLine.status != 0 && onCommandLine.error.contains("not the key"), "\(onCommandLine.error)")

            let moved = try Self.run(["staff", "reseal-2fa", "--old-key-env", "OLD_STAFF_2FA_KEY"], databaseURL: url,
                                     environment: ["STAFF_2FA_KEY": newKey, "OLD_STAFF_2FA_KEY": oldKey])
            #expect(moved.status == 0 && moved.output.contains("Re-sealed 2 second-factor secrets"), "\(moved.output) \(moved.error)")
            for (email, secret) in secrets {
                let now = try await Self.stored(app, email)
                #expect(SecretBox(staffKey: newKey).open(now) == secret && SecretBox(staffKey: oldKey).open(now) == nil)
            }

            // Enrolled before STAFF_2FA_KEY: sealed under the legacy key of the binary's SESSION_SECRET.
            let environment = try #require(CommandLineTests.process([], databaseURL: url).environment)
            let legacySecret = try await Self.enrol("c@storytime.test", box: .legacy(sessionSecret: try #require(environment["SESSION_SECRET"])), on: app)
            let upgraded = try Self.run(["staff", "reseal-2fa", "--old-key-env", "SESSION_SECRET"], databaseURL: url, environment: ["STAFF_2FA_KEY": newKey])
            #expect(upgraded.status == 0 && upgraded.output.contains("Re-sealed 1 second-factor secret under STAFF_2FA_KEY (2 already were)"),
                    "\(upgraded.output) \(upgraded.error)")
            #expect(SecretBox(staffKey: newKey).open(try await Self.stored(app, "c@storytime.test")) == legacySecret)
        }
    }
}
