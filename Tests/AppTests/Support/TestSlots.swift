import PostgresNIO

/// How many tests hold an app (and its database connections) at once. Swift Testing starts every
/// async test at once; each app holds up to a pool per event loop, its engine's and its jobs'
/// connections, and past the cluster's `max_connections` tests failed with PostgreSQL's "too
/// many clients" under a full run. A test that already holds a slot (an app inside an app) does
/// not wait for another.
actor TestSlots {
    static let shared = TestSlots(limit: 24)
    @TaskLocal static var held = false

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { free = limit }

    private func acquire() async {
        if free > 0 { free -= 1; return }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }

    /// `body` while holding a slot; a PostgreSQL error leaving it is shown whole (its default
    /// description is redacted, which left a failed run unexplained).
    static func run(_ body: () async throws -> Void) async throws {
        if held { return try await shown(body) }
        await shared.acquire()
        do {
            try await $held.withValue(true) { try await shown(body) }
        } catch {
            await shared.release()
            throw error
        }
        await shared.release()
    }

    private static func shown(_ body: () async throws -> Void) async throws {
        do { try await body() } catch let error as PSQLError { throw DatabaseFailure(description: String(reflecting: error)) }
    }

    struct DatabaseFailure: Error, CustomStringConvertible { let description: String }
}
