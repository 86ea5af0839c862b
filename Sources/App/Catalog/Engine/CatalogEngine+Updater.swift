extension CatalogEngine {
    /// One change application at a time; callers whose version it reached return without another.
    ///
    /// Whoever sees a finished application clears it (not only the caller that started it): a
    /// waiter that needs a newer version must never find the old, finished one still registered
    /// — awaiting a finished task does not suspend, so it would spin on the actor forever, and
    /// every later catch-up would queue behind it.
    actor Updater {
        private var running: Task<Void, any Error>?

        func run(until done: @Sendable () -> Bool, _ work: @escaping @Sendable () async throws -> Void) async throws {
            while !done() {
                let task = running ?? Task { try await work() }
                running = task
                let result = await task.result
                if running == task { running = nil }
                if case .failure(let error) = result, !done() { throw error }
            }
        }
    }
}
