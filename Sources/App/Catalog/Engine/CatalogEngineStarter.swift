import Vapor

/// Starts the catalog engine after the server starts, in the background: from its snapshot when
/// there is a usable one (`ENGINE_SNAPSHOT_PATH`), else by a build from SQL, retried every few
/// seconds after a failure. The instance answers from SQL meanwhile (bounded by `FallbackGate`)
/// and `/readyz` says 503. Once ready, it keeps the snapshot current: at once after a build,
/// every `ENGINE_SNAPSHOT_MINUTES` when the catalog moved, and when the app stops.
///
/// Also keeps the change log to its retention (`CatalogChangeLog`), engine or not: the triggers write it.
struct CatalogEngineStarter: LifecycleHandler {
    func didBootAsync(_ app: Application) async throws {
        guard app.environment != .testing else { return }
        let sql = app.db.sql(counting: app.appServices.queryCounter), logger = app.logger
        Task.detached {
            while true {
                try? await Task.sleep(for: CatalogChangeLog.interval)
                do {
                    let purged = try await CatalogChangeLog.purge(on: sql)
                    if purged > 0 { logger.info("catalog change log purged", metadata: ["rows": .stringConvertible(purged)]) }
                } catch {
                    logger.warning("catalog change log purge failed", metadata: ["error": .string(String(describing: error))])
                }
            }
        }
        guard app.settings.catalogEngine else { return }
        let engine = app.appServices.catalogEngine
        engine.begin(.building)   // from the first request on, not only once the task below runs
        let database = app.db
        _ = EngineSnapshot.build   // this build's identity, taken before a rebuild can replace the executable
        let path = app.settings.engineSnapshotPath, interval = Duration.seconds(app.settings.engineSnapshotMinutes * 60)
        Task.detached {
            var fromSnapshot = false
            if let path {
                do {
                    try await engine.start(fromSnapshot: path, on: database)
                    fromSnapshot = true
                } catch {
                    engine.logger.notice("catalog engine snapshot not used; building from the database", metadata: ["path": .string(path), "reason": .string(String(describing: error))])
                }
            }
            while !engine.isReady {
                do {
                    try await engine.build(on: database)
                } catch {
                    engine.logger.error("catalog engine build failed; serving from SQL and retrying in 5 s", metadata: ["error": .string(String(describing: error))])
                    try? await Task.sleep(nanoseconds: 5_000_000_000)
                }
            }
            guard let path else { return }
            if fromSnapshot { try? await Task.sleep(for: interval) }
            while true {
                do {
                    try await engine.writeSnapshot(to: path, on: database)
                } catch {
                    engine.logger.warning("catalog engine snapshot not written", metadata: ["path": .string(path), "error": .string(String(describing: error))])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// A stopping instance leaves its engine behind for the next start (a deploy's restart).
    func shutdownAsync(_ app: Application) async {
        guard app.environment != .testing, app.settings.catalogEngine, let path = app.settings.engineSnapshotPath else { return }
        do {
            try await app.appServices.catalogEngine.writeSnapshot(to: path, on: app.db)
        } catch {
            app.logger.warning("catalog engine snapshot not written at shutdown", metadata: ["error": .string(String(describing: error))])
        }
    }
}
