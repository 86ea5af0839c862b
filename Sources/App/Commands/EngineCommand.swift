import Core
import Foundation
import Vapor

/// `engine snapshot` and `engine inspect`: the catalog engine's snapshot from the command line —
/// written before a deploy or a scale-out so new instances start from it, and checked.
struct EngineCommand: StorytimeCommandGroup {
    let name = "engine"
    var help: String { "The catalog engine's snapshot: write one now, or say what one holds and whether this build can use it." }
    var subcommands: [String: any AnyAsyncCommand] { ["snapshot": EngineSnapshotCommand(), "inspect": EngineInspectCommand(), "profile": EngineProfileCommand()] }

    static func path(_ arguments: CommandArguments, _ settings: Settings) throws -> String {
        guard let path = try arguments.single("path") ?? settings.engineSnapshotPath else {
            throw Abort(.badRequest, reason: "no snapshot path: set ENGINE_SNAPSHOT_PATH or pass --path")
        }
        return path
    }
}

struct EngineSnapshotCommand: StorytimeCommand {
    let options: Set<String> = ["path"]
    let usage = "App engine snapshot [--path FILE]"
    var help: String { "Builds the catalog engine (from the current snapshot when usable, else from SQL) and writes its snapshot to ENGINE_SNAPSHOT_PATH (or FILE)." }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let app = context.application
        let path = try EngineCommand.path(arguments, app.settings)
        let engine = CatalogEngine(logger: app.logger, buildURL: app.settings.databaseURL)
        if (try? await engine.start(fromSnapshot: path, on: app.db)) == nil { try await engine.build(on: app.db) }
        let started = ContinuousClock.now
        if let header = try await engine.writeSnapshot(to: path, on: app.db, now: app.now) {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)??.intValue ?? 0
            context.console.print("Wrote \(path): \(header.books) books at catalog version \(header.version), \(size >> 20) MB in \(String(format: "%.1f", started.secondsElapsed)) s.")
        } else {
            context.console.print("\(path) already holds catalog version \(engine.currentVersion) or newer from this build; nothing written.")
        }
    }
}

struct EngineInspectCommand: StorytimeCommand {
    let options: Set<String> = ["path"]
    let usage = "App engine inspect [--path FILE]"
    var help: String { "Prints a snapshot's header and whether this build would start from it." }

    func run(_ arguments: CommandArguments, context: CommandContext) async throws {
        let app = context.application
        let path = try EngineCommand.path(arguments, app.settings)
        let header: EngineSnapshot.Header
        do { header = try EngineSnapshot.header(at: path) } catch { throw Abort(.badRequest, reason: "\(path): \(error)") }
        let identity = try await CatalogEngine.identity(on: app.db)
        let current = identity.version
        let verdict = EngineSnapshot.refusal(of: header, expecting: identity).map { "refused: \($0)" }
            ?? "usable: \(current - header.version) catalog versions to catch up"
        context.console.print("""
            \(path)
              books \(header.books), catalog version \(header.version) (now \(current)), written \(ISO8601DateFormatter().string(from: header.writtenAt))
              build \(header.build)
              \(verdict)
            """)
    }
}
