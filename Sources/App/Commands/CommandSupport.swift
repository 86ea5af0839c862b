import Core
import PostgresKit
import Vapor

/// A command that parses its own `--name value` options (repeatable ones included) and reports
/// a bad argument in one line, like every other failure of the command line.
protocol StorytimeCommand: AnyAsyncCommand {
    var options: Set<String> { get }
    var flags: Set<String> { get }
    var usage: String { get }
    func run(_ arguments: CommandArguments, context: CommandContext) async throws
}

extension StorytimeCommand {
    var flags: Set<String> { [] }

    func run(using context: inout CommandContext) async throws {
        let words = context.input.arguments
        if words.contains("--help") || words.contains("-h") {
            context.console.print("usage: \(usage)\n\(help)")
            return
        }
        let arguments: CommandArguments
        do {
            arguments = try CommandArguments(words, options: options, flags: flags)
        } catch let problem as CommandArguments.UsageError {
            throw Abort(.badRequest, reason: "\(problem.description) (usage: \(usage))")
        }
        context.input.arguments = []
        try await run(arguments, context: context)
    }
}

/// A group of subcommands (`seed categories`, `staff create`, ...).
protocol StorytimeCommandGroup: AnyAsyncCommand {
    var name: String { get }
    var subcommands: [String: any AnyAsyncCommand] { get }
}

extension StorytimeCommandGroup {
    func run(using context: inout CommandContext) async throws {
        let names = subcommands.keys.sorted().joined(separator: "|")
        guard let first = context.input.arguments.first else {
            throw Abort(.badRequest, reason: "\(name) needs a subcommand: \(names)")
        }
        guard let command = subcommands[first] else {
            throw Abort(.badRequest, reason: "unknown subcommand '\(name) \(first)'; expected \(names)")
        }
        context.input.arguments.removeFirst()
        try await command.run(using: &context)
    }
}

extension CommandContext {
    /// A direct database connection as SQL, for the length of `body`.
    func withDatabase<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        let app = application
        return try await DirectConnection.open(url: app.settings.databaseURL, logger: app.logger) { connection in
            try await body(connection.sql())
        }
    }
}

/// Checks of command-line values.
enum CommandInput {
    /// Checks an email address enough to catch typos; the database checks it again.
    static func email(_ email: String) throws -> String {
        let trimmed = email.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !trimmed.contains(" "), trimmed.count <= 320 else {
            throw Abort(.badRequest, reason: "'\(email)' is not an email address")
        }
        return trimmed
    }

    static func password(_ password: String) throws -> String {
        guard password.count >= 8 else { throw Abort(.badRequest, reason: "password must be at least 8 characters") }
        guard password.utf8.count <= 72 else { throw Abort(.badRequest, reason: "password must be at most 72 bytes (bcrypt's limit)") }
        return password
    }
}
