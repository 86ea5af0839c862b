import Fluent
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// A piece of background work: a name (logs, metrics, the lock), how often it runs, and whether
/// several instances may run it at once.
struct Job: Sendable {
    enum Scope: Sendable {
        /// Work about this instance's memory (its own counters, its engine): each instance runs it.
        case everyInstance
        /// Work on the shared database: one instance at a time, by one rule — the run holds a
        /// lease named after the job (`JobLease`), and an instance that finds it taken skips its turn.
        case oneInstanceAtATime
    }

    let name: String
    let every: Duration
    let scope: Scope
    let work: @Sendable () async throws -> Void

    init(_ name: String, every: Duration, _ scope: Scope, work: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.every = every
        self.scope = scope
        self.work = work
    }
}

/// The one way the server runs background work: the jobs of `Jobs.swift`, each on a `Ticker` (one
/// run at a time on the instance, every interval and at once when woken), started when the app
/// boots and stopped — awaited — when it shuts down. Not started in tests, which run a job when
/// they mean to (`run(_:)`) with the app's clock set where time matters. One-off work a request
/// starts (a batch job) runs through `spawn(_:_:)`, so shutdown waits for it too.
final class JobRunner: Sendable {
    private let tickers = NIOLockedValueBox<[String: Ticker]>([:])
    private let jobs: NIOLockedValueBox<[String: Job]> = .init([:])
    /// The one-off tasks still running, by a number of their own, and the next number.
    private let spawned = NIOLockedValueBox<(next: Int, tasks: [Int: (name: String, task: Task<Void, Never>)])>((0, [:]))

    /// The names of the jobs started (for `/readyz`-style listings and tests).
    var started: [String] { tickers.withLockedValue { $0.keys.sorted() } }

    func start(_ list: [Job], database: any Database, logger: Logger) {
        for job in list {
            let ticker = Ticker()
            jobs.withLockedValue { $0[job.name] = job }
            tickers.withLockedValue { $0[job.name] = ticker }
            ticker.start(every: job.every) {
                do { try await self.run(job, database: database) } catch {
                    logger.warning("background job failed", metadata: ["job": .string(job.name), "error": .string(String(describing: error))])
                }
            }
        }
    }

    /// Asks `name` to run now (after a request wrote work for it); nothing when it is not started.
    func wake(_ name: String) {
        let ticker = tickers.withLockedValue { $0[name] }
        ticker?.wake()
    }

    /// Who holds this runner's leases (one per instance).
    let holder = UUID().uuidString

    /// Runs `job` once, under its scope's rule; false when another instance holds its lease.
    @discardableResult
    func run(_ job: Job, database: any Database) async throws -> Bool {
        switch job.scope {
        case .everyInstance:
            try await job.work()
            return true
        case .oneInstanceAtATime:
            let sql = database as! any SQLDatabase
            guard try await JobLease.take(job.name, holder: holder, on: sql) else { return false }
            do {
                try await job.work()
            } catch {
                try? await JobLease.release(job.name, holder: holder, on: sql)
                throw error
            }
            try await JobLease.release(job.name, holder: holder, on: sql)
            return true
        }
    }

    /// Runs `work` once in the background, now; `shutdown()` waits for it to finish.
    func spawn(_ name: String, _ work: @escaping @Sendable () async -> Void) {
        // Made and recorded under the lock, so the task's own removal (which takes the lock) comes after.
        spawned.withLockedValue { state in
            let key = state.next
            state.next += 1
            state.tasks[key] = (name, Task { [spawned] in
                await work()
                _ = spawned.withLockedValue { $0.tasks.removeValue(forKey: key) }
            })
        }
    }

    /// The names of the one-off tasks still running (`spawn`).
    var runningTasks: [String] { spawned.withLockedValue { $0.tasks.values.map(\.name).sorted() } }

    func shutdown() async {
        let running = tickers.withLockedValue { tickers in defer { tickers = [:] }; return Array(tickers.values) }
        for ticker in running { await ticker.shutdown() }
        await spawnedFinished()
    }

    /// Waits until no one-off task is left (`spawn`): the second half of `shutdown()`.
    func spawnedFinished() async {
        // Until none is left: a task may have been spawned while the others were awaited.
        while let task = spawned.withLockedValue({ $0.tasks.values.first?.task }) {
            await task.value
        }
    }
}

/// The lease of a `.oneInstanceAtATime` job (`job_leases`, migration 0037): one short statement
/// takes it when it is free, expired or already this instance's; the run's end releases it. No
/// connection is held while the job works, so its own statements never wait behind the lease.
enum JobLease {
    /// How long a lease lasts if its instance dies mid-run (a longer run keeps it: nobody else
    /// takes an unexpired lease, and the holder releases it when done).
    static let seconds = 300
    private struct Taken: Decodable { let taken: Bool }

    static func take(_ name: String, holder: String, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("""
            INSERT INTO job_leases AS l (name, holder, until) VALUES (\(bind: name), \(bind: holder), now() + make_interval(secs => \(bind: seconds)))
            ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, until = EXCLUDED.until
             WHERE l.until < now() OR l.holder = EXCLUDED.holder
            RETURNING true AS taken
            """).first(decoding: Taken.self)?.taken ?? false
    }

    static func release(_ name: String, holder: String, on sql: any SQLDatabase) async throws {
        try await sql.raw("UPDATE job_leases SET until = now() WHERE name = \(bind: name) AND holder = \(bind: holder)").run()
    }
}
