@testable import App
import Foundation
import Testing
import Vapor

@Suite("Settings")
struct SettingsTests {
    @Test("production refuses to start without its secrets, naming them")
    func productionNeedsSecrets() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID())").path
        #expect(throws: Settings.Invalid.missing(["JWT_SECRET", "SESSION_SECRET"])) {
            try Settings.load(environment: .production, values: ["DATABASE_URL": "postgres://x@localhost/db"], directory: folder)
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/" + Settings.secretsFile))
        #expect(throws: Settings.Invalid.invalid("JWT_SECRET must be at least 32 bytes long")) {
            try Settings.load(environment: .production, values: ["DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": "short",
                                                                  "SESSION_SECRET": String(repeating: "s", count: 40)], directory: folder)
        }
    }

    @Test("development generates missing secrets once into a private file and reuses them")
    func developmentGeneratesSecrets() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID())").path
        let first = try Settings.load(environment: .development, values: ["DATABASE_URL": "postgres://x@localhost/db"], directory: folder)
        let second = try Settings.load(environment: .development, values: ["DATABASE_URL": "postgres://x@localhost/db"], directory: folder)
        #expect(first.jwtSecret == second.jwtSecret && first.sessionSecret == second.sessionSecret)
        #expect(first.jwtSecret.utf8.count >= 32 && first.jwtSecret != first.sessionSecret)
        let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/" + Settings.secretsFile)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // an explicit value wins over the file
        let explicit = try Settings.load(environment: .development, values: ["DATABASE_URL": "postgres://x@localhost/db",
                                                                              "JWT_SECRET": String(repeating: "j", count: 32)], directory: folder)
        #expect(explicit.jwtSecret == String(repeating: "j", count: 32))
        #expect(throws: Settings.Invalid.missing(["DATABASE_URL"])) {
            try Settings.load(environment: .development, values: [:], directory: folder)
        }
    }
}
