import Foundation

extension ManagedObjectContext {
    /// Runs a batch insert on the context's coordinator (Core Data's `execute(_:)`); the context itself
    /// does not change: merge `BatchResult.changes` to show the new objects.
    /// - Throws: what `PersistentStoreCoordinator.execute(_:)` throws; `ContextError.noPersistentStore`
    ///   without a coordinator.
    public func execute(_ request: BatchInsertRequest) throws -> BatchResult {
        assertOnQueue()
        let coordinator = try coordinatorForBatches()
        return try HistoryRecorder.bindingOrigin(of: self) { try coordinator.execute(request) }
    }

    /// Runs a batch update on the context's coordinator; merge `BatchResult.changes` to see it.
    /// - Throws: what `PersistentStoreCoordinator.execute(_:)` throws; `ContextError.noPersistentStore`
    ///   without a coordinator.
    public func execute(_ request: BatchUpdateRequest) throws -> BatchResult {
        assertOnQueue()
        let coordinator = try coordinatorForBatches()
        return try HistoryRecorder.bindingOrigin(of: self) { try coordinator.execute(request) }
    }

    /// Runs a batch delete on the context's coordinator; merge `BatchResult.changes` to drop the deleted
    /// objects from live contexts.
    /// - Throws: what `PersistentStoreCoordinator.execute(_:)` throws; `ContextError.noPersistentStore`
    ///   without a coordinator.
    public func execute(_ request: BatchDeleteRequest) throws -> BatchResult {
        assertOnQueue()
        let coordinator = try coordinatorForBatches()
        return try HistoryRecorder.bindingOrigin(of: self) { try coordinator.execute(request) }
    }

    private func coordinatorForBatches() throws -> PersistentStoreCoordinator {
        guard let persistentStoreCoordinator else { throw ContextError.noPersistentStore("the context has no coordinator") }
        return persistentStoreCoordinator
    }

    /// Applies changes made elsewhere (a batch request's `BatchResult.changes`, another process's save)
    /// to each context, on its queue, as `mergeChanges(fromContextDidSave:)` does: updated objects are
    /// refreshed, deleted ones leave, observers (fetched-results controllers) are told.
    ///
    /// Use it after batch requests, which bypass contexts (Core Data's API of the same name).
    public static func mergeChanges(fromRemoteContextSave changes: ContextChanges, into contexts: [ManagedObjectContext]) {
        for context in contexts {
            context.performAndWait { context.mergeChanges(fromContextDidSave: changes) }
        }
    }
}
