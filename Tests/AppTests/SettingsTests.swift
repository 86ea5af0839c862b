@testable import App
import Foundation
import Testing
import Vapor

@Suite("Settings")
struct SettingsTests {
    @Test("production refuses to start without its secrets, naming them")
    func productionNeedsSecrets() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID())").path
        #expect(throws: Settings.Invalid.missing(["JWT_SECRET", "SESSION_SECRET", "PLAYBACK_SIGNING_KEY", "STAFF_2FA_KEY", "VIDEO_WEBHOOK_SECRET"])) {
            try Settings.load(environment: .production, values: ["DATABASE_URL": "postgres://x@localhost/db"], directory: folder)
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/" + Settings.secretsFile))
        #expect(throws: Settings.Invalid.invalid("JWT_SECRET must be at least 32 bytes long")) {
            try Settings.load(environment: .production, values: ["DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": "short",
                                                                  "SESSION_SECRET": String(repeating: "s", count: 40),
                                                                  "PLAYBACK_SIGNING_KEY": String(repeating: "p", count: 40), "STAFF_2FA_KEY": String(repeating: "t", count: 40),
                                                                  "VIDEO_WEBHOOK_SECRET": String(repeating: "v", count: 40)], directory: folder)
        }
        // The pipeline's secret: Standard Webhooks' whsec_ + base64 of 24 bytes or more, or 32 bytes of text.
        let secrets = ["DATABASE_URL": "postgres://x@localhost/db", "JWT_SECRET": String(repeating: "j", count: 32),
                       "SESSION_SECRET": String(repeating: "s", count: 40), "PLAYBACK_SIGNING_KEY": String(repeating: "p", count: 40),
                       "STAFF_2FA_KEY": String(repeating: "t", count: 40)]
        for bad in ["whsec_" + Data(repeating: 1, count: 16).base64EncodedString(), "whsec_not base64!", "short"] {
            #expect(throws: Settings.Invalid.self) {
                try Settings.load(environment: .production, values: secrets.merging(["VIDEO_WEBHOOK_SECRET": bad]) { $1 }, directory: folder)
            }
        }
        let good = try Settings.load(environment: .production, values: secrets.merging(["VIDEO_WEBHOOK_SECRET": "whsec_" + Data(repeating: 1, count: 24).base64EncodedString(),
                                                                                        "PLAYBACK_BASE_URL": "https://cdn.storytime.example/v"]) { $1 }, directory: folder)
        #expect(good.playbackBaseURL == "https://cdn.storytime.example/v")
    }

    @Test("development generates missing secrets once into a private file and reuses them")
    func developmentGeneratesSecrets() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID())").path
        let first = try Settings.load(environment: .development, values: ["DATABASE_URL": "postgres://x@localhost/db"], directory: folder)
        let second = try Settings.load(environment: .development, values: ["DATABASE_URL": "postgres://x@localhost/db"], directory: folder)
        #expect(first.jwtSecret == second.jwtSecret && first.sessionSecret == second.sessionSecret)
        #expect(first.jwtSecret.utf8.count >= 32 && first.jwtSecret != first.sessionSecret)
        #expect(first.playbackSigningKey == second.playbackSigningKey && first.videoWebhookSecret == second.videoWebhookSecret)
        #expect(first.videoWebhookSecret.hasPrefix("whsec_") && first.playbackBaseURL == "http://localhost:8080/media")
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
