import Foundation

extension ManagedObject {
    /// Whether saving the object would write anything: it is inserted, or a persistent property holds a
    /// value other than its saved one. An edit that set a property back to its saved value, or one to a
    /// transient property, is no persistent change (Core Data's `hasPersistentChangedValues`): the
    /// save skips such an object, so it causes no write, no conflict and no update notification.
    public var hasPersistentChangedValues: Bool {
        applyPendingLinks()
        if insertedState { return true }
        for i in changedIndexes where !isTransient(at: i) && !holdsCommittedValue(at: i) { return true }
        return false
    }

    /// The persistent properties changed since the last save, by index: every one of an inserted
    /// object, else the changed ones whose values differ from the saved ones.
    func persistentChangedIndexes() -> [Int] {
        applyPendingLinks()
        if insertedState { return layout.names.indices.filter { !isTransient(at: $0) } }
        return changedIndexes.sorted().filter { !isTransient(at: $0) && !holdsCommittedValue(at: $0) }
    }

    func isTransient(at i: Int) -> Bool { layout.isTransient[i] }

    /// Whether property `i` holds its saved value. An unordered to-many relationship compares as a set
    /// (members removed and added back in another order are no change); a value that is not `Hashable`
    /// (some transformable types) counts as changed.
    func holdsCommittedValue(at i: Int) -> Bool {
        guard let committed else { return false }
        if case .toMany(let r) = layout.kinds[i], !r.isOrdered {
            let now = values[i] as? [ManagedObjectID] ?? []
            let then = committed[i] as? [ManagedObjectID] ?? []
            return now.count == then.count && Set(now) == Set(then)
        }
        return ManagedObjectContext.same(values[i], committed[i], as: layout.attributeTypes[i])
    }

    /// Runs `awakeFromFetch()` for a fault just filled. Change processing is off around it, as Apple
    /// documents: what the hook sets is not recorded as a change and the object stays unchanged. A
    /// fault is never among the changed objects, so whatever the hook filed is simply taken back.
    func awakeFromFetchUnrecorded() {
        awakeFromFetch()
        guard !changedIndexes.isEmpty else { return }
        if let context = managedObjectContext {
            // Nor is it an undoable change.
            if context.recordsUndo { context.pendingUndo.forget(self, at: changedIndexes) }
            context.changed[ObjectIdentifier(self)] = nil
            context.pendingNotification.updated.remove(objectID)
        }
        changedIndexes = []
    }
}
