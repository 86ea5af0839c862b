import Core
import Foundation
import Vapor

/// Everything the app reads from its environment, read once at start-up.
struct Settings: Sendable {
    var databaseURL: String
    /// A streaming replica for the parent catalog's reads (`DATABASE_READ_URL`; see `Request.catalogSQL`).
    var databaseReadURL: String? = nil
    var jwtSecret: String
    var sessionSecret: String
    /// Connections per event loop; the app's pool is this × the number of cores.
    var databasePoolPerLoop: Int
    /// Bcrypt cost for new password hashes.
    var bcryptCost: Int
    var tokenLifetime: TimeInterval
    /// Peers whose `X-Forwarded-For` names the client (a load balancer in front of the app).
    var trustedProxies: Set<String> = []
    /// Serve the parent catalog from the in-memory engine once it is built (`CATALOG_ENGINE=off`: SQL only).
    var catalogEngine = true
    /// Where the catalog engine keeps its snapshot (`ENGINE_SNAPSHOT_PATH`; nil: no snapshot, every
    /// start builds from SQL). Instances of one build may share the file.
    var engineSnapshotPath: String? = nil
    /// How often a running instance writes a new snapshot when the catalog changed (`ENGINE_SNAPSHOT_MINUTES`).
    var engineSnapshotMinutes = 10
    /// While the engine is not ready: catalog answers from SQL at once, and waiting beyond them
    /// (`CATALOG_FALLBACK_CONCURRENCY`, `CATALOG_FALLBACK_QUEUE`); past both, 503 `engine_starting`.
    var catalogFallbackConcurrency = 4
    var catalogFallbackQueue = 16
    /// Cover uploads processed at once on this instance (`COVER_WORKERS`) and waiting their turn
    /// (`COVER_QUEUE`); past both, an upload is refused at once (503, `Retry-After`).
    var coverWorkers = 2
    var coverQueue = 4
    /// A bearer token that opens `/metrics` to scrapers off this machine (nil: loopback only).
    var metricsToken: String? = nil
    /// The largest console form body (`CONSOLE_FORM_LIMIT_KB`): a book's 10,000-character
    /// description, percent-encoded, fits the default with room to spare.
    var consoleFormLimit = 160 * 1024
    /// The country of parents created without `--country` (`DEFAULT_COUNTRY`, ISO 3166-1 alpha-2):
    /// which rights windows apply to them.
    var defaultCountry = "US"
    /// The catalog's locales (`CATALOG_LOCALES`, the first the default; docs/localization.md).
    var catalogLocales = CatalogLocales(["en", "fr", "es", "de"])
    /// Plays older than this many months are folded into totals (`PlayRetention`).
    var playRetentionMonths = 24
    /// How long opening a database connection may take before the request is a 503
    /// (`DATABASE_CONNECT_TIMEOUT_SECONDS`).
    var databaseConnectTimeout: Int64 = 3
    /// How long `/healthz` waits for the database before answering 503 (`HEALTH_TIMEOUT_SECONDS`).
    var healthTimeout: Double = 2
    /// Where mail goes (`SMTP_URL`: `smtp://` STARTTLS required, `smtps://` TLS, `smtp+insecure://`; `SMTPServer`);
    /// nil: mail stays in the outbox, shown on the console's Outbox page (development).
    var smtpURL: String? = nil
    /// The sender of every mail (`MAIL_FROM`).
    var mailFrom = "Storytime <hello@storytime.example>"
    /// The address parents reach this service at (`PUBLIC_BASE_URL`): mailed links start with it.
    var publicBaseURL = "http://localhost:8080"
    /// The first retry of a mail that SMTP refused comes this many seconds later, doubling each
    /// time up to an hour (`MAIL_RETRY_SECONDS`).
    var mailRetrySeconds: Double = 30
    /// Web origins whose pages may call `/api/v1` from a browser (`CORS_ORIGINS`, comma-separated
    /// `https://app.example.com`; `*` any origin; none by default). Never the console.
    var corsOrigins: CORSOrigins = .none
    /// Requests an account (or, signed out, an address) may make to `/api/v1` per window
    /// (`RATE_LIMIT_REQUESTS`, `RATE_LIMIT_WINDOW_SECONDS`; 0 requests: no limit).
    var rateLimitRequests = 1200
    var rateLimitWindow = 60
    /// The HMAC key of playback grants (`PLAYBACK_SIGNING_KEY`, ≥ 32 bytes): the video CDN checks
    /// a grant's token with it. Development: generated.
    var playbackSigningKey = Settings.randomSecret()
    /// Where grants send players (`PLAYBACK_BASE_URL`): a grant's `url` is `<base>/<asset id>.m3u8`.
    var playbackBaseURL = "http://localhost:8080/media"
    /// The shared secret of the video pipeline's signed events (`VIDEO_WEBHOOK_SECRET`, Standard
    /// Webhooks: `whsec_` + base64 of ≥ 24 bytes, or any text of ≥ 32 bytes). Development: generated.
    var videoWebhookSecret = "whsec_" + Settings.randomSecret()
    /// Who must sign in to the console with a second factor (`STAFF_2FA_REQUIRED`: admin, all, none).
    var staffTwoFactor: StaffTwoFactorRequirement = .admin
    /// The key staff TOTP secrets are sealed under, through HKDF (`STAFF_2FA_KEY`, ≥ 32 bytes;
    /// rotated with `staff reseal-2fa`). Development: generated.
    var staffTwoFactorKey = Settings.randomSecret()
    /// Books need another editor's approval before they can become active (`CONSOLE_REVIEW=on`).
    var consoleReview = false
    /// The first retry of a webhook delivery that failed comes this many seconds later, growing
    /// fivefold each time up to six hours (`WEBHOOK_RETRY_SECONDS`).
    var webhookRetrySeconds: Double = 10
    /// Ranges outside the public internet that webhooks may still be sent to, for on-premise
    /// receivers (`WEBHOOK_ALLOW_PRIVATE`, comma-separated CIDR such as `10.0.0.0/8,127.0.0.1/32`;
    /// none by default: loopback, private, link-local and reserved addresses are refused).
    var webhookAllowPrivate: [IPRange] = []

    enum Invalid: Error, LocalizedError, Equatable {
        case missing([String])
        case invalid(String)
        var errorDescription: String? {
            switch self {
            case .missing(let names):
                return "missing required setting(s) \(names.joined(separator: ", ")); set them in the environment (see README, Configuration)"
            case .invalid(let text): return text
            }
        }
    }

    private static func smtp(_ text: String?) throws -> String? {
        guard let text, !text.isEmpty else { return nil }
        guard SMTPServer(url: text) != nil else {
            throw Invalid.invalid("SMTP_URL must look like smtp://user:password@host:587 (STARTTLS), smtps://host:465 or smtp+insecure://relay:25, with at most ?ca=/path/to/existing/ca.pem")
        }
        return text
    }

    private static func baseURL(_ text: String?, name: String = "PUBLIC_BASE_URL", default fallback: String = "http://localhost:8080") throws -> String {
        guard let text, !text.isEmpty else { return fallback }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            throw Invalid.invalid("\(name) must be an http(s) URL such as https://storytime.example")
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    static let secretsFile = ".secrets/development.env"

    private static func country(_ text: String?) throws -> String {
        guard let text, !text.isEmpty else { return "US" }
        guard case .success(let codes) = Territories.parse(text), codes.count == 1 else {
            throw Invalid.invalid("DEFAULT_COUNTRY must be one ISO 3166-1 alpha-2 country code such as US or FR")
        }
        return codes[0]
    }

    private static func allowPrivate(_ text: String?) throws -> [IPRange] {
        guard let ranges = OutboundAddressPolicy.allowList(text ?? "") else {
            throw Invalid.invalid("WEBHOOK_ALLOW_PRIVATE must be comma-separated CIDR ranges such as 10.0.0.0/8,127.0.0.1/32 (each starting at its boundary)")
        }
        return ranges
    }

    private static func metricsToken(_ text: String?) throws -> String? {
        guard let text, !text.isEmpty else { return nil }
        guard text.utf8.count >= 32 else { throw Invalid.invalid("METRICS_TOKEN must be at least 32 bytes long") }
        return text
    }

    /// Reads the process environment. In development, secrets that are not set are generated once
    /// into a git-ignored file and reused; in production a missing secret stops start-up.
    static func load(environment: Environment, values: [String: String] = ProcessInfo.processInfo.environment,
                     directory: String = FileManager.default.currentDirectoryPath) throws -> Settings {
        var values = values
        let secretNames = ["JWT_SECRET", "SESSION_SECRET", "PLAYBACK_SIGNING_KEY", "STAFF_2FA_KEY", "VIDEO_WEBHOOK_SECRET"]
        if environment != .production, secretNames.contains(where: { (values[$0] ?? "").isEmpty }) {
            let generated = try developmentSecrets(path: directory + "/" + secretsFile, names: secretNames)
            for (key, value) in generated where (values[key] ?? "").isEmpty { values[key] = value }
        }
        let missing = (["DATABASE_URL"] + secretNames).filter { (values[$0] ?? "").isEmpty }
        guard missing.isEmpty else { throw Invalid.missing(missing) }
        for name in secretNames.dropLast() where values[name]!.utf8.count < 32 {
            throw Invalid.invalid("\(name) must be at least 32 bytes long")
        }
        guard WebhookSignature.key(secret: values["VIDEO_WEBHOOK_SECRET"]!) != nil else {
            throw Invalid.invalid("VIDEO_WEBHOOK_SECRET must be whsec_ followed by base64 of at least 24 bytes, or at least 32 bytes of text")
        }
        func integer(_ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
            guard let text = values[name], !text.isEmpty else { return value }
            guard let number = Int(text), range.contains(number) else {
                throw Invalid.invalid("\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
            }
            return number
        }
        func choice(_ name: String, _ allowed: [String], default value: String) throws -> String {
            guard let text = values[name], !text.isEmpty else { return value }
            guard allowed.contains(text) else { throw Invalid.invalid("\(name) must be one of \(allowed.joined(separator: ", "))") }
            return text
        }
        return Settings(
            databaseURL: values["DATABASE_URL"]!,
            databaseReadURL: values["DATABASE_READ_URL"].flatMap { $0.isEmpty ? nil : $0 },
            jwtSecret: values["JWT_SECRET"]!,
            sessionSecret: values["SESSION_SECRET"]!,
            databasePoolPerLoop: try integer("DATABASE_POOL_PER_LOOP", default: 8, range: 1...100),
            bcryptCost: try integer("BCRYPT_COST", default: 12, range: 4...31),
            tokenLifetime: TimeInterval(try integer("TOKEN_LIFETIME_SECONDS", default: 3600, range: 60...2_592_000)),
            trustedProxies: Set((values["TRUSTED_PROXIES"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }),
            catalogEngine: try choice("CATALOG_ENGINE", ["on", "off"], default: "on") == "on",
            engineSnapshotPath: values["ENGINE_SNAPSHOT_PATH"].flatMap { $0.isEmpty ? nil : $0 },
            engineSnapshotMinutes: try integer("ENGINE_SNAPSHOT_MINUTES", default: 10, range: 1...1440),
            catalogFallbackConcurrency: try integer("CATALOG_FALLBACK_CONCURRENCY", default: 4, range: 0...256),
            catalogFallbackQueue: try integer("CATALOG_FALLBACK_QUEUE", default: 16, range: 0...10_000),
            coverWorkers: try integer("COVER_WORKERS", default: 2, range: 1...64),
            coverQueue: try integer("COVER_QUEUE", default: 4, range: 0...1_000),
            metricsToken: try metricsToken(values["METRICS_TOKEN"]),
            consoleFormLimit: try integer("CONSOLE_FORM_LIMIT_KB", default: 160, range: 16...10_240) * 1024,
            defaultCountry: try country(values["DEFAULT_COUNTRY"]),
            catalogLocales: try CatalogLocales(setting: values["CATALOG_LOCALES"].flatMap { $0.isEmpty ? nil : $0 } ?? "en,fr,es,de")
                ?? { throw Invalid.invalid("CATALOG_LOCALES must be locale tags separated by commas, the default first (en,fr,es,de)") }(),
            playRetentionMonths: try integer("PLAY_RETENTION_MONTHS", default: 24, range: 1...600),
            databaseConnectTimeout: Int64(try integer("DATABASE_CONNECT_TIMEOUT_SECONDS", default: 3, range: 1...60)),
            healthTimeout: Double(try integer("HEALTH_TIMEOUT_SECONDS", default: 2, range: 1...60)),
            smtpURL: try smtp(values["SMTP_URL"]),
            mailFrom: values["MAIL_FROM"].flatMap { $0.isEmpty ? nil : $0 } ?? "Storytime <hello@storytime.example>",
            publicBaseURL: try baseURL(values["PUBLIC_BASE_URL"]),
            mailRetrySeconds: Double(try integer("MAIL_RETRY_SECONDS", default: 30, range: 1...3600)),
            corsOrigins: try CORSOrigins(setting: values["CORS_ORIGINS"] ?? ""),
            rateLimitRequests: try integer("RATE_LIMIT_REQUESTS", default: 1200, range: 0...1_000_000),
            rateLimitWindow: try integer("RATE_LIMIT_WINDOW_SECONDS", default: 60, range: 1...86_400),
            playbackSigningKey: values["PLAYBACK_SIGNING_KEY"]!,
            playbackBaseURL: try baseURL(values["PLAYBACK_BASE_URL"], name: "PLAYBACK_BASE_URL", default: "\(try baseURL(values["PUBLIC_BASE_URL"]))/media"),
            videoWebhookSecret: values["VIDEO_WEBHOOK_SECRET"]!,
            staffTwoFactor: StaffTwoFactorRequirement(rawValue: try choice("STAFF_2FA_REQUIRED", StaffTwoFactorRequirement.allCases.map(\.rawValue), default: "admin"))!,
            staffTwoFactorKey: values["STAFF_2FA_KEY"]!,
            consoleReview: try choice("CONSOLE_REVIEW", ["on", "off"], default: "off") == "on",
            webhookRetrySeconds: Double(try integer("WEBHOOK_RETRY_SECONDS", default: 10, range: 1...3600)),
            webhookAllowPrivate: try allowPrivate(values["WEBHOOK_ALLOW_PRIVATE"])
        )
    }

    private static func developmentSecrets(path: String, names: [String]) throws -> [String: String] {
        var known: [String: String] = [:]
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { known[parts[0]] = parts[1] }
            }
        }
        let absent = names.filter { known[$0] == nil }
        if !absent.isEmpty {
            for name in absent { known[name] = (name == "VIDEO_WEBHOOK_SECRET" ? "whsec_" : "") + randomSecret() }
            let url = URL(fileURLWithPath: path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let body = known.keys.sorted().map { "\($0)=\(known[$0]!)" }.joined(separator: "\n") + "\n"
            try body.write(to: url, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
        return known
    }

    static func randomSecret() -> String {
        [UInt8].random(count: 48).base64
    }
}
