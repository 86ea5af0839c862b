import Core
import SQLKit
import Vapor

/// The demo admin's second factor, enrolled by `seed demo` so a newcomer can sign in within a
/// minute: `make run` prints the secret (for an authenticator app) and `App staff code --email E`
/// prints the current code. The requirement itself (`STAFF_2FA_REQUIRED`) stays as it is.
enum DemoSecondFactor {
    static let email = "admin@storytime.test"

    /// Enrols `email` with a new random secret (sealed like any other) and returns it in base32.
    static func enrol(email: String = email, box: SecretBox, on sql: any SQLDatabase) async throws -> String {
        let secret = [UInt8].random(count: 20)
        try await StaffSecondFactorQueries.enrolWithoutCode(email: email, sealed: try box.seal(secret), on: sql)
        return Data(secret).base32EncodedString()
    }

    /// The lines `make run` prints about it.
    static func credentials(secret: String) -> String {
        """
          second factor for \(email): secret \(secret) (type it into any authenticator app),
                       or run `.build/debug/App staff code --email \(email)` for the current code

        """
    }
}

/// `staff code --email E`: the current TOTP code of a staff member — for development and demos,
/// refused under `--env production` (a code there comes from the member's own phone).
struct StaffCodeCommand: StorytimeCommand {
    let options: Set<String> = ["email"]
    let usage = "App staff code --email E"
    var help: String { "Prints the current second-factor code of a staff member (not in production)." }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let app = context.application
        guard app.environment != .production else {
            throw Abort(.forbidden, reason: "staff code is refused with --env production: a code comes from the staff member's authenticator")
        }
        let email = try CommandInput.email(arguments.required("email"))
        let sealed = try await context.withDatabase { sql in try await StaffSecondFactorQueries.sealedSecret(email: email, on: sql) }
        guard let sealed else { throw Abort(.notFound, reason: "\(email) has no second factor enrolled") }
        guard let secret = try StaffSecretKeys(app.settings).open(sealed)?.secret else {
            throw Abort(.conflict, reason: "the second factor of \(email) was sealed under another STAFF_2FA_KEY")
        }
        let now = app.now
        let step = StaffTOTP.step(at: now)
        let left = StaffTOTP.period - Int(now.timeIntervalSince1970) % StaffTOTP.period
        context.console.print("\(StaffTOTP.code(secret: secret, step: step))  (valid for \(left) s more; the next code: \(StaffTOTP.code(secret: secret, step: step + 1)))")
    }
}
