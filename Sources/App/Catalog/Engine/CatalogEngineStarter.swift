import Vapor

/// Builds the catalog engine after the server starts, in the background: the instance answers
/// from SQL meanwhile (see `/healthz`), and retries a failed build every few seconds. Also keeps
/// the change log to its retention (`CatalogChangeLog`), engine or not: the triggers write it.
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
        let database = app.db
        Task.detached {
            while !engine.isReady {
                do {
                    try await engine.build(on: database)
                } catch {
                    engine.logger.error("catalog engine build failed; serving from SQL and retrying in 5 s", metadata: ["error": .string(String(describing: error))])
                    try? await Task.sleep(nanoseconds: 5_000_000_000)
                }
            }
        }
    }
}
