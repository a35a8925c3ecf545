import Granary

/// What an app hears from its ensemble, and the decisions it can take during a merge (Ensembles' delegate).
///
/// Every method has a default implementation, so an app implements only what it needs — most apps just
/// ``persistentStoreEnsemble(_:didSaveMergeChangesWith:)``, to merge the changes into their view context.
/// Methods are called on the ensemble's task, never inside a `perform` of the contexts they receive.
public protocol PersistentStoreEnsembleDelegate: AnyObject, Sendable {
    /// A merge saved changes from other devices into the store. Merge them into contexts that show the
    /// store: `viewContext.perform { viewContext.mergeChanges(fromContextDidSave: changes) }`.
    ///
    /// The merge saves through the ensemble's own coordinator, so contexts of the app's coordinator do not
    /// see these changes until they fetch again or merge this value.
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didSaveMergeChangesWith changes: ContextChanges)

    /// Global identifiers for newly inserted objects of one entity, in the order given; an element nil
    /// gives that object a random identifier. Return nil to let the ensemble use the entity's ``Syncable``
    /// key or the configured attribute. The seed's implementation, reading `uniqueIdentifier` from each
    /// object, ports as it is.
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble,
                                 globalIdentifiersForManagedObjects objects: [ManagedObject]) -> [String?]?

    /// The merged changes are about to be saved. Change `reparationContext` (a child of `savingContext`)
    /// to repair them — the repairs are saved with the merge and sent to the other devices — or return
    /// false to save nothing (the merge throws ``SyncError/mergeCancelled`` and its events wait).
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, shouldSaveMergedChangesIn savingContext: ManagedObjectContext,
                                 reparationContext: ManagedObjectContext) -> Bool

    /// Saving the merged changes failed (`error`, usually validation). Repair them in `reparationContext`
    /// and return true to try once more; return false to give up (nothing is saved and the events wait).
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didFailToSaveMergedChangesIn savingContext: ManagedObjectContext,
                                 error: any Error, reparationContext: ManagedObjectContext) -> Bool

    /// The ensemble deleeched the store by itself: the cloud's identity changed, the store's registration
    /// was removed, or another device uses this store's identity. Leech again to resume syncing.
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didDeleechWithError error: SyncError)

    /// A merge started by ``EnsembleConfiguration/automaticMerging`` failed. Retryable errors
    /// (``SyncError/isRetryable``) need nothing: the next occasion tries again.
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didFailToMergeAutomaticallyWith error: SyncError)
}

extension PersistentStoreEnsembleDelegate {
    public func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didSaveMergeChangesWith changes: ContextChanges) {}
    public func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble,
                                        globalIdentifiersForManagedObjects objects: [ManagedObject]) -> [String?]? { nil }
    public func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, shouldSaveMergedChangesIn savingContext: ManagedObjectContext,
                                        reparationContext: ManagedObjectContext) -> Bool { true }
    public func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didFailToSaveMergedChangesIn savingContext: ManagedObjectContext,
                                        error: any Error, reparationContext: ManagedObjectContext) -> Bool { false }
    public func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didDeleechWithError error: SyncError) {}
    public func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didFailToMergeAutomaticallyWith error: SyncError) {}
}
