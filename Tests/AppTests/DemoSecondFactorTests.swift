import Foundation
@testable import App
import Testing

/// A newcomer's first sign-in: `seed demo` enrols the demo admin's second factor and prints its
/// secret, `App staff code` prints the current code — and refuses to under `--env production`.
@Suite("Demo second factor")
struct DemoSecondFactorTests {
    @Test("seed demo prints the demo admin's TOTP secret, and staff code prints that secret's current code")
    func demoAdminCode() async throws {
        let url = TestDatabase.url(for: try await TestDatabase.create())
        let seeded = try CommandLineTests.run(["seed", "demo", "--books", "30"], databaseURL: url)
        #expect(seeded.status == 0, "\(seeded.error)")
        let secretText = try #require(seeded.output.firstMatch(of: /secret ([A-Z2-7]{32})/)?.1)
        let secret = try #require(Data(base32Encoded: String(secretText)).map { [UInt8]($0) })

        let before = Date()
        let code = try CommandLineTests.run(["staff", "code", "--email", "admin@storytime.test"], databaseURL: url)
        let after = Date()
        #expect(code.status == 0, "\(code.error)")
        let printed = try #require(code.output.firstMatch(of: #/^(\d{6}) /#)?.1)
        // Any step while the command ran: a loaded machine can take minutes over starting it.
        let expected = Set((StaffTOTP.step(at: before)...StaffTOTP.step(at: after)).map { StaffTOTP.code(secret: secret, step: $0) })
        #expect(expected.contains(String(printed)), "printed \(printed), the secret gives \(expected)")

        let none = try CommandLineTests.run(["staff", "code", "--email", "editor@storytime.test"], databaseURL: url)
        #expect(none.status != 0 && none.error.contains("no second factor"), "\(none.output) \(none.error)")
    }

    @Test("staff code is refused under --env production, whatever the account")
    func refusedInProduction() async throws {
        let url = TestDatabase.url(for: try await TestDatabase.create())
        let process = CommandLineTests.process(["staff", "code", "--email", "admin@storytime.test", "--env", "production"], databaseURL: url)
        process.environment?["PLAYBACK_SIGNING_KEY"] = "cli-test-playback-key-long-enough-0123456789"
        process.environment?["VIDEO_WEBHOOK_SECRET"] = "cli-test-video-webhook-secret-long-enough-0123"
        process.environment?["STAFF_2FA_KEY"] = "cli-test-staff-2fa-key-long-enough-0123456789"
        let run = try CommandLineTests.run(process)
        #expect(run.status != 0)
        #expect(run.error.contains("refused with --env production"), "\(run.error)")
    }
}
