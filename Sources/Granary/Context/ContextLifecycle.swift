import Foundation

/// What a context keeps for the objects' lifecycle hooks during a save, and whether it has been used
/// (after which its parent and coordinator are fixed).
struct ContextLifecycle {
    /// Set by the first registered object, fetch or save.
    var hasBeenUsed = false
    /// Set while `save()` calls `willSave()`: objects changed meanwhile get it again.
    var isRunningWillSave = false
    var changedDuringWillSave: [ManagedObject] = []
    /// Set while `save()` validates: values coerced by `validateValue(_:forKey:)` are stored.
    /// `validationErrors()` only reports.
    var appliesCoercions = false
    /// Deleted objects whose deletion a save wrote: they leave the context after their `didSave()`.
    var savedDeletions: [ManagedObject] = []
    /// The objects a save to the stores inserted, updated and deleted, when they are exactly those its
    /// changes name (the store touched and cascaded to nothing else): its did-save notification takes
    /// them as they are instead of looking every ID up again.
    var savedObjects: (inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject])?
    /// Objects a merge policy resolved during a save, told by `awake(fromSnapshotEvents: .mergePolicy)`.
    var resolvedConflicts: [ManagedObjectID] = []
}

extension ManagedObjectContext {
    /// How many rounds of `willSave()` a save allows: each round calls it again on the objects changed
    /// by the round before, which ends unless a hook changes something on every call.
    static let willSaveRoundLimit = 100

    /// Stops a change of `parent` or `persistentStoreCoordinator` once the context has been used.
    func checkStoresCanChange(_ property: String) {
        if lifecycle.hasBeenUsed {
            preconditionFailure("\(self).\(property) cannot change once the context has been used (objects registered, fetched or saved)")
        }
    }

    /// Calls `willSave()` on every changed object, then again on those changed (or inserted, or
    /// deleted) by those calls, until a round changes nothing, as Core Data does.
    /// - Throws: `ContextError.willSaveKeepsChanging` naming an object when the rounds do not settle.
    func runWillSaveHooks() throws {
        var round = Array(changed.values)
        var known = changed.count
        lifecycle.isRunningWillSave = true
        defer {
            lifecycle.isRunningWillSave = false
            lifecycle.changedDuringWillSave = []
        }
        var rounds = 0
        while !round.isEmpty {
            rounds += 1
            if rounds > Self.willSaveRoundLimit {
                throw ContextError.willSaveKeepsChanging(entity: round[0].entity.name, object: round[0].objectID)
            }
            lifecycle.changedDuringWillSave = []
            for object in round where object.managedObjectContext === self && object.hasChanges { object.willSave() }
            var next: [ManagedObject] = []
            var seen = Set<ObjectIdentifier>()
            for object in lifecycle.changedDuringWillSave where seen.insert(ObjectIdentifier(object)).inserted { next.append(object) }
            if changed.count != known {
                // Objects the hooks inserted or deleted.
                let previous = Set(round.map(ObjectIdentifier.init))
                for object in changed.values where !previous.contains(ObjectIdentifier(object)) && seen.insert(ObjectIdentifier(object)).inserted {
                    next.append(object)
                }
                known = changed.count
            }
            round = next
        }
    }

    /// After a successful save: `didSave()` on every object it wrote, then the saved deletions turn into
    /// faults and leave the context (`willTurnIntoFault()`/`didTurnIntoFault()` around it).
    func runDidSaveHooks(_ saved: [ManagedObject]) {
        let deletions = lifecycle.savedDeletions
        lifecycle.savedDeletions = []
        for object in saved where object.managedObjectContext === self { object.didSave() }
        for object in deletions {
            object.willTurnIntoFault()
            object.managedObjectContext = nil
            object.deletedState = false
            object.values = object.layout.initialValues
            object.committed = nil
            object.changedIndexes = []
            object.faultState = true
            object.didTurnIntoFault()
        }
    }

    /// Tells the objects a merge policy resolved during the last save attempt.
    func awakeResolvedObjects() {
        let ids = lifecycle.resolvedConflicts
        lifecycle.resolvedConflicts = []
        for id in Set(ids) { liveObject(id)?.awake(fromSnapshotEvents: .mergePolicy) }
    }
}
