import NIOConcurrencyHelpers

/// Bounds the SQL path while the engine is not ready: at most `limit` catalog answers from SQL at
/// once and `queue` more waiting their turn in arrival order; past that, a fast 503 problem
/// (`engine_starting`, `Retry-After`) instead of a request that waits seconds and takes the CPU
/// and the connections the build needs. Once the engine is ready it is not consulted. A limit of
/// 0 refuses every such request: behind a load balancer that retries a 503 on another instance
/// (`make cluster`), that is the fastest way to send the traffic where an engine is ready.
final class FallbackGate: Sendable {
    let limit: Int
    let queue: Int
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Admission, Never>] = []
        var refused = 0
    }
    private let state = NIOLockedValueBox(State())

    init(limit: Int, queue: Int) {
        precondition(limit >= 0 && queue >= 0)
        self.limit = limit
        self.queue = queue
    }

    /// How many requests it has refused since the start (a metric and a test's witness).
    var refused: Int { state.withLockedValue { $0.refused } }
    /// Answers from SQL under way, and requests waiting for a place.
    var running: Int { state.withLockedValue { $0.running } }
    var queued: Int { state.withLockedValue { $0.waiting.count } }

    /// Runs `work` when a place is free (waiting in line for one when the line is short),
    /// else throws `Problem.engineStarting` at once.
    func run<T: Sendable>(_ work: () async throws -> T) async throws -> T {
        try await enter()
        defer { leave() }
        return try await work()
    }

    private enum Admission: Sendable { case admitted, refused }

    /// One decision under one lock: a free place, a place in line (resumed by `leave`), or refusal.
    private func enter() async throws {
        let admission = await withCheckedContinuation { (continuation: CheckedContinuation<Admission, Never>) in
            let decided: Admission? = state.withLockedValue { state in
                if state.running < limit { state.running += 1; return .admitted }
                if state.waiting.count < queue { state.waiting.append(continuation); return nil }
                state.refused += 1
                return .refused
            }
            if let decided { continuation.resume(returning: decided) }
        }
        if admission == .refused { throw Problem.engineStarting }
    }

    /// Hands the place to the first in line (it stays taken), or frees it.
    private func leave() {
        let next = state.withLockedValue { state -> CheckedContinuation<Admission, Never>? in
            if state.waiting.isEmpty { state.running -= 1; return nil }
            return state.waiting.removeFirst()
        }
        next?.resume(returning: .admitted)
    }
}

extension Problem {
    /// The catalog engine of this instance is still starting and the SQL path is at its bound.
    static let engineStarting = Problem(status: .serviceUnavailable, code: "engine_starting",
                                        detail: "This server is starting and its catalog is not ready yet; try again in a second.",
                                        headers: ["Retry-After": "1"])
}
