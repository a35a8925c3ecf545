/// Timing on the monotonic clock, and the statistics the table reports.
///
/// `ContinuousClock` is monotonic (CLOCK_BOOTTIME on Linux), so a wall-clock adjustment during a run
/// cannot bend a measurement.
enum Stopwatch {
    /// Runs `body` once and returns its result with the time it took.
    static func time<T>(_ body: () throws -> T) rethrows -> (result: T, duration: Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try body()
        return (result, clock.now - start)
    }

    /// The middle value (the mean of the two middle values for an even count); robust against the odd
    /// run slowed by another builder on the shared cores.
    static func median(_ values: [Duration]) -> Duration {
        precondition(!values.isEmpty, "median of no measurements")
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
