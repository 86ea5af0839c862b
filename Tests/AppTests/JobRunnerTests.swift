@testable import App
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Testing
import Vapor

/// The job runner (Support/JobRunner.swift): a `.oneInstanceAtATime` job runs on one instance at a
/// time, by a lease that holds no connection while the job works.
@Suite("Background jobs")
struct JobRunnerTests {
    @Test("two instances running one job together: one runs it, the other skips its turn; the lease is free again after", .app,
          .timeLimit(.minutes(10)))   // a hang guard: a lease that made the other instance wait would never end
    func oneInstanceAtATime() async throws {
        let app = try app()
        let (first, second) = (JobRunner(), JobRunner())
        let running = NIOLockedValueBox(0), most = NIOLockedValueBox(0)
        // The overlap is made certain, not hoped for with a sleep: the work that starts waits until the
        // other instance's turn is over (it skipped) — or until a second run of the work starts (the
        // rule broken: then both go on, and `most` says 2 rather than the test hanging).
        let gate = Gate()
        let job = Job("test job", every: .seconds(3600), .oneInstanceAtATime) {
            let now = running.withLockedValue { $0 += 1; return $0 }
            most.withLockedValue { $0 = max($0, now) }
            if now > 1 { await gate.open() }
            await gate.wait()
            running.withLockedValue { $0 -= 1 }
        }
        func turn(_ runner: JobRunner) async throws -> Bool {
            let ran = try await runner.run(job, database: app.db)
            if !ran { await gate.open() }
            return ran
        }
        async let a = turn(first)
        async let b = turn(second)
        let ran = try await [a, b]
        #expect(ran.filter { $0 }.count == 1, "\(ran)")
        #expect(most.withLockedValue { $0 } == 1)
        // Released: the other instance takes it next time.
        #expect(try await second.run(job, database: app.db))   // (the gate is open now)
        // A job that fails releases its lease too.
        struct Failed: Error {}
        let failing = Job("test job", every: .seconds(3600), .oneInstanceAtATime) { throw Failed() }
        await #expect(throws: Failed.self) { try await first.run(failing, database: app.db) }
        #expect(try await second.run(job, database: app.db))
    }

    @Test("with one connection per event loop, a job whose work sends statements runs (the lease holds no connection meanwhile)",
          .app(adjust: { $0.databasePoolPerLoop = 1 }))
    func onePooledConnection() async throws {
        let app = try app()
        let runner = JobRunner()
        let job = Job("statements", every: .seconds(3600), .oneInstanceAtATime) {
            for _ in 0..<3 { _ = try await app.count("SELECT count(*) AS n FROM books") }
        }
        // Before, the lock's transaction held the loop's only connection while the work waited for one.
        let ran = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await runner.run(job, database: app.db) }
            // A deadlock is forever; a full parallel run can slow a second's work to minutes.
            group.addTask { try await Task.sleep(for: .seconds(600)); throw TestFailure("the job did not finish within 10 minutes") }
            defer { group.cancelAll() }
            return try await group.next()!
        }
        #expect(ran)
    }

    /// Shut until opened once; then open for good.
    actor Gate {
        private var isOpen = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func open() {
            isOpen = true
            for waiter in waiting { waiter.resume() }
            waiting = []
        }

        func wait() async {
            if isOpen { return }
            await withCheckedContinuation { waiting.append($0) }
        }
    }
}
