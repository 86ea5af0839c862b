import Fluent
import FluentPostgresDriver
import JWT
import Leaf
import NIOCore
import Vapor

/// Configures the application: settings, database pool, encoders, middleware, routes, commands.
/// Tests pass their own `settings` (their own database); the app reads the environment.
func configure(_ app: Application, settings: Settings? = nil) async throws {
    let settings = try settings ?? Settings.load(environment: app.environment)
    app.settings = settings
    // Everything kept in memory, created before requests run concurrently.
    app.appServices = AppServices(logger: app.logger, workingDirectory: app.directory.workingDirectory, settings: settings)

    var postgres = try SQLPostgresConfiguration(url: settings.databaseURL)
    postgres.coreConfiguration.options.connectTimeout = .seconds(settings.databaseConnectTimeout)
    // Names this instance's connections, so /metrics can report its pool as PostgreSQL sees it.
    postgres.coreConfiguration.options.additionalStartupParameters = [("application_name", app.appServices.metrics.applicationName)]
    // A request may wait for a connection being opened: never give up before the opening would.
    app.databases.use(
        .postgres(configuration: postgres, maxConnectionsPerEventLoop: settings.databasePoolPerLoop,
                  connectionPoolTimeout: .seconds(max(5, settings.databaseConnectTimeout)), sqlLogLevel: .debug),
        as: .psql)
    if let readURL = settings.databaseReadURL {
        var replica = try SQLPostgresConfiguration(url: readURL)
        replica.coreConfiguration.options.connectTimeout = .seconds(settings.databaseConnectTimeout)
        app.databases.use(
            .postgres(configuration: replica, maxConnectionsPerEventLoop: settings.databasePoolPerLoop,
                      connectionPoolTimeout: .seconds(2), sqlLogLevel: .debug),
            as: .psqlRead, isDefault: false)
    }

    await app.jwt.keys.add(hmac: HMACKey(from: settings.jwtSecret), digestAlgorithm: .sha256)
    app.playbackKeys = await PlaybackKeys.make(secret: settings.playbackSigningKey)
    app.passwords.use(.bcrypt(cost: settings.bcryptCost))

    // The contract's layout: templates/ and public/ (Vapor's defaults are Resources/Views/ and Public/).
    app.directory.viewsDirectory = app.directory.workingDirectory + "templates/"
    app.directory.publicDirectory = app.directory.workingDirectory + "public/"
    app.views.use(.leaf)

    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    encoder.dateEncodingStrategy = .iso8601
    // Stable output: the same data gives the same bytes (and ETag) on every instance.
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    ContentConfiguration.global.use(encoder: encoder, for: .json)
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    decoder.dateDecodingStrategy = .iso8601
    ContentConfiguration.global.use(decoder: decoder, for: .json)
    app.routes.defaultMaxBodySize = "64kb"

    guard app.appServices.commonPasswords.words.count > 1000 else {
        throw Abort(.internalServerError, reason: "data/common-passwords.txt is missing from \(app.directory.workingDirectory): run the app from the repository's folder")
    }

    try routes(app)
    // The server (and tests) write CONSOLE_REVIEW where the database reads it; other commands
    // (`migrate`, `staff create`) leave the running servers' choice alone.
    if app.environment == .testing || [nil, "serve"].contains(app.environment.arguments.dropFirst().first) {
        try await ReviewPolicy.write(settings.consoleReview, on: app)
    }
    // Replace the default error middleware: /api answers problem+json, the rest plain errors.
    // Outermost first; the HTTP conventions (docs/api.md) sit around the problems they shape.
    app.middleware = .init()
    app.middleware.use(SecurityHeadersMiddleware())
    app.middleware.use(RequestObservationMiddleware())
    app.middleware.use(CompressionMiddleware())
    app.middleware.use(CORSMiddleware(origins: settings.corsOrigins))
    app.middleware.use(RateLimitMiddleware(limit: settings.rateLimitRequests, window: settings.rateLimitWindow))
    app.middleware.use(IdempotencyMiddleware())
    app.middleware.use(ProblemErrorMiddleware(environment: app.environment, page: ErrorPage.response))
    app.middleware.use(ConditionalGETMiddleware())
    app.middleware.use(MethodRoutingMiddleware(table: RouteMethods(app.routes)))
    app.middleware.use(PublicFilesMiddleware(directory: app.directory.publicDirectory))
    app.lifecycle.use(DeclarationCheck())
    app.lifecycle.use(CatalogEngineStarter())
    // Background work (Jobs.swift); stopped first at shutdown (handlers stop in reverse order).
    app.lifecycle.use(JobsStarter())

    // Fluent registers its own model-based `migrate`; ours applies the SQL files of migrations/.
    _ = app.migrations
    app.asyncCommands.use(MigrateCommand(), as: "migrate")
    app.asyncCommands.use(SeedCommand(), as: "seed")
    app.asyncCommands.use(StaffCommand(), as: "staff")
    app.asyncCommands.use(ParentCommand(), as: "parent")
    app.asyncCommands.use(CatalogSQLCommand(), as: "catalog-sql")
    app.asyncCommands.use(PlaysCommand(), as: "plays")
    app.asyncCommands.use(EngineCommand(), as: "engine")
    app.asyncCommands.use(VideoCommand(), as: "video")
}

extension Application {
    private struct SettingsKey: StorageKey { typealias Value = Settings }
    var settings: Settings {
        get {
            guard let settings = storage[SettingsKey.self] else { fatalError("configure(_:) has not run") }
            return settings
        }
        set { storage[SettingsKey.self] = newValue }
    }
}
