import Core
import Vapor

/// `migrate`: applies the pending SQL files of `migrations/`; safe on every start.
struct MigrateCommand: StorytimeCommand {
    let options: Set<String> = []
    let usage = "App migrate"
    var help: String { "Applies the pending files of migrations/ in order, each in a transaction." }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let app = context.application
        let migrator = Migrator(directory: app.directory.workingDirectory + "migrations")
        let applied = try await DirectConnection.open(url: app.settings.databaseURL, logger: app.logger) { connection in
            try await migrator.migrate(on: connection, logger: app.logger)
        }
        context.console.print(applied.isEmpty
            ? "Database is up to date; no migration to apply."
            : "Applied \(applied.count) migration(s): \(applied.joined(separator: ", ")).")
    }
}
