import Foundation

// How a save hands conflicts to its merge policy, and what the built-in policy types do to the
// context's objects. The save (`saveToStores`) retries after each resolution.

extension ManagedObjectContext {
    /// The store's optimistic-locking conflicts with this context's objects attached.
    func attachedConflicts(_ found: ConflictsFound) -> [MergeConflict] {
        found.conflicts.map { conflict in
            var attached = conflict
            let record = found.storeRecords[conflict.objectID]
            let object = liveObject(conflict.objectID)
            attached.attached = ConflictObjects(objects: object.map { [$0] } ?? [], record: record)
            if let object {
                attached.objectSnapshot = object.snapshot()
                attached.cachedSnapshot = object.committed.map { object.snapshot(of: $0) }
            }
            attached.persistedSnapshot = record.map { ManagedObject.snapshot(of: $0.values, layout: $0.layout) }
            return attached
        }
    }

    /// The store's uniqueness conflicts as `ConstraintConflict`s with this context's objects attached.
    func attachedConflicts(_ found: ConstraintConflictsFound) -> [ConstraintConflict] {
        found.conflicts.map { f in
            let objects = f.objectIDs.compactMap { liveObject($0) }
            var database: ManagedObject?
            if let record = f.database {
                database = registeredOrFault(record.id)
                // A loaded copy that nobody changed takes the stored state the conflict was found with.
                if let database, !database.faultState, !database.hasChanges, database.rowVersion != record.version { database.apply(record) }
            }
            var values: ObjectSnapshot = [:]
            for (name, value) in zip(f.properties, f.values) { if let value { values[name] = value } }
            var conflict = ConstraintConflict(
                entityName: f.entityName, constraint: f.properties, constraintValues: values, databaseObjectID: f.database?.id,
                databaseSnapshot: f.database.map { ManagedObject.snapshot(of: $0.values, layout: $0.layout) },
                conflictingObjectIDs: f.objectIDs, conflictingSnapshots: objects.map { $0.snapshot() })
            conflict.attached = ConflictObjects(objects: objects, database: database, record: f.database)
            return conflict
        }
    }

    /// Applies a built-in policy type to an object the store changed (or deleted) under this context.
    func resolveOptimisticLocking(_ object: ManagedObject, storeRecord record: ObjectRecord?, type: MergePolicyType) {
        guard object.managedObjectContext === self, type != .error else { return }
        guard let record else {
            // Deleted in the store: a deletion there wins over edits here, whatever the policy.
            changed[ObjectIdentifier(object)] = nil
            registry[object.objectID] = nil
            object.deletedState = true
            object.changedIndexes = []
            object.managedObjectContext = nil
            return
        }
        let base = object.committed ?? record.values
        switch type {
        case .error:
            return
        case .rollback:
            object.apply(record)
            changed[ObjectIdentifier(object)] = nil
        case .overwrite:
            // Hidden inverses of one-sided relationships are the object graph's bookkeeping, not the app's
            // state: they merge as by-property object trump does, so that a stale copy written whole does
            // not unlink the referrers other contexts added since.
            for i in object.values.indices where object.layout.isHidden[i] {
                object.values[i] = object.changedIndexes.contains(i)
                    ? object.rebased(object.values[i], at: i, base: base[i], onto: record.values[i]) : record.values[i]
            }
            object.rowVersion = record.version
            object.committed = record.values
            object.changedIndexes.formUnion(object.values.indices.filter { !object.layout.isHidden[$0] })
        case .mergeByPropertyStoreTrump:
            for i in object.values.indices where !Self.same(record.values[i], base[i]) {
                if case .toMany = object.layout.kinds[i], object.changedIndexes.contains(i) {
                    object.values[i] = object.rebased(object.values[i], at: i, base: base[i], onto: record.values[i])
                    continue
                }
                object.values[i] = record.values[i]
                object.changedIndexes.remove(i)
            }
            object.committed = record.values
            object.rowVersion = record.version
            if object.changedIndexes.isEmpty && !object.deletedState { changed[ObjectIdentifier(object)] = nil }
        case .mergeByPropertyObjectTrump:
            // A property set back to the value last seen is no change (Core Data compares with the
            // object's snapshot): it takes the store's value, as a save of that object alone would
            // have left it.
            for i in object.values.indices {
                if object.changedIndexes.contains(i) && !object.holdsCommittedValue(at: i) {
                    object.values[i] = object.rebased(object.values[i], at: i, base: base[i], onto: record.values[i])
                } else {
                    object.values[i] = record.values[i]
                    object.changedIndexes.remove(i)
                }
            }
            object.committed = record.values
            object.rowVersion = record.version
        }
    }

    /// Applies a built-in policy type to objects that share a uniqueness constraint's values: all but
    /// one (the stored object, else the first saved one, else the first inserted) are merged into that
    /// one and leave the context, as `MergePolicy` describes.
    func resolveConstraintConflict(_ conflict: ConstraintConflict, type: MergePolicyType) {
        guard type != .error else { return }
        // An earlier conflict of the same save may have merged some of them away already.
        let objects = conflict.conflictingObjects.filter { $0.managedObjectContext === self && !$0.deletedState }
        let database = conflict.databaseObject.flatMap { $0.managedObjectContext === self && !$0.deletedState ? $0 : nil }
        guard let survivor = database ?? objects.first(where: { !$0.insertedState }) ?? objects.first else { return }
        survivor.fireFaultIfNeeded()
        for duplicate in objects where duplicate !== survivor {
            merge(duplicate, into: survivor, type: type)
        }
    }

    /// Folds one duplicate into the survivor of its constraint conflict, moves references to it over,
    /// and takes it out of the context (an inserted one leaves; a saved one is deleted).
    private func merge(_ duplicate: ManagedObject, into survivor: ManagedObject, type: MergePolicyType) {
        duplicate.fireFaultIfNeeded()
        let takesAll = duplicate.insertedState
        for (j, name) in duplicate.layout.names.enumerated() {
            guard let i = survivor.layout.indexByName[name] else { continue }
            let theirs = duplicate.values[j]
            let mine = survivor.values[i]
            let isSet = takesAll || duplicate.changedIndexes.contains(j)
            var merged: Any?? = nil
            switch survivor.layout.kinds[i] {
            case .attribute(let a):
                if a.isTransient { continue }
                switch type {
                case .mergeByPropertyObjectTrump: if isSet { merged = .some(theirs) }
                case .mergeByPropertyStoreTrump: if mine == nil && theirs != nil { merged = .some(theirs) }
                case .overwrite: merged = .some(theirs)
                case .rollback, .error: break
                }
            case .toOne:
                switch type {
                case .mergeByPropertyObjectTrump: if theirs != nil { merged = .some(theirs) }
                case .mergeByPropertyStoreTrump: if mine == nil && theirs != nil { merged = .some(theirs) }
                case .overwrite: merged = .some(theirs)
                case .rollback, .error: break
                }
            case .toMany:
                let own = mine as? [ManagedObjectID] ?? []
                let other = theirs as? [ManagedObjectID] ?? []
                switch type {
                case .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump:
                    var present = Set(own)
                    let united = own + other.filter { present.insert($0).inserted }
                    if united.count != own.count { merged = .some(united) }
                case .overwrite: merged = .some(other)
                case .rollback, .error: break
                }
            }
            if let merged, !Self.same(merged, mine) || (merged == nil) != (mine == nil) {
                survivor.setRaw(merged, at: i)
            }
        }
        moveReferences(from: duplicate.objectID, to: survivor.objectID)
        if duplicate.insertedState {
            changed[ObjectIdentifier(duplicate)] = nil
            registry[duplicate.objectID] = nil
            duplicate.insertedState = false
            duplicate.changedIndexes = []
            duplicate.managedObjectContext = nil
            pendingNotification.inserted.remove(duplicate.objectID)
            pendingNotification.updated.remove(duplicate.objectID)
        } else {
            // Its relationships went to the survivor: its delete rules must not reach them.
            for i in duplicate.layout.relationshipIndexes {
                if case .toMany = duplicate.layout.kinds[i] { duplicate.setRaw([ManagedObjectID](), at: i) } else { duplicate.setRaw(nil, at: i) }
            }
            delete(duplicate)
        }
    }

    /// Points every changed object's references to `old` at `new` instead (only changed objects can
    /// refer to an inserted object; stored rows that refer to a saved one are finished by the store).
    private func moveReferences(from old: ManagedObjectID, to new: ManagedObjectID) {
        for object in Array(changed.values) {
            for i in object.layout.relationshipIndexes {
                if let id = object.values[i] as? ManagedObjectID {
                    if id == old { object.setRaw(new, at: i) }
                } else if let ids = object.values[i] as? [ManagedObjectID], ids.contains(old) {
                    var seen = Set<ManagedObjectID>()
                    object.setRaw(ids.map { $0 == old ? new : $0 }.filter { seen.insert($0).inserted }, at: i)
                }
            }
        }
    }
}
