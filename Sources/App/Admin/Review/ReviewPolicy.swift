import SQLKit
import Vapor

/// Writes `CONSOLE_REVIEW` where the trigger reads it (`review_policy`), when the app is
/// configured. Before migrations have run (`App migrate` itself) there is no table yet: nothing to do.
enum ReviewPolicy {
    static func write(_ required: Bool, on app: Application) async throws {
        let sql = app.db as! any SQLDatabase
        do {
            try await sql.raw("UPDATE review_policy SET required = \(bind: required)").run()
        } catch {
            app.logger.debug("review policy not written", metadata: ["error": .string(String(describing: error))])
        }
    }
}
