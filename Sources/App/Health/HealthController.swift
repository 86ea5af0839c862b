import NIOConcurrencyHelpers
import Vapor

/// Probes: `/livez` (the process answers), `/readyz` (this instance should get traffic: the
/// database answers and the catalog engine is built and caught up), `/healthz` (the database
/// answers; with the engine's state, for people).
struct HealthController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get("healthz", use: health)
        routes.get("livez", use: live)
        routes.get("readyz", use: ready)
    }

    /// `GET /readyz`: 200 `{"status":"ready"}` when the database answers and the engine (when on)
    /// is built and at the catalog's current version, each within `Settings.healthTimeout`;
    /// else 503 with the reason: `database`, `engine_starting` or `engine_behind`. What a load
    /// balancer takes an instance into rotation on.
    @Sendable
    func ready(req: Request) async -> Response {
        let timeout = req.application.settings.healthTimeout
        let version = NIOLockedValueBox(-1)
        let sql = req.sql
        let reachable = await HealthController.withTimeout(seconds: timeout) {
            let current = try await HealthQueries.catalogVersion(on: sql)
            version.withLockedValue { $0 = current }
        }
        let engine = req.appServices.catalogEngine
        var reason: String? = nil
        if !reachable {
            reason = "database"
        } else if req.application.settings.catalogEngine {
            if !engine.isReady {
                reason = "engine_starting"
            } else {
                let target = version.withLockedValue { $0 }, database = req.db
                let caughtUp = await HealthController.withTimeout(seconds: timeout) { try await engine.catchUp(to: target, on: database) }
                if !caughtUp || engine.currentVersion < target { reason = "engine_behind" }
            }
        }
        let catalog = Self.catalogJSON(req)
        let response = Response(status: reason == nil ? .ok : .serviceUnavailable)
        response.headers.contentType = .json
        response.headers.cacheControl = .init(noStore: true)
        if reason != nil { response.headers.replaceOrAdd(name: "Retry-After", value: "1") }
        response.body = .init(string: reason.map { #"{"catalog":\#(catalog),"reason":"\#($0)","status":"not_ready"}"# } ?? #"{"catalog":\#(catalog),"status":"ready"}"#)
        return response
    }

    /// `GET /livez`: the process answers; no database work (a liveness probe, and the HTTP floor
    /// the benchmarks compare routes against).
    @Sendable
    func live(req: Request) -> Response {
        Response.json(ByteBuffer(string: #"{"status":"ok"}"#))
    }

    @Sendable
    func health(req: Request) async -> Response {
        let healthy = await HealthController.withTimeout(seconds: req.application.settings.healthTimeout) {
            try await HealthQueries.ping(on: req.sql)
        }
        let response = Response(status: healthy ? .ok : .serviceUnavailable)
        response.headers.contentType = .json
        response.headers.cacheControl = .init(noStore: true)
        // The catalog engine: "loading" or "building" means catalog answers are not yet the engine's.
        let catalog = Self.catalogJSON(req)
        response.body = .init(string: healthy ? #"{"catalog":\#(catalog),"status":"ok"}"# : #"{"catalog":\#(catalog),"reason":"database","status":"unavailable"}"#)
        return response
    }
}

extension HealthController {
    /// The engine's state for the probes' bodies: `{"engine":"ready","books":…,"start":{…},"version":…}`.
    static func catalogJSON(_ req: Request) -> String {
        let engine = req.appServices.catalogEngine
        return req.application.settings.catalogEngine
            ? #"{"engine":"\#(engine.state.rawValue)","books":\#(engine.bookCount)\#(engine.startJSON),"version":\#(engine.currentVersion)}"#
            : #"{"engine":"off"}"#
    }

    /// Runs `work`; true when it finished without error before the deadline. The work is left to
    /// finish on its own (a task group would wait for it), so the caller answers on time.
    static func withTimeout(seconds: Double, _ work: @escaping @Sendable () async throws -> Void) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let resumed = NIOLockedValueBox(false)
            let finish: @Sendable (Bool) -> Void = { value in
                let first = resumed.withLockedValue { done in defer { done = true }; return !done }
                if first { continuation.resume(returning: value) }
            }
            Task { finish((try? await work()) != nil) }
            Task {
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
                finish(false)
            }
        }
    }
}
