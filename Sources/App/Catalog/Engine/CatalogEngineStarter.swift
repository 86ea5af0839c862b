import Vapor

/// Builds the catalog engine after the server starts, in the background: the instance answers
/// from SQL meanwhile (see `/healthz`), and retries a failed build every few seconds.
struct CatalogEngineStarter: LifecycleHandler {
    func didBootAsync(_ app: Application) async throws {
        guard app.settings.catalogEngine, app.environment != .testing else { return }
        let engine = app.catalogEngine
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
