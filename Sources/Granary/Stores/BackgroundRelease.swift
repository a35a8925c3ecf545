import Dispatch

/// Frees big values on another thread.
///
/// A save of 100,000 rows ends by freeing its encoded rows, the rows they replace, the graph pass's
/// working set and the objects' replaced values: a tenth of the save, spent on the saving thread after
/// the work is done. Handed to a utility queue, that overlaps with whatever the caller does next.
/// Only values nothing else can reach are handed over, so the other thread does nothing but drop the
/// last references (no value is read or written there).
@_spi(GranaryRecords) public enum BackgroundRelease {
    /// Values with fewer elements than this are freed where they are, which costs less than a hand-off.
    public static let threshold = 10_000

    /// Frees `value` on a utility queue when `count` (how many elements it holds) reaches `threshold`.
    public static func release<T>(_ value: consuming T, count: Int) {
        guard count >= threshold else { return }
        let doomed = Doomed(value: value)
        DispatchQueue.global(qos: .utility).async { withExtendedLifetime(doomed) {} }
    }

    /// Crosses to the other thread; nothing there touches the value but its release.
    private struct Doomed<T>: @unchecked Sendable {
        let value: T
    }
}
