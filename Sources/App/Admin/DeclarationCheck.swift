import Vapor

/// When `serve` starts: every console declaration's SQL is planned against the database, and a
/// mistake stops start-up with the resource named. A database that cannot be reached yet is not a
/// mistake (the app starts and answers 503 until it is back); the check is logged as skipped.
struct DeclarationCheck: LifecycleHandler {
    func didBootAsync(_ app: Application) async throws {
        guard app.environment != .testing else { return }
        let command = app.environment.arguments.dropFirst().first
        guard command == nil || command == "serve" || command?.hasPrefix("-") == true else { return }
        do {
            try await ResourceRegistry.checkSQL(on: app.db.sql(counting: app.appServices.queryCounter))
        } catch let error as ResourceRegistry.DeclarationError where !DatabaseOutage.matches(error) {
            app.logger.critical("\(error)")
            throw error
        } catch {
            app.logger.warning("console declarations not checked: the database cannot be reached", metadata: ["error": .string(String(describing: error))])
        }
    }
}
