import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// `GET /healthz`: 200 when the database answers within `Settings.healthTimeout` (2 s), 503 otherwise.
struct HealthController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get("healthz", use: health)
        routes.get("livez", use: live)
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
            try await req.sql.raw("SELECT 1").run()
        }
        let response = Response(status: healthy ? .ok : .serviceUnavailable)
        response.headers.contentType = .json
        response.headers.cacheControl = .init(noStore: true)
        // The catalog engine: "building" means catalog answers come from SQL for now.
        let engine = req.appServices.catalogEngine
        let catalog = req.application.settings.catalogEngine
            ? #"{"engine":"\#(engine.state.rawValue)","books":\#(engine.bookCount),"version":\#(engine.currentVersion)}"#
            : #"{"engine":"off"}"#
        response.body = .init(string: healthy ? #"{"catalog":\#(catalog),"status":"ok"}"# : #"{"catalog":\#(catalog),"reason":"database","status":"unavailable"}"#)
        return response
    }
}

extension HealthController {
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
