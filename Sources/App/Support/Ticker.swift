import NIOConcurrencyHelpers

/// A background loop that runs `work` every interval and at once when woken, one run at a time
/// (wake-ups while it runs fold into one). The outboxes' delivery (mail, webhooks) runs on it.
final class Ticker: Sendable {
    private let wakeups: AsyncStream<Void>
    private let wakeup: AsyncStream<Void>.Continuation
    private let task = NIOLockedValueBox<Task<Void, Never>?>(nil)

    init() {
        (wakeups, wakeup) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks for a run now (after a transaction that wrote work committed).
    func wake() { wakeup.yield() }

    func start(every interval: Duration, _ work: @escaping @Sendable () async -> Void) {
        let (wakeups, wakeup) = (self.wakeups, self.wakeup)
        let running = Task.detached {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        wakeup.yield()
                    }
                }
                group.addTask {
                    for await _ in wakeups {
                        if Task.isCancelled { break }
                        await work()
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
        task.withLockedValue { $0 = running }
    }

    func shutdown() async {
        let running = task.withLockedValue { task in defer { task = nil }; return task }
        running?.cancel()
        wakeup.finish()
        await running?.value
    }
}
