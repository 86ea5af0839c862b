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
        /// PostgreSQL advisory lock named after the job (in a transaction of its own), and an
        /// instance that finds it taken skips its turn.
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
/// they mean to (`run(_:)`) with the app's clock set where time matters.
final class JobRunner: Sendable {
    private let tickers = NIOLockedValueBox<[String: Ticker]>([:])
    private let jobs: NIOLockedValueBox<[String: Job]> = .init([:])

    /// The names of the jobs started (for `/readyz`-style listings and tests).
    var started: [String] { tickers.withLockedValue { $0.keys.sorted() } }

    func start(_ list: [Job], database: any Database, logger: Logger) {
        for job in list {
            let ticker = Ticker()
            jobs.withLockedValue { $0[job.name] = job }
            tickers.withLockedValue { $0[job.name] = ticker }
            ticker.start(every: job.every) {
                do { try await Self.run(job, database: database) } catch {
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

    /// Runs `job` once, under its scope's rule; false when another instance holds its lock.
    @discardableResult
    static func run(_ job: Job, database: any Database) async throws -> Bool {
        switch job.scope {
        case .everyInstance:
            try await job.work()
            return true
        case .oneInstanceAtATime:
            return try await database.transaction { db in
                let sql = db as! any SQLDatabase
                guard try await JobLock.take(job.name, on: sql) else { return false }
                try await job.work()
                return true
            }
        }
    }

    func shutdown() async {
        let running = tickers.withLockedValue { tickers in defer { tickers = [:] }; return Array(tickers.values) }
        for ticker in running { await ticker.shutdown() }
    }
}

/// The lock of a `.oneInstanceAtATime` job: a transaction-level advisory lock keyed by its name.
enum JobLock {
    private struct Taken: Decodable { let taken: Bool }

    static func take(_ name: String, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("SELECT pg_try_advisory_xact_lock(hashtextextended(\(bind: "job:" + name), 0)) AS taken")
            .first(decoding: Taken.self)?.taken ?? false
    }
}
