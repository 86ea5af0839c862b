import Dispatch

/// What a memo drops when one of its generations turns or it is emptied — tens of thousands of
/// entries, tens of megabytes — freed on a thread of its own rather than under the memo's lock by
/// the request (or the change) that dropped it. Freed there, that request and every other one
/// waiting on the lock waited milliseconds for the frees: with the memos full, the one-off mix's
/// p99 went from ~15 to 28–62 ms (docs/performance.md). One serial queue: the frees of two drops
/// do not compete.
public enum Disposal {
    /// Puts `new` in `value`'s place and frees what was there on the disposal thread. The old
    /// value is moved, not copied, so the disposal holds its last reference (unless something
    /// else still does: it is then freed there, as before).
    public static func replace<T: Sendable>(_ value: inout T, with new: consuming T) {
        var old = new
        swap(&value, &old)
        later(old)
    }

    /// Frees `value` on the disposal thread (the caller gives up its reference).
    public static func later<T: Sendable>(_ value: consuming T) {
        let box = Box(value)
        queue.async { box.value = nil }
    }

    /// Tests: no drop is freed while `body` runs (what it drops stays alive until `drain`).
    public static func held<R>(_ body: () throws -> R) rethrows -> R {
        queue.suspend()
        defer { queue.resume() }
        return try body()
    }

    /// Tests: returns once everything dropped so far is freed.
    public static func drain() { queue.sync {} }

    private final class Box<T: Sendable>: @unchecked Sendable {
        var value: T?
        init(_ value: consuming T) { self.value = value }
    }

    private static let queue = DispatchQueue(label: "storytime.memo-disposal", qos: .utility)
}
