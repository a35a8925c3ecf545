import Synchronization

/// A flag set once, from any thread, and read from any other: what an action's `cancel()` sets and its
/// `execute()` checks between steps (a plain `var` would be a data race under Swift 6).
public final class CancellationFlag: Sendable {
    private let value = Atomic<Bool>(false)

    public init() {}

    /// Whether `set()` was called.
    public var isSet: Bool { value.load(ordering: .acquiring) }

    /// Sets the flag; later calls change nothing.
    public func set() { value.store(true, ordering: .releasing) }
}
