import Foundation

/// The coordinator's own queue (Core Data's `perform(_:)` and `performAndWait(_:)` on
/// `NSPersistentStoreCoordinator`): a serial queue for work on the coordinator itself (adding,
/// removing, migrating stores, metadata), so that code doing such work from several threads takes
/// turns. The coordinator is thread-safe without it: fetches and saves do not go through this queue.
extension PersistentStoreCoordinator {
    /// Runs `block` on the coordinator's queue and returns at once.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        workQueue.async(execute: block)
    }

    /// Runs `body` on the coordinator's queue and waits for it; re-entrant (a block already on the
    /// queue runs `body` at once).
    public func performAndWait<T>(_ body: () throws -> T) rethrows -> T {
        if DispatchQueue.getSpecific(key: Self.workQueueKey) == ObjectIdentifier(self) { return try body() }
        return try workQueue.sync(execute: body)
    }

    /// Runs `body` on the coordinator's queue and returns its result asynchronously.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            workQueue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
