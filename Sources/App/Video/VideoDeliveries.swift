import NIOConcurrencyHelpers

/// The deliveries of one `webhook-id` in progress on this instance, judged once: the first runs
/// (its transaction records the id), the others wait here for it — holding no database connection —
/// and answer `duplicate` (or, like it, that the book is unknown). A pipeline sending one event
/// eight times at once thus takes one connection, not eight: before, the seven copies each held a
/// pooled connection while PostgreSQL made them wait for the first's uncommitted row, and under
/// load a request queued behind them for a connection gave up (`connectionRequestTimeout`, a 500).
/// If the first fails, a waiting copy tries itself. Across instances the unique `webhook_id`
/// still decides (`VideoEvents.apply`).
final class VideoDeliveries: Sendable {
    private struct State {
        var running: [String: Task<VideoEvents.Outcome?, any Error>] = [:]
        var waiting = 0
    }
    private let state = NIOLockedValueBox(State())

    /// Runs `apply` for `id` unless a delivery of `id` is already running here (then waits for it).
    func deliver(_ id: String, _ apply: @escaping @Sendable () async throws -> VideoEvents.Outcome?) async throws -> VideoEvents.Outcome? {
        while true {
            let (task, first) = state.withLockedValue { state in
                if let task = state.running[id] {
                    state.waiting += 1
                    return (task, false)
                }
                let task = Task<VideoEvents.Outcome?, any Error> {
                    // Gone before its result is: a copy woken by a failure finds no failed run to wait for.
                    defer { self.state.withLockedValue { _ = $0.running.removeValue(forKey: id) } }
                    return try await apply()
                }
                state.running[id] = task
                return (task, true)
            }
            if first { return try await task.value }
            let result = await task.result
            state.withLockedValue { $0.waiting -= 1 }
            guard case .success(let outcome) = result else { continue }
            return outcome == nil ? nil : .duplicate
        }
    }

    /// Tests: how many copies are waiting for a first delivery.
    var waiting: Int { state.withLockedValue { $0.waiting } }
}
