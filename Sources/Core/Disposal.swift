import Dispatch
import Synchronization

/// What a memo drops when one of its generations turns — tens of thousands of entries, tens of
/// megabytes — freed on a worker thread of its own rather than under the memo's lock by the
/// request that filled it. Freed there, the request and every other one waiting on the lock
/// waited milliseconds for the frees: with the memos full, the one-off mix's p99 went from ~12 to
/// ~40 ms (docs/performance.md). One serial queue: the frees of two turns do not compete.
public enum Disposal {
    /// Releases this reference to `value` on the disposal thread. The caller then drops its own
    /// (a generation replaced by the next one), which is then not the last.
    public static func later<T>(_ value: T) {
        let box = Box(value)
        queue.async { box.value = nil }
    }

    /// How many values were handed over so far (tests: a turn goes through here).
    public static var handedOver: Int { count.withLock { $0 } }

    private final class Box<T>: @unchecked Sendable {
        var value: T?
        init(_ value: T) { self.value = value; Disposal.count.withLock { $0 += 1 } }
    }

    private static let queue = DispatchQueue(label: "storytime.memo-disposal", qos: .utility)
    private static let count = Mutex(0)
}
