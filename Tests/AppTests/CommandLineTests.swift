import Foundation
@testable import App
import Testing

/// The built `App` binary, run as an operator would.
@Suite("Command line")
struct CommandLineTests {
    static var binary: String {
        ProcessInfo.processInfo.environment["STORYTIME_APP_BINARY"] ?? TestDatabase.projectDirectory + ".build/debug/App"
    }

    struct Run { let status: Int32; let output: String; let error: String }

    /// The binary with `arguments`, set up as an operator would run it against `databaseURL` (not started).
    static func process(_ arguments: [String], databaseURL: String) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: TestDatabase.projectDirectory)
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = databaseURL
        environment["JWT_SECRET"] = "cli-test-jwt-secret-long-enough-0123456789"
        environment["SESSION_SECRET"] = "cli-test-session-secret-long-enough-0123456789"
        environment["BCRYPT_COST"] = "4"
        environment["LOG_LEVEL"] = "error"
        process.environment = environment
        return process
    }

    static func run(_ arguments: [String], databaseURL: String) throws -> Run {
        try run(process(arguments, databaseURL: databaseURL))
    }

    /// Runs `process` (from `process(_:databaseURL:)`) to its end. One still running after
    /// `deadline` is killed and the test fails naming the command: a hung command must be one
    /// failed test, not a test run (and CI) stuck until its own time limit. The deadline is a hang
    /// guard, not a measure: ten minutes, as a command that takes a second alone can take minutes
    /// in a full parallel run on two cores.
    static func run(_ process: Process, deadline: Duration = .seconds(600)) throws -> Run {
        // Errors go to a file, so a child writing much of them never waits on a full pipe while
        // its output is read to its end.
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("storytime-cli-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = try FileHandle(forWritingTo: errorFile)
        let started = ContinuousClock.now
        try process.run()
        let pid = process.processIdentifier
        let killing = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + Double(deadline.components.seconds), execute: killing)
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        killing.cancel()
        let error = String(decoding: (try? Data(contentsOf: errorFile)) ?? Data(), as: UTF8.self)
        if process.terminationReason == .uncaughtSignal && ContinuousClock.now - started >= deadline {
            let command = (["App"] + (process.arguments ?? [])).joined(separator: " ")
            Issue.record("`\(command)` had not exited after \(deadline) and was killed; its errors: \(error.suffix(2000))")
        }
        return Run(status: process.terminationStatus, output: output, error: error)
    }

    @Test("staff and parent create work, and refuse bad arguments with one line and a non-zero exit")
    func accounts() async throws {
        let database = try await TestDatabase.create()
        let url = TestDatabase.url(for: database)
        let created = try Self.run(["staff", "create", "--email", "ops@example.com", "--password", "long enough pw", "--role", "admin"], databaseURL: url)
        #expect(created.status == 0, "\(created.error)")
        #expect(created.output.contains("Created admin ops@example.com"))
        let parent = try Self.run(["parent", "create", "--email", "mum@example.com", "--password", "long enough pw",
                                   "--child", "Ada", "--child", "Ben"], databaseURL: url)
        #expect(parent.status == 0, "\(parent.error)")
        #expect(parent.output.contains("Ada, Ben"))
        let zoned = try Self.run(["parent", "create", "--email", "far@example.com", "--password", "long enough pw", "--time-zone", "Pacific/Kiritimati"],
                                 databaseURL: url)
        #expect(zoned.status == 0, "\(zoned.error)")

        let bad: [[String]] = [
            ["staff", "create", "--email", "ops2@example.com", "--password", "long enough pw", "--role", "owner"],
            ["staff", "create", "--email", "not-an-email", "--password", "long enough pw"],
            ["staff", "create", "--email", "ops3@example.com"],
            ["staff", "create", "--email", "ops@example.com", "--password", "long enough pw"],
            ["parent", "create", "--email", "dad@example.com", "--password", "short"],
            ["parent", "create", "--email", "dad@example.com", "--password", "long enough pw", "--time-zone", "Mars/Olympus"],
            ["seed", "demo", "--books", "lots"],
            ["seed", "nonsense"],
        ]
        for arguments in bad {
            let run = try Self.run(arguments, databaseURL: url)
            #expect(run.status != 0, "\(arguments) should fail")
            let lines = run.error.split(separator: "\n").filter { $0.hasPrefix("error:") }
            #expect(lines.count == 1, "\(arguments): \(run.error)")
        }
        try await TestDatabase.drop(database)
    }

    @Test("a command still running at its deadline is killed and fails the test, naming it")
    func deadline() throws {
        // Ten minutes of sleep: it cannot end of itself before the one-second deadline, however late
        // a loaded machine fires the kill.
        let stuck = Self.process(["600"], databaseURL: "postgres://unused")
        stuck.executableURL = URL(fileURLWithPath: "/bin/sleep")
        try withKnownIssue {
            let run = try Self.run(stuck, deadline: .seconds(1))
            #expect(run.status == SIGKILL)
        } matching: { $0.description.contains("`App 600` had not exited after 1.0 seconds") }
    }

    @Test("an unreachable database is one line and a non-zero exit")
    func unreachable() throws {
        let run = try Self.run(["migrate"], databaseURL: "postgres://postgres@127.0.0.1:1/nowhere")
        #expect(run.status != 0)
        #expect(run.error.contains("cannot reach the database"))
        #expect(run.error.split(separator: "\n").filter { $0.hasPrefix("error:") }.count == 1)
    }

    @Test("migrate, then seed categories twice through the binary")
    func migrateAndSeed() async throws {
        let database = try await TestDatabase.createEmpty()
        let url = TestDatabase.url(for: database)
        let first = try Self.run(["migrate"], databaseURL: url)
        #expect(first.status == 0 && first.output.contains("Applied"), "\(first.error)")
        let second = try Self.run(["migrate"], databaseURL: url)
        #expect(second.status == 0 && second.output.contains("up to date"))
        let seed = try Self.run(["seed", "categories"], databaseURL: url)
        #expect(seed.output.contains("created 8"))
        let again = try Self.run(["seed", "categories"], databaseURL: url)
        #expect(again.status == 0 && again.output.contains("nothing created"))
        try await TestDatabase.drop(database)
    }

    @Test("a seed demo killed halfway leaves nothing behind, and the next seed runs as on an empty database")
    func killedSeed() async throws {
        let database = try await TestDatabase.create()
        let url = TestDatabase.url(for: database)
        let process = Self.process(["seed", "demo", "--books", "300000"], databaseURL: url)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait until the seed is inside its transaction and has written rows, then kill it (SIGKILL: no clean-up runs).
        // Polled while the seed runs, under a ten-minute hang guard: starting a debug binary and getting
        // into the seed can take minutes in a full parallel run on two cores.
        var writing = false
        let deadline = ContinuousClock.now + .seconds(600)
        while !writing && process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            let rows = try await TestDatabase.admin(rows: """
                SELECT count(*)::bigint FROM pg_stat_activity WHERE datname = '\(database)' AND state = 'active' AND xact_start < now() - interval '300 milliseconds'
                """)
            writing = rows > 0
        }
        #expect(writing, "the seed never got going")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        // PostgreSQL ends the orphaned backend's transaction when it notices the closed socket.
        var left = -1
        let closed = ContinuousClock.now + .seconds(600)
        while ContinuousClock.now < closed {
            left = try await TestDatabase.admin(rows: "SELECT count(*)::bigint FROM pg_stat_activity WHERE datname = '\(database)' AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
            if left == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(left == 0, "the killed seed's connection is still open")
        for table in ["books", "publishers", "rights_windows", "parents", "staff_users", "library_entries"] {
            let n = try await TestDatabase.admin(rows: "SELECT count(*)::bigint FROM \(table)", in: database)
            #expect(n == 0, "\(table) has \(n) rows after the killed seed")
        }
        let again = try Self.run(["seed", "demo", "--books", "50"], databaseURL: url)
        #expect(again.status == 0, "\(again.error)")
        try await TestDatabase.drop(database)
    }
}
