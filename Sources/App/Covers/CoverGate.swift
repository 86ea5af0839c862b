import NIOConcurrencyHelpers

/// Bounds image work on this instance: at most `workers` uploads processed at once
/// (`COVER_WORKERS`) and `queue` more waiting their turn in arrival order (`COVER_QUEUE`); past
/// that an upload is refused at once (503, `Retry-After`) instead of piling up decoders that
/// take the CPU and memory every family request needs. Admission is one decision under one lock.
final class CoverGate: Sendable {
    let workers: Int
    let queue: Int
    /// What a refused upload is told to wait (`Retry-After`, seconds).
    static let retryAfter = 5

    /// Every worker is busy and the line is full.
    struct Busy: Error {}

    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Bool, Never>] = []
        var refused = 0
    }
    private let state = NIOLockedValueBox(State())

    init(workers: Int, queue: Int) {
        precondition(workers >= 1 && queue >= 0)
        self.workers = workers
        self.queue = queue
    }

    /// Uploads refused since the start; uploads being processed; uploads waiting for a worker.
    var refused: Int { state.withLockedValue { $0.refused } }
    var running: Int { state.withLockedValue { $0.running } }
    var queued: Int { state.withLockedValue { $0.waiting.count } }

    /// Every worker busy and the line full right now: an upload arriving now is refused (and
    /// counted) before its body is read. Only a first look: `run` decides for what it admits.
    func refusesNow() -> Bool {
        state.withLockedValue { state in
            guard state.running >= workers && state.waiting.count >= queue else { return false }
            state.refused += 1
            return true
        }
    }

    /// Runs `work` when a worker is free (waiting in line when the line is short), else throws
    /// `Busy` at once.
    func run<T: Sendable>(_ work: () async throws -> T) async throws -> T {
        let admitted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let decided: Bool? = state.withLockedValue { state in
                if state.running < workers { state.running += 1; return true }
                if state.waiting.count < queue { state.waiting.append(continuation); return nil }
                state.refused += 1
                return false
            }
            if let decided { continuation.resume(returning: decided) }
        }
        guard admitted else { throw Busy() }
        defer { leave() }
        return try await work()
    }

    /// Hands the worker to the first in line (it stays taken), or frees it.
    private func leave() {
        let next = state.withLockedValue { state -> CheckedContinuation<Bool, Never>? in
            if state.waiting.isEmpty { state.running -= 1; return nil }
            return state.waiting.removeFirst()
        }
        next?.resume(returning: true)
    }
}
