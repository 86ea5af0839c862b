import Foundation
import NIOConcurrencyHelpers
import Vapor

/// The one place the server reads the time of day (`make house` refuses `Date()` anywhere else):
/// `req.now`, `app.now`, or `clock.now()` where neither is at hand. A test moves it instead of
/// sleeping (`advance(by:)`, `set(to:)`): a retry an hour away is made due by moving the clock an
/// hour, not by waiting. Durations are measured with `ContinuousClock`, not with two dates.
final class AppClock: Sendable {
    /// Seconds added to the wall clock; nil when the time is set (frozen).
    private struct State { var offset: TimeInterval = 0; var frozen: Date? }
    private let state = NIOLockedValueBox(State())

    init() {}

    /// The time now, as the app sees it.
    func now() -> Date {
        let state = state.withLockedValue { $0 }
        return state.frozen ?? Date().addingTimeInterval(state.offset)
    }

    /// Tests: moves the clock `seconds` ahead (or back, when negative), frozen or running.
    func advance(by seconds: TimeInterval) {
        state.withLockedValue { state in
            if let frozen = state.frozen { state.frozen = frozen.addingTimeInterval(seconds) } else { state.offset += seconds }
        }
    }

    /// Tests: stops the clock at `instant` (it stays there until moved).
    func set(to instant: Date) {
        state.withLockedValue { $0.frozen = instant }
    }

    /// Tests: the wall clock again.
    func reset() {
        state.withLockedValue { $0 = State() }
    }
}

extension Request {
    /// The time now, from the app's clock.
    var now: Date { application.appServices.clock.now() }
}

extension Application {
    /// The time now, from the app's clock.
    var now: Date { appServices.clock.now() }
}
