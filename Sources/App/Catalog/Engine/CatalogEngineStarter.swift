import Fluent
import NIOConcurrencyHelpers
import Vapor

/// Starts the catalog engine after the server starts, in the background: from its snapshot when
/// there is a usable one (`ENGINE_SNAPSHOT_PATH`), else by a build from SQL, retried every few
/// seconds after a failure. The instance answers from SQL meanwhile (bounded by `FallbackGate`)
/// and `/readyz` says 503. Once ready, it keeps the snapshot current: at once after a build,
/// every `ENGINE_SNAPSHOT_MINUTES` when the catalog moved, and when the app stops. The start and
/// the snapshots are jobs of `Jobs.swift`; this handler marks the engine as building at boot and
/// writes the last snapshot at shutdown.
struct CatalogEngineStarter: LifecycleHandler {
    func didBoot(_ app: Application) throws {
        guard app.environment != .testing, app.settings.catalogEngine else { return }
        app.appServices.catalogEngine.begin(.building)   // from the first request on, not only once the job runs
        _ = EngineSnapshot.build   // this build's identity, taken before a rebuild can replace the executable
    }

    /// The job `catalog engine start` (`Jobs.swift`): the first run tries the snapshot, then
    /// builds from SQL; it runs again every 5 s until the engine is ready, then does nothing. A
    /// build from SQL asks for a snapshot at once.
    static func start(_ engine: CatalogEngine, snapshot path: String?, tried: NIOLockedValueBox<Bool>,
                      database: any Database, jobs: JobRunner) async throws {
        guard !engine.isReady else { return }
        let first = tried.withLockedValue { tried in defer { tried = true }; return !tried }
        if let path, first {
            do {
                try await engine.start(fromSnapshot: path, on: database)
                return
            } catch {
                engine.logger.notice("catalog engine snapshot not used; building from the database", metadata: ["path": .string(path), "reason": .string(String(describing: error))])
            }
        }
        do {
            try await engine.build(on: database)
            jobs.wake(snapshotJob)
        } catch is CancellationError {
            return   // the app is stopping
        } catch {
            engine.logger.error("catalog engine build failed; serving from SQL and retrying in 5 s", metadata: ["error": .string(String(describing: error))])
        }
    }

    static let startJob = "catalog engine start"
    static let snapshotJob = "catalog engine snapshot"

    /// A stopping instance leaves its engine behind for the next start (a deploy's restart).
    func shutdownAsync(_ app: Application) async {
        guard app.environment != .testing, app.settings.catalogEngine, let path = app.settings.engineSnapshotPath else { return }
        do {
            try await app.appServices.catalogEngine.writeSnapshot(to: path, on: app.db, now: app.now)
        } catch {
            app.logger.warning("catalog engine snapshot not written at shutdown", metadata: ["error": .string(String(describing: error))])
        }
    }
}
