import Foundation

extension ManagedObjectContext {
    /// Runs a persistent history request on the context's coordinator (Core Data's `execute(_:)` of an
    /// `NSPersistentHistoryChangeRequest`). Merge a fetched transaction's `objectIDNotification()` to
    /// bring the context up to date with it.
    /// - Throws: what `PersistentStoreCoordinator.execute(_:)` throws; `ContextError.noPersistentStore`
    ///   without a coordinator.
    public func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        assertOnQueue()
        guard let coordinator = persistentStoreCoordinator else { throw ContextError.noPersistentStore("the context has no coordinator") }
        return try coordinator.execute(request)
    }
}
