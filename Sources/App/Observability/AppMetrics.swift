import Foundation
import Metrics
import Prometheus
import Synchronization
import Vapor

/// The app's Prometheus metrics (swift-prometheus), served at `GET /metrics` (`MetricsController`)
/// from two registries:
/// - **the process's** (`AppMetrics.process`): swift-metrics' backend, bootstrapped once per
///   process (`bootstrapOnce`). Vapor reports every request there — `http_requests_total` and
///   `http_request_errors_total{method,path,status}`, `http_request_duration_seconds` — and so
///   does any library that uses swift-metrics.
/// - **this application's** (`registry`): what swift-metrics cannot say — series with their HELP
///   text, and figures of one `Application` (its catalog engine, its pool, its sign-in failures),
///   of which a process may hold several (the tests do); the gauges are read at scrape time.
final class AppMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let deltas: Prometheus.Counter
    private let statements: Prometheus.Gauge

    /// The registry behind swift-metrics' `MetricsSystem`, one per process.
    static let process = PrometheusCollectorRegistry()

    /// Vapor's request latency histogram, 1 ms to 10 s.
    static let latencyBuckets: [Duration] = [.milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                                              .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                                              .seconds(2.5), .seconds(5), .seconds(10)]

    /// Makes `process` swift-metrics' backend, the first time only: `MetricsSystem.bootstrap` may
    /// run once per process, and the tests make many applications (a static `let` is initialised
    /// once, under a lock, whoever reads it first).
    static func bootstrapOnce() { _ = bootstrapped }

    private static let bootstrapped: Bool = {
        var factory = PrometheusMetricsFactory(registry: process)
        factory.durationHistogramBuckets["http_request_duration_seconds"] = latencyBuckets
        MetricsSystem.bootstrap(factory)
        return true
    }()

    /// This instance's connections in `pg_stat_activity` (`application_name`): the process and a
    /// random part, so two apps in one process (as in the tests) are told apart.
    let applicationName = "storytime-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8).lowercased())"

    /// The database pool as PostgreSQL sees it: this instance's connections, busy and idle, beside
    /// the most the pool may open. Read at scrape time; skipped while the database is away.
    func refreshPool(_ req: Request) async {
        let limit = req.application.settings.databasePoolPerLoop * req.application.eventLoopGroup.makeIterator().reduce(0) { n, _ in n + 1 }
        registry.makeGauge(descriptor: Self.metric("storytime_db_pool_max_connections", "Connections the app's pool may open (per event loop × loops)"))
            .set(Double(limit))
        guard let row = try? await MetricsQueries.pool(applicationName: applicationName, on: req.sql) else { return }
        for (state, count) in [("busy", row.busy), ("idle", row.idle)] {
            if let n = count {
                registry.makeGauge(descriptor: Self.metric("storytime_db_pool_connections", "This instance's open database connections, by state (PostgreSQL's view)"),
                                   labels: [("state", state)]).set(Double(n))
            }
        }
    }

    /// A metric's full name (already with its unit suffix) and help text.
    static func metric(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    init() {
        Self.bootstrapOnce()
        deltas = registry.makeCounter(descriptor: Self.metric("storytime_catalog_engine_deltas_applied_total", "Change-log applications the catalog engine made (books reloaded after a commit)"))
        statements = registry.makeGauge(descriptor: Self.metric("storytime_db_statements", "SQL statements the app has sent since start"))
    }

    func loginFailed(_ kind: String) {
        registry.makeCounter(descriptor: Self.metric("storytime_login_failures_total", "Failed sign-ins (wrong email or password), parents and staff"), labels: [("kind", kind)]).increment()
    }

    func deltaApplied() { deltas.increment() }

    /// A parent catalog read on the SQL path, from the replica or the primary (`Request.catalogSQL`).
    func catalogRead(from database: String) {
        registry.makeCounter(descriptor: Self.metric("storytime_catalog_sql_reads_total", "Parent catalog reads on the SQL path, by the database that answered"),
                             labels: [("database", database)]).increment()
    }

    /// Figures read at scrape time.
    func refresh(_ app: Application) {
        let engine = app.appServices.catalogEngine
        registry.makeGauge(descriptor: Self.metric("storytime_catalog_engine_version", "Catalog version the engine reflects (-1 before its first build)"))
            .set(Double(engine.currentVersion))
        registry.makeGauge(descriptor: Self.metric("storytime_catalog_engine_books", "Active books held by the catalog engine")).set(Double(engine.bookCount))
        for state in [CatalogEngine.State.off, .building, .ready, .failed] {
            registry.makeGauge(descriptor: Self.metric("storytime_catalog_engine_state", "1 for the engine's current state"), labels: [("state", state.rawValue)]).set(engine.state == state ? 1.0 : 0.0)
        }
        for (source, count) in [("kept", engine.answersKept.load(ordering: .relaxed)), ("computed", engine.answersComputed.load(ordering: .relaxed))] {
            registry.makeGauge(descriptor: Self.metric("storytime_catalog_engine_answers", "Engine list answers since start, kept (from the answer memo) or computed"),
                               labels: [("source", source)]).set(Double(count))
        }
        registry.makeGauge(descriptor: Self.metric("storytime_catalog_engine_carries", "Carries of the engine's kept answers through changes since start (one a change; a newer change may cut one short)"))
            .set(Double(engine.carries.load(ordering: .relaxed)))
        registry.makeGauge(descriptor: Self.metric("storytime_catalog_engine_carry_seconds", "Time the engine spent carrying kept answers through changes since start (meanwhile answers the change can reach are computed and not kept)"))
            .set(Double(engine.carryMicroseconds.load(ordering: .relaxed)) / 1e6)
        registry.makeGauge(descriptor: Self.metric("storytime_catalog_engine_browses_patched", "Kept browses (no search words) a carry patched by the changed books' ±1 instead of dropping them, since start"))
            .set(Double(engine.browsesPatched.load(ordering: .relaxed)))
        registry.makeGauge(descriptor: Self.metric("storytime_catalog_cache_entries", "Responses held by the SQL path's catalog cache"))
            .set(Double(app.appServices.catalogCache.count))
        statements.set(Double(app.appServices.queryCounter.count))
    }
}


/// `GET /metrics`: Prometheus text format, for a scraper on this machine (a loopback peer that no
/// proxy forwarded: no forwarding header of any kind, not a trusted proxy) or one presenting `Authorization: Bearer $METRICS_TOKEN`; anyone else gets 404.
struct MetricsController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get("metrics", use: metrics)
    }

    @Sendable
    func metrics(req: Request) async throws -> Response {
        guard Self.allowed(req) else { throw Abort(.notFound) }
        let metrics = req.appServices.metrics
        metrics.refresh(req.application)
        await metrics.refreshPool(req)
        var body: [UInt8] = []
        metrics.registry.emit(into: &body)
        AppMetrics.process.emit(into: &body)
        return Response(status: .ok, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store"],
                        body: .init(buffer: ByteBuffer(bytes: body)))
    }

    static let forwardingHeaders = ["X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Forwarded-Host", "X-Client-IP", "True-Client-IP", "CF-Connecting-IP"]

    static func allowed(_ req: Request) -> Bool {
        if let token = req.application.settings.metricsToken, let given = req.headers.bearerAuthorization?.token {
            return Array(given.utf8).constantTimeEquals(Array(token.utf8))
        }
        // Any header a proxy would set means the request may come from elsewhere; so does a peer
        // named in TRUSTED_PROXIES (a proxy on this machine): both need the token.
        guard Self.forwardingHeaders.allSatisfy({ req.headers.first(name: $0) == nil }),
              let address = req.remoteAddress,
              !req.application.settings.trustedProxies.contains(address.ipAddress ?? "") else { return false }
        switch address {
        case .v4(let v4): return v4.address.sin_addr.s_addr & 0xFF == 127   // 127.0.0.0/8 (network byte order)
        case .v6: return address.ipAddress == "::1"
        default: return false
        }
    }
}

extension Array where Element == UInt8 {
    func constantTimeEquals(_ other: [UInt8]) -> Bool {
        guard count == other.count else { return false }
        var difference: UInt8 = 0
        for i in indices { difference |= self[i] ^ other[i] }
        return difference == 0
    }
}
