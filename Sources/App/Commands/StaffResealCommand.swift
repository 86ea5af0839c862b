import Core
import Foundation
import SQLKit
import Vapor

/// `staff reseal-2fa --old-key-env NAME`: seals every enrolled TOTP secret again, from the old key
/// in the environment variable NAME (never on the command line, where `ps` and shell history see
/// it) to the current `STAFF_2FA_KEY`, in one transaction. The old key is tried both as an earlier
/// `STAFF_2FA_KEY` and as the `SESSION_SECRET` secrets were sealed under before that setting
/// existed. A secret already under the current key is left as it is; if any opens under neither,
/// nothing changes and the command fails.
struct StaffResealCommand: StorytimeCommand {
    let options: Set<String> = ["old-key-env"]
    let usage = "App staff reseal-2fa --old-key-env NAME"
    var help: String {
        "Re-seals every staff second-factor secret from the old key in environment variable NAME to the current STAFF_2FA_KEY "
            + "(after rotating STAFF_2FA_KEY; or, after upgrading, with NAME = SESSION_SECRET before rotating that)."
    }

    struct Outcome { var resealed = 0, alreadyCurrent = 0 }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let name = try arguments.required("old-key-env")
        guard name.wholeMatch(of: /[A-Za-z_][A-Za-z0-9_]{0,127}/) != nil else {
            throw Abort(.badRequest, reason: "--old-key-env takes the name of an environment variable holding the old key, not the key")
        }
        guard let oldKey = ProcessInfo.processInfo.environment[name], !oldKey.isEmpty else {
            throw Abort(.badRequest, reason: "the environment variable \(name) (--old-key-env) is not set")
        }
        let settings = context.application.settings
        let current = SecretBox(staffKey: settings.staffTwoFactorKey)
        let old = [SecretBox(staffKey: oldKey), SecretBox.legacy(sessionSecret: oldKey)]
        let outcome = try await context.withDatabase { sql in try await Self.reseal(from: old, to: current, on: sql) }
        context.console.print("Re-sealed \(outcome.resealed) second-factor secret\(outcome.resealed == 1 ? "" : "s") under STAFF_2FA_KEY"
            + (outcome.alreadyCurrent > 0 ? " (\(outcome.alreadyCurrent) already were)." : "."))
    }

    /// Every stored secret, sealed again under `current` in one transaction — or none, with an
    /// error naming the staff members whose secret opens under no box.
    static func reseal(from old: [SecretBox], to current: SecretBox, on sql: any SQLDatabase) async throws -> Outcome {
        try await sql.raw("BEGIN").run()
        do {
            var outcome = Outcome(), unopened: [String] = []
            for row in try await StaffSecondFactorQueries.allSealedForUpdate(on: sql) {
                if current.open(row.totp_secret) != nil {
                    outcome.alreadyCurrent += 1
                } else if let secret = old.lazy.compactMap({ $0.open(row.totp_secret) }).first {
                    try await StaffSecondFactorQueries.reseal(user: row.id, from: row.totp_secret, to: try current.seal(secret), on: sql)
                    outcome.resealed += 1
                } else {
                    unopened.append(row.email)
                }
            }
            guard unopened.isEmpty else {
                throw Abort(.conflict, reason: "nothing changed: the second factor of \(unopened.count) staff member(s) (\(unopened.joined(separator: ", "))) "
                    + "does not open under the old key nor the current STAFF_2FA_KEY")
            }
            try await sql.raw("COMMIT").run()
            return outcome
        } catch {
            try? await sql.raw("ROLLBACK").run()
            throw error
        }
    }
}
