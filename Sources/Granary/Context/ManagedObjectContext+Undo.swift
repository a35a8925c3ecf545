extension ManagedObjectContext {
    /// Takes back the last undo group of `undoManager`: objects it inserted leave the context, objects
    /// it deleted come back with their values and relationships (and what their delete rules changed on
    /// other objects is put back), edited properties get their old values, both ends of every
    /// relationship. Core Data's `undo()`.
    ///
    /// The current event ends first (`processPendingChanges()`), so the changes made since the last one
    /// are what is undone, if nothing else was grouped with them. Undoing after a save works, and leaves
    /// the context with unsaved changes; an undone change is a change like any other (the objects it
    /// touched are updated, objects-did-change reports it). With nothing to undo, nothing happens.
    /// - Throws: `ContextError.noUndoManager` when `undoManager` is nil; `.undoGroupsOpen` when groups
    ///   opened with `beginUndoGrouping()` are still open inside the one `undo()` would close.
    public func undo() throws {
        assertOnQueue()
        let undoManager = try checkedUndoManager()
        undoManager.undo()
    }

    /// Puts back the last group `undo()` took back. Core Data's `redo()`. A change recorded since the
    /// undo empties the redo stack, as in Foundation: then nothing happens.
    /// - Throws: `ContextError.noUndoManager` when `undoManager` is nil; `.undoGroupsOpen` when groups
    ///   opened with `beginUndoGrouping()` are still open inside the event's.
    public func redo() throws {
        assertOnQueue()
        let undoManager = try checkedUndoManager()
        undoManager.redo()
    }

    /// The undo manager, once the current event has ended and if no nested group stays open (where the
    /// manager would stop the program).
    private func checkedUndoManager() throws -> ContextUndoManager {
        guard let undoManager else { throw ContextError.noUndoManager(context: description) }
        processPendingChanges()
        if undoManager.isUndoing || undoManager.isRedoing || undoManager.groupingLevel > 1 {
            throw ContextError.undoGroupsOpen(context: description, level: undoManager.groupingLevel)
        }
        return undoManager
    }

    // MARK: Recording

    func undoManagerDidChange(from old: ContextUndoManager?) {
        // From here on, edits are recorded where they happen.
        applyDeferredLinks()
        old?.removeCheckpointObserver(self)
        old?.removeAllActions(withTarget: self)
        pendingUndo = UndoRecord()
        permanentIDsForUndo = [:]
        savedDeletionsForUndo = [:]
        recordsUndo = undoManager != nil
        undoManager?.addCheckpointObserver(self) { $0.registerPendingUndo() }
    }

    /// Keeps a property's value before the event's first change of it (`recordsUndo` is checked by the
    /// caller, so that a context without an undo manager pays one test per write).
    func recordUndo(of object: ManagedObject, at i: Int, before value: Any?) {
        guard undoManager?.isUndoRegistrationEnabled == true else { return }
        pendingUndo.record(object, at: i, before: value)
    }

    /// Whether a change of the property now would need its before-image kept (a caller about to edit
    /// it in place copies it only then).
    func needsUndoImage(of object: ManagedObject, at i: Int) -> Bool {
        undoManager?.isUndoRegistrationEnabled == true && !pendingUndo.hasImage(of: object, at: i)
    }

    /// Keeps the values of an object that a save is about to replace with what the store made of its row
    /// (references to deleted rows dropped).
    func recordUndo(of object: ManagedObject, replacedBy values: [Any?]) {
        for i in object.values.indices where !Self.same(object.values[i], values[i], as: object.layout.attributeTypes[i]) {
            recordUndo(of: object, at: i, before: object.values[i])
        }
    }

    /// Keeps whether an object about to be inserted was alive before.
    func recordUndo(existenceOf object: ManagedObject) {
        guard undoManager?.isUndoRegistrationEnabled == true else { return }
        pendingUndo.record(object, existed: isAlive(object))
    }

    /// Keeps what an object about to be deleted was: alive, with all its values. A saved deletion turns
    /// the object into an empty fault, so undoing it after the save needs every value, not only those
    /// the event changed.
    func recordUndo(deletionOf object: ManagedObject) {
        guard undoManager?.isUndoRegistrationEnabled == true else { return }
        pendingUndo.record(object, existed: isAlive(object))
        for i in object.values.indices { pendingUndo.record(object, at: i, before: object.values[i]) }
    }

    /// Ends the undo event: registers its changes and closes the manager's group for it.
    func endUndoEvent() {
        guard let undoManager else { return }
        registerPendingUndo()
        undoManager.endEvent()
        // No action left can name what these keep (everything was undone and changed since, or removed).
        if !undoManager.hasActions && !(permanentIDsForUndo.isEmpty && savedDeletionsForUndo.isEmpty) {
            permanentIDsForUndo = [:]
            savedDeletionsForUndo = [:]
        }
    }

    /// Registers the event's changes so far as one action with the undo manager, and starts a new record.
    func registerPendingUndo() {
        guard !pendingUndo.isEmpty else { return }
        let record = pendingUndo
        pendingUndo = UndoRecord()
        undoManager?.registerUndo(withTarget: self) { context in context.revert(record) }
    }

    /// Remembers the permanent IDs a save gave to objects, for recorded relationship values that still
    /// hold their temporary IDs. Kept until the manager holds no action: an action may be undone long
    /// after the save (and one the manager dropped for `levelsOfUndo` is not told apart).
    func notePermanentIDsForUndo(_ ids: [ManagedObjectID: ManagedObjectID]) {
        for (temporary, permanent) in ids where temporary != permanent { permanentIDsForUndo[temporary] = permanent }
    }

    /// Keeps deleted objects a save lets go of, with their values, for the undo actions that name them.
    func keepForUndo(_ objects: some Sequence<ManagedObject>) {
        for object in objects { savedDeletionsForUndo[object.objectID] = (object, object.values) }
    }

    /// Empties the undo manager's stacks (`rollback()`, `reset()`).
    func removeAllUndoActions() {
        undoManager?.removeAllActions()
        permanentIDsForUndo = [:]
        savedDeletionsForUndo = [:]
    }

    /// Inserted, or registered and not deleted: what undo brings back or takes away.
    private func isAlive(_ object: ManagedObject) -> Bool {
        object.managedObjectContext === self && !object.deletedState
    }

    // MARK: Playing back

    /// Puts back what `record` kept, and registers what it replaced as the action that puts it back
    /// again (the redo of an undo, the undo of a redo). Objects come back first, so that their values
    /// are restored as changes of this context; objects leave last, once their values are restored.
    func revert(_ record: UndoRecord) {
        // Nothing done here, nor by the hooks it calls, is recorded: the inverse record is made here.
        recordsUndo = false
        defer { recordsUndo = undoManager != nil }
        var inverse = UndoRecord()
        var events: [ObjectIdentifier: (object: ManagedObject, events: SnapshotEventType)] = [:]
        for entry in record.entries {
            guard let existed = entry.existed else { continue }
            inverse.record(entry.object, existed: isAlive(entry.object))
            if existed && !isAlive(entry.object) {
                bringBack(entry.object)
                events[ObjectIdentifier(entry.object)] = (entry.object, .undoDeletion)
            }
        }
        for entry in record.entries where !entry.values.isEmpty {
            let object = entry.object
            object.fireFaultIfNeeded()
            for (i, value) in entry.values {
                inverse.record(object, at: i, before: object.values[i])
                let value = withPermanentIDs(value)
                if !savedDeletionsForUndo.isEmpty { keepReachable(referencedBy: value) }
                object.values[i] = value
                if !object.insertedState { object.changedIndexes.insert(i) }
            }
            if object.managedObjectContext === self { objectDidChange(object) }
            if events[ObjectIdentifier(object)] == nil { events[ObjectIdentifier(object)] = (object, .undoUpdate) }
        }
        for entry in record.entries where entry.existed == false && isAlive(entry.object) {
            takeAway(entry.object)
            events[ObjectIdentifier(entry.object)] = (entry.object, .undoInsertion)
        }
        for entry in record.entries {
            if let (object, kinds) = events[ObjectIdentifier(entry.object)] { object.awake(fromSnapshotEvents: kinds) }
        }
        if !inverse.isEmpty { undoManager?.registerUndo(withTarget: self) { context in context.revert(inverse) } }
        // Observers hear of it now, not at the next event's end.
        processPendingChanges()
    }

    /// Undoes a deletion (or redoes an insertion): a deleted object is deleted no more; an object that
    /// left the context (inserted then deleted, taken out by undo, or deleted by a save) is inserted
    /// again, under the ID it had.
    private func bringBack(_ object: ManagedObject) {
        let id = object.objectID
        if object.managedObjectContext === self {
            object.deletedState = false
            if !object.hasChanges { changed[ObjectIdentifier(object)] = nil }
        } else {
            if !savedDeletionsForUndo.isEmpty, let saved = savedDeletionsForUndo.removeValue(forKey: id), saved.object === object {
                // The values it was deleted with: what the redo of this undo deletes again.
                object.values = saved.values
            }
            if !discarded.isEmpty && discarded[id] === object { discarded[id] = nil }
            object.managedObjectContext = self
            object.insertedState = true
            object.deletedState = false
            // A saved deletion left a fault; the record puts the values back next.
            object.faultState = false
            object.batch = nil
            object.changedIndexes = []
            register(object)
            changed[ObjectIdentifier(object)] = object
        }
        // Core Data reports an undone deletion as an insertion.
        if pendingNotification.deleted.remove(id) == nil { pendingNotification.inserted.insert(id) }
    }

    /// Undoes an insertion (or redoes a deletion): an inserted object leaves the context as `delete(_:)`
    /// makes it leave, kept among the discarded objects for the no-action references a redone deletion
    /// puts back; a saved one is deleted. Delete rules are not run: the record restores what they changed.
    private func takeAway(_ object: ManagedObject) {
        let id = object.objectID
        pendingNotification.updated.remove(id)
        if object.insertedState {
            object.insertedState = false
            object.changedIndexes = []
            object.rejectedValues = []
            changed[ObjectIdentifier(object)] = nil
            registry[id] = nil
            object.managedObjectContext = nil
            discarded[id] = object
        } else {
            object.deletedState = true
            changed[ObjectIdentifier(object)] = object
        }
        // Gone: news only if its arrival was announced.
        if pendingNotification.inserted.remove(id) == nil { pendingNotification.deleted.insert(id) }
    }

    /// Makes the objects of saved deletions that a restored relationship value names reachable again, as
    /// discarded objects. Undoing the event that dropped a no-action reference to a deleted object (or
    /// changed it), without undoing the deletion, puts the reference back as it was before the deletion
    /// was saved: it reaches the deleted object, and the next save drops it, as that save did.
    private func keepReachable(referencedBy value: Any?) {
        func keep(_ id: ManagedObjectID) {
            guard let (object, values) = savedDeletionsForUndo[id], object.managedObjectContext == nil, discarded[id] == nil,
                registry[id] == nil
            else { return }
            if object.faultState {
                object.values = values
                object.faultState = false
            }
            discarded[id] = object
        }
        if let id = value as? ManagedObjectID {
            keep(id)
        } else if let ids = value as? [ManagedObjectID] {
            for id in ids { keep(id) }
        }
    }

    /// A recorded value with the temporary IDs of objects saved since replaced by their permanent ones.
    private func withPermanentIDs(_ value: Any?) -> Any? {
        guard !permanentIDsForUndo.isEmpty else { return value }
        if let id = value as? ManagedObjectID { return id.isTemporaryID ? permanentIDsForUndo[id] ?? id : id }
        if let ids = value as? [ManagedObjectID], ids.contains(where: \.isTemporaryID) {
            return ids.map { $0.isTemporaryID ? permanentIDsForUndo[$0] ?? $0 : $0 }
        }
        return value
    }
}
