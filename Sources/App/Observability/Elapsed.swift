/// Durations for logs and command output, measured on `ContinuousClock` (never as the difference
/// of two wall-clock dates, which a clock change or a test moving the app's clock would skew).
extension ContinuousClock.Instant {
    /// The seconds from this instant to now.
    var secondsElapsed: Double {
        let elapsed = (ContinuousClock.now - self).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    }
}
