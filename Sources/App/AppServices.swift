import Vapor

/// What the app keeps in memory beside the database: built once in `configure`, before requests
/// run concurrently, and read through `req.appServices` (or `app.appServices` outside a request).
/// Each value is safe to share: an actor-free class with its own lock, or immutable.
final class AppServices: Sendable {
    /// The time of day for everything the server does (`Support/Clock.swift`; tests move it).
    let clock: AppClock
    let metrics: AppMetrics
    let queryCounter = QueryCounter()
    /// The catalog: the in-memory index, and the SQL path's answers per catalog version.
    let catalogEngine: CatalogEngine
    let catalogCache: CatalogCache
    /// Search synonyms per `synonyms_version`; zero-result searches waiting to be counted.
    let synonyms = SynonymStore()
    let searchMisses = SearchMisses()
    /// While the engine is not ready, the bound on catalog answers from SQL.
    let catalogFallback: FallbackGate
    /// Children: their controls and libraries as the catalog needs them, their kept answers and play logs.
    let childStates = ChildStates()
    let childScopes = ChildScopes()
    let childAnswers = ChildAnswers()
    let childPlayLogs = ChildPlayLogs()
    /// Parents: countries per catalog version, verified token signatures, signed-out devices.
    let parentCountries = ParentCountries()
    let parentLocales = ParentLocales()
    let verifiedTokens = VerifiedTokens()
    let revokedSessions = RevokedSessions()
    let commonPasswords: CommonPasswords
    let timeZoneNames = TimeZoneNames()
    let dashboardAttention = DashboardAttention()
    /// The background work of `Jobs.swift` (mail and webhook delivery, retention, snapshots…).
    let jobs = JobRunner()
    /// Cover uploads: image work bounded per instance (`COVER_WORKERS`, `COVER_QUEUE`).
    let coverGate: CoverGate
    /// Video webhooks: copies of one delivery wait for the first without a database connection.
    let videoDeliveries = VideoDeliveries()

    init(logger: Logger, workingDirectory: String, settings: Settings) {
        let metrics = AppMetrics(), clock = AppClock()
        self.clock = clock
        catalogCache = CatalogCache(clock: clock)
        self.metrics = metrics
        catalogEngine = CatalogEngine(logger: logger, buildURL: settings.databaseURL, onDelta: { metrics.deltaApplied() })
        catalogFallback = FallbackGate(limit: settings.catalogFallbackConcurrency, queue: settings.catalogFallbackQueue)
        coverGate = CoverGate(workers: settings.coverWorkers, queue: settings.coverQueue)
        commonPasswords = CommonPasswords(directory: workingDirectory)
    }

    /// Drops what memory keeps about removed children (answers, play logs, catalog scopes).
    func forget(children: [Int]) {
        for child in children {
            childAnswers.forget(child: child)
            childPlayLogs.forget(child: child)
            childScopes.forget(child: child)
        }
    }
}

extension Application {
    private struct AppServicesKey: StorageKey { typealias Value = AppServices }
    var appServices: AppServices {
        get {
            guard let services = storage[AppServicesKey.self] else { fatalError("configure(_:) has not run") }
            return services
        }
        set { storage[AppServicesKey.self] = newValue }
    }

    /// The services, or nil once the application has shut down (its storage is cleared).
    var appServicesIfRunning: AppServices? { storage[AppServicesKey.self] }
}

extension Request {
    var appServices: AppServices { application.appServices }
}
