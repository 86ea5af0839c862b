import Core
import Vapor

/// `plays fold [--months N]`: folds plays older than N months (default `PLAY_RETENTION_MONTHS`)
/// into totals now, as the hourly job does (`PlayRetention`).
struct PlaysCommand: StorytimeCommandGroup {
    let name = "plays"
    var help: String { "Viewing history upkeep: fold plays older than the retention period into totals." }
    var subcommands: [String: any AnyAsyncCommand] { ["fold": PlaysFoldCommand()] }
}

struct PlaysFoldCommand: StorytimeCommand {
    let options: Set<String> = ["months"]
    let usage = "App plays fold [--months 24]"
    var help: String { "Folds plays older than the retention period into monthly and daily totals (the hourly job, now)." }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        var months = context.application.settings.playRetentionMonths
        if let text = try arguments.single("months") {
            guard let value = Int(text), (1...600).contains(value) else { throw Abort(.badRequest, reason: "--months must be 1 to 600") }
            months = value
        }
        let outcome = try await context.withDatabase { sql in try await PlayRetention.fold(olderThanMonths: months, on: sql) }
        context.console.print(outcome.skipped
            ? "Another instance is folding plays now; nothing done."
            : "Folded \(outcome.plays) plays of \(outcome.children) children older than \(months) months.")
    }
}
