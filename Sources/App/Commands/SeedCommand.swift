import Core
import Vapor

/// `seed categories` and `seed demo [--books N]`.
struct SeedCommand: StorytimeCommandGroup {
    let name = "seed"
    var help: String { "Seeds data: 'seed categories' (idempotent) or 'seed demo [--books N]'." }
    var subcommands: [String: any AnyAsyncCommand] {
        ["categories": SeedCategoriesCommand(), "demo": SeedDemoCommand()]
    }
}

struct SeedCategoriesCommand: StorytimeCommand {
    let options: Set<String> = []
    let usage = "App seed categories"
    var help: String { "Upserts the categories of seeds/categories.json by slug." }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let app = context.application
        let seeds = try CategorySeeder.load(directory: app.directory.workingDirectory + "seeds")
        let result = try await context.withDatabase { sql in try await CategorySeeder.upsert(seeds, on: sql) }
        context.console.print(result.summary)
    }
}

struct SeedDemoCommand: StorytimeCommand {
    let options: Set<String> = ["books", "reference-date", "credentials-file"]
    let flags: Set<String> = ["if-empty"]
    let usage = "App seed demo [--books N] [--if-empty] [--reference-date YYYY-MM-DD] [--credentials-file PATH]"
    var help: String {
        "Builds a deterministic demo catalog of N books (default 300) with publishers, videos, rights, staff and parents."
    }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let app = context.application
        let books = try arguments.single("books").map { text -> Int in
            guard let n = Int(text), (1...10_000_000).contains(n) else {
                throw Abort(.badRequest, reason: "--books must be an integer from 1 to 10000000")
            }
            return n
        } ?? 300
        var reference: Date?
        if let text = try arguments.single("reference-date") {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withFullDate]
            guard let date = formatter.date(from: text) else {
                throw Abort(.badRequest, reason: "--reference-date must be a date like 2026-01-31")
            }
            reference = date
        }
        let seeder = DemoSeeder(
            books: books, reference: reference,
            seedsDirectory: app.directory.workingDirectory + "seeds",
            hashPassword: { try app.password.hash($0) })
        let credentialsFile = try arguments.single("credentials-file")
        let console = context.console
        let outcome = try await context.withDatabase { sql in
            try await seeder.run(on: sql, skipIfNotEmpty: arguments.flags.contains("if-empty")) { line in
                console.print(line)
            }
        }
        switch outcome {
        case .skipped(let count):
            console.print("The catalog already has \(count) books; demo seed skipped.")
            if let credentialsFile, let saved = try? String(contentsOfFile: credentialsFile, encoding: .utf8) { console.print(saved) }
        case .seeded(var credentials):
            let box = StaffSecretKeys(app.settings).current
            let secret = try await context.withDatabase { sql in try await DemoSecondFactor.enrol(box: box, on: sql) }
            credentials += DemoSecondFactor.credentials(secret: secret)
            console.print(credentials)
            if let credentialsFile {
                try FileManager.default.createDirectory(atPath: (credentialsFile as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try credentials.write(toFile: credentialsFile, atomically: true, encoding: .utf8)
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: credentialsFile)
            }
        }
    }
}
