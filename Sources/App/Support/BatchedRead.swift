import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// One statement answering many concurrent requests, each asking for its own key.
///
/// A request joins the batch that the next statement will answer, and a batch is closed before its
/// statement is sent, so every answer was read after its request arrived — a change committed
/// before a request arrives is always seen. Under load one statement answers many requests; alone,
/// a request costs one statement. Future-based: a request waits on its own event loop, with no hop
/// to the task pool. The statement serves every request of its batch, so it runs on the
/// application's pool, not on the request that happened to start it.
final class BatchedRead<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Reads the values of `keys` (a key without a value is absent from the answer).
    typealias Read = @Sendable (_ keys: [Key], _ sql: any SQLDatabase) -> EventLoopFuture<[Key: Value]>

    private struct Gate {
        var running = false
        var waiting: [(key: Key, promise: EventLoopPromise<Value?>)] = []
    }
    private let gate = NIOLockedValueBox(Gate())
    private let read: Read

    init(_ read: @escaping Read) { self.read = read }

    func value(for key: Key, on req: Request) -> EventLoopFuture<Value?> {
        let promise = req.eventLoop.makePromise(of: Value?.self)
        let start = gate.withLockedValue { gate -> Bool in
            gate.waiting.append((key, promise))
            guard !gate.running else { return false }
            gate.running = true
            return true
        }
        if start {
            let app = req.application
            readBatch(on: app.db.sql(counting: app.appServices.queryCounter))
        }
        return promise.futureResult
    }

    private func readBatch(on sql: any SQLDatabase) {
        let batch = gate.withLockedValue { gate in
            let batch = gate.waiting
            gate.waiting = []
            if batch.isEmpty { gate.running = false }
            return batch
        }
        guard !batch.isEmpty else { return }
        read(Array(Set(batch.map(\.key))), sql).whenComplete { result in
            for (key, promise) in batch { promise.completeWith(result.map { $0[key] }) }
            // The next batch starts from the loop, never from inside this callback's stack.
            sql.eventLoop.execute { self.readBatch(on: sql) }
        }
    }
}
