import Foundation

extension ManagedObjectContext {
    /// Runs the validation hooks of every changed object (`validateForInsert()`, `validateForUpdate()`,
    /// `validateForDelete()`, which check the model's rules unless overridden) and returns every problem
    /// (empty: the context can be saved). Values a `validateValue(_:forKey:)` would coerce are left as
    /// they are: only `save()` stores them.
    public func validationErrors() -> [Error] {
        applyDeferredLinks()
        return collectValidationErrors()
    }

    /// `validationErrors()`, storing coerced values when the save asks for it (`lifecycle.appliesCoercions`).
    func collectValidationErrors() -> [Error] {
        var invalid: [ValidationError] = []
        var denied: [Error] = []
        var failed: [Error] = []
        var rejected: [Error] = []
        func run(_ object: ManagedObject, _ hook: String, _ body: () throws -> Void) {
            do {
                try body()
            } catch ContextError.validation(let list) {
                invalid += list
            } catch let error as ValidationError {
                invalid.append(error)
            } catch let error as ContextError {
                if case .deleteDenied = error { denied.append(error) } else {
                    failed.append(ContextError.validationFailed(entity: object.entity.name, object: object.objectID, hook: hook, error: error))
                }
            } catch {
                failed.append(ContextError.validationFailed(entity: object.entity.name, object: object.objectID, hook: hook, error: error))
            }
        }
        // An object inserted and deleted before the save is deleted all the same: a deny rule holds.
        for object in discarded.values { run(object, "validateForDelete") { try object.validateForDelete() } }
        for object in Array(changed.values) {
            object.fireFaultIfNeeded()
            rejected += object.rejectedValues
            if object.deletedState {
                run(object, "validateForDelete") { try object.validateForDelete() }
            } else if object.insertedState {
                run(object, "validateForInsert") { try object.validateForInsert() }
            } else if !object.changedIndexes.isEmpty {
                run(object, "validateForUpdate") { try object.validateForUpdate() }
            }
        }
        return rejected + denied + failed + (invalid.isEmpty ? [] : [ContextError.validation(invalid)])
    }

    /// Validates every change, then writes them all: to the stores (a context on a coordinator) or into
    /// the parent (a child context). Nothing is written unless everything is valid.
    /// - Throws: `ContextError.validation` listing every invalid value, `.deleteDenied`,
    ///   `.mergeConflicts` and `.constraintConflicts` (merge policy `.error`), `.readOnlyContext` (the
    ///   context is `isReadOnly`), store errors.
    public func save() throws {
        assertOnQueue()
        applyDeferredLinks()
        // Edits made during the save (by `willSave()` hooks) are made at once: the save must see their
        // owners among its changes, and it replaces the temporary IDs a log would still hold.
        let deferred = deferredLinks
        deferredLinks = nil
        defer { deferredLinks = deferred }
        guard hasChanges else {
            // Nothing to write, but observers may still be owed news: an object inserted, announced and
            // then deleted leaves no change, yet whoever showed it must hear that it is gone. Nothing can
            // refer to such an object without being changed, so nothing needs it kept any longer.
            if undoManager != nil { keepForUndo(discarded.values) }
            discarded = [:]
            processPendingChanges()
            return
        }
        if isReadOnly { throw ContextError.readOnlyContext(description) }
        lifecycle.hasBeenUsed = true
        // Apple's willSave() page: the will-save notification is where to compute values "once for all
        // the objects being saved", and changes made in the objects' willSave() are saved; so the
        // notification comes first, then willSave() of each object, then validation of the result.
        NotificationCenter.default.post(name: .managedObjectContextWillSave, object: self)
        eventStreams.yield(.willSave)
        try runWillSaveHooks()
        try updateDerivedAttributes()
        lifecycle.appliesCoercions = true
        let problems = collectValidationErrors()
        lifecycle.appliesCoercions = false
        if let first = problems.first {
            if problems.count == 1 { throw first }
            var all: [ValidationError] = []
            for case .validation(let list) in problems.compactMap({ $0 as? ContextError }) { all += list }
            func isDenied(_ e: Error) -> Bool { if case .deleteDenied = e as? ContextError { return true } else { return false } }
            func isHookFailure(_ e: Error) -> Bool { if case .validationFailed = e as? ContextError { return true } else { return false } }
            throw problems.first(where: isDenied) ?? problems.first(where: isHookFailure) ?? (all.isEmpty ? first : ContextError.validation(all))
        }
        dropReferencesToDiscarded()
        // Deleted objects leave the context as the save ends; the did-save notification hands them out.
        let deletedBeforeSave = changed.values.filter(\.deletedState)
        // The undo event ends once the save is done: what the store repairs at it (references to
        // deleted rows) is undone with the changes that made it.
        postPendingChanges()
        defer { endUndoEvent() }
        let saving = Array(changed.values)
        let saved: ContextChanges
        if let parent {
            saved = try pushToParent(parent)
        } else {
            guard let coordinator = persistentStoreCoordinator else { throw ContextError.noPersistentStore("the context has no coordinator or parent") }
            defer { awakeResolvedObjects() }
            saved = try saveToStores(coordinator)
            coordinator.didSaveFeed.publish(saved, from: ObjectIdentifier(self))
        }
        runDidSaveHooks(saving)
        childFeed.publish(saved, from: ObjectIdentifier(self))
        var userInfo: [AnyHashable: Any]
        if let objects = lifecycle.savedObjects {
            lifecycle.savedObjects = nil
            userInfo = saved.userInfo(inserted: Set(objects.inserted), updated: Set(objects.updated), deleted: Set(objects.deleted))
        } else {
            userInfo = saved.userInfo(objectsIn: self, candidates: saving, deletedObjects: Set(deletedBeforeSave))
        }
        if let name { userInfo[ContextChanges.contextNameKey] = name }
        if let transactionAuthor { userInfo[ContextChanges.transactionAuthorKey] = transactionAuthor }
        NotificationCenter.default.post(name: .managedObjectContextDidSave, object: self, userInfo: userInfo)
        eventStreams.yield(.didSave(saved))
    }

    /// Takes references to discarded objects (inserted, then deleted before this save) out of the
    /// objects it writes. Their no-action rules left them; the store clears such references for a deleted
    /// row, but it never sees these objects, and cannot store a reference to an object it has no row for.
    private func dropReferencesToDiscarded() {
        guard !discarded.isEmpty else { return }
        for object in Array(changed.values) {
            for i in object.layout.relationshipIndexes {
                if let id = object.values[i] as? ManagedObjectID {
                    if discarded[id] != nil { object.setRaw(nil, at: i) }
                } else if let ids = object.values[i] as? [ManagedObjectID], ids.contains(where: { discarded[$0] != nil }) {
                    object.setRaw(ids.filter { discarded[$0] == nil }, at: i)
                }
            }
        }
        if undoManager != nil { keepForUndo(discarded.values) }
        discarded = [:]
    }

    private func storeChanges() -> StoreChanges {
        var changes = StoreChanges()
        for object in changed.values {
            if object.insertedState {
                changes.inserts.append(.init(id: object.objectID, entity: object.entity, values: object.values))
            } else if object.deletedState {
                if !object.objectID.isTemporaryID {
                    changes.deletes.append(.init(id: object.objectID, entity: object.entity, expectedVersion: object.rowVersion))
                }
            } else if object.hasPersistentChangedValues {
                changes.updates.append(.init(id: object.objectID, entity: object.entity, values: object.values, expectedVersion: object.rowVersion))
            }
        }
        return changes
    }

    private func saveToStores(_ coordinator: PersistentStoreCoordinator) throws -> ContextChanges {
        try coordinator.whileSaving {
            // Other saves through this coordinator wait, so a second attempt meets only changes made
            // around it (another coordinator, a batch request); a few attempts are plenty.
            var attempt = 0
            while true {
                attempt += 1
                let changes = storeChanges()
                do {
                    return finishSave(try HistoryRecorder.bindingOrigin(of: self) { try coordinator.save(changes) })
                } catch let found as ConflictsFound {
                    let conflicts = attachedConflicts(found)
                    if attempt > 8 { throw ContextError.mergeConflicts(conflicts.map(\.detached)) }
                    try mergePolicy.resolve(optimisticLockingConflicts: conflicts)
                    lifecycle.resolvedConflicts += found.conflicts.map(\.objectID)
                } catch let found as ConstraintConflictsFound {
                    let conflicts = attachedConflicts(found)
                    if attempt > 8 { throw ContextError.constraintConflicts(conflicts.map(\.detached)) }
                    try mergePolicy.resolve(constraintConflicts: conflicts)
                    lifecycle.resolvedConflicts += found.conflicts.compactMap { $0.database?.id }
                }
            }
        }
    }

    static func same(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case let (x as AnyHashable, y as AnyHashable): return x == y
        default: return false
        }
    }

    /// `same(_:_:)` for two values of an attribute of `type`: values of the attribute's own Swift type
    /// (what the setters store) are read straight out of their `Any` boxes and compared, instead of the
    /// boxing into `AnyHashable` (a protocol lookup per value), or even a dynamic cast, that saves,
    /// validation and imports would pay for every property they compare.
    static func same(_ a: Any?, _ b: Any?, as type: AttributeType?) -> Bool {
        if let type {
            let typed: Bool?
            switch type {
            case .string: typed = AnyBox.equal(a, b, as: String.self)
            case .integer64: typed = AnyBox.equal(a, b, as: Int64.self)
            case .integer32: typed = AnyBox.equal(a, b, as: Int32.self)
            case .integer16: typed = AnyBox.equal(a, b, as: Int16.self)
            case .double: typed = AnyBox.equal(a, b, as: Double.self)
            case .float: typed = AnyBox.equal(a, b, as: Float.self)
            case .boolean: typed = AnyBox.equal(a, b, as: Bool.self)
            case .date: typed = AnyBox.equal(a, b, as: Date.self)
            case .uuid: typed = AnyBox.equal(a, b, as: UUID.self)
            default: typed = nil
            }
            if let typed { return typed }
        }
        return same(a, b)
    }

    /// A deleted object whose deletion was saved leaves the context (Core Data's behaviour: it is no
    /// longer deleted, and has no context).
    /// It leaves after its `didSave()`, which still sees it deleted (`runDidSaveHooks`).
    private func detachSavedDeletion(_ object: ManagedObject) {
        registry[object.objectID] = nil
        lifecycle.savedDeletions.append(object)
        if undoManager != nil { keepForUndo([object]) }
    }

    /// Brings the context in line with a finished save: permanent IDs, new committed values, versions.
    private func finishSave(_ outcome: SaveOutcome) -> ContextChanges {
        let ids = outcome.ids
        var saved = ContextChanges()
        saved.inserted.reserveCapacity(ids.count)
        saved.updated.reserveCapacity(max(0, changed.count - ids.count))
        var objects: (inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) = ([], [], [])
        objects.inserted.reserveCapacity(ids.count)
        if !ids.isEmpty {
            // Only objects with unsaved changes can refer to an inserted object: a reference is set
            // through `setRaw`, which records the change.
            for object in changed.values { object.replaceReferences(ids) }
            if undoManager != nil { notePermanentIDsForUndo(ids) }
        }
        // The values an update replaces are freed on another thread when there are many (see
        // `BackgroundRelease`): each is an array of values, strings among them.
        let releasesElsewhere = changed.count >= BackgroundRelease.threshold
        var replaced: [[Any?]] = []
        if releasesElsewhere { replaced.reserveCapacity(changed.count) }
        for object in changed.values {
            if object.deletedState {
                saved.deleted.insert(object.objectID)
                objects.deleted.append(object)
                detachSavedDeletion(object)
                continue
            }
            // The store wrote version 1 for an insert and the next version for an update; an object
            // whose edits all set saved values back was not written, and is no news.
            let written = object.insertedState || object.hasPersistentChangedValues
            if object.insertedState { object.rowVersion = 1 } else if written { object.rowVersion += 1 }
            if object.insertedState, let permanent = ids[object.objectID] {
                registry.rekey(object.objectID, to: permanent)
                object.objectID = permanent
                object.insertedState = false
                saved.inserted.insert(permanent)
                objects.inserted.append(object)
            } else if written {
                saved.updated.insert(object.objectID)
                objects.updated.append(object)
            }
            if releasesElsewhere, let old = object.committed { replaced.append(old) }
            object.committed = object.values
            object.changedIndexes = []
            object.rejectedValues = []
        }
        BackgroundRelease.release(replaced, count: replaced.count)
        changed.removeAll()
        // The store finished links at rows this context did not write, or wrote differently: take them.
        for (id, record) in outcome.touched {
            if let object = liveObject(id), !object.faultState {
                if recordsUndo { recordUndo(of: object, replacedBy: record.values) }
                object.apply(record)
            }
            saved.updated.insert(id)
        }
        for id in outcome.cascadedDeletes {
            saved.updated.remove(id)
            saved.inserted.remove(id)
            saved.deleted.insert(id)
            guard let object = registry.removeValue(forKey: id) else { continue }
            if recordsUndo && !object.faultState { recordUndo(deletionOf: object) }
            if undoManager != nil { keepForUndo([object]) }
            object.managedObjectContext = nil
        }
        pendingNotification = ContextChanges()
        // Objects the store touched or deleted on its own are only known by ID: then the notification
        // looks them all up.
        lifecycle.savedObjects = outcome.touched.isEmpty && outcome.cascadedDeletes.isEmpty ? objects : nil
        return saved
    }

    /// A child's save: its changes become the parent's unsaved changes.
    private func pushToParent(_ parent: ManagedObjectContext) throws -> ContextChanges {
        let objects = Array(changed.values)
        // Edits that set saved values back are not handed on: the parent has those values already.
        let written = objects.filter { $0.insertedState || $0.deletedState || $0.hasPersistentChangedValues }
        let pushed: [(id: ManagedObjectID, entity: EntityDescription, values: [Any?], inserted: Bool, deleted: Bool, indexes: PropertyIndexSet)] =
            written.map { ($0.objectID, $0.entity, $0.values, $0.insertedState, $0.deletedState, $0.changedIndexes) }
        let versions: [ManagedObjectID: Int64] = try parent.performAndWait {
            var versions: [ManagedObjectID: Int64] = [:]
            for change in pushed where change.inserted {
                let type = (change.entity.objectType as? ManagedObject.Type) ?? ManagedObject.self
                let object = parent.registeredObject(for: change.id) ?? type.init(entity: change.entity, insertInto: nil)
                object.objectID = change.id
                object.values = change.values
                // Inserted once in its life, in the child: the parent's copy is not awoken again.
                object.hasAwokenFromInsert = true
                parent.insert(object)
            }
            // Deleted objects' relationships too, before the parent deletes them: the parent applies their
            // delete rules again, and must apply them to the relationships as this context left them. An
            // object this context moved out of a deleted owner's cascade (or deny) relationship is no
            // longer its member, though the parent's copy of the owner still lists it.
            for change in pushed where !change.inserted {
                guard let object = parent.registeredOrFault(change.id) else { throw ContextError.noSuchObject(change.id) }
                object.fireFaultIfNeeded()
                for i in change.indexes { object.setRaw(change.values[i], at: i) }
                if !change.deleted { versions[change.id] = object.rowVersion }
            }
            for change in pushed where change.deleted {
                if let object = parent.registeredOrFault(change.id) { parent.delete(object) }
            }
            parent.processPendingChanges()
            return versions
        }
        var saved = ContextChanges()
        for object in objects {
            if object.deletedState {
                saved.deleted.insert(object.objectID)
                detachSavedDeletion(object)
                continue
            }
            if object.insertedState {
                saved.inserted.insert(object.objectID)
            } else if object.hasPersistentChangedValues {
                saved.updated.insert(object.objectID)
            }
            object.insertedState = false
            object.committed = object.values
            object.changedIndexes = []
            object.rejectedValues = []
            if let v = versions[object.objectID] { object.rowVersion = v }
        }
        changed.removeAll()
        pendingNotification = ContextChanges()
        return saved
    }

    /// Gives inserted objects their permanent IDs now, before they are saved, by reserving row keys; the
    /// save keeps them. Use it before a child context saves objects it will go on editing (its parent's
    /// save cannot tell it the IDs), and before handing IDs of new objects to other contexts.
    /// - Throws: store errors. One write per store involved reserves every key it needs.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        assertOnQueue()
        guard let coordinator = persistentStoreCoordinator else { throw ContextError.noPersistentStore("no coordinator") }
        try obtainPermanentIDs(for: objects) { try coordinator.store(forEntity: $0.entity.name) }
    }

    /// `obtainPermanentIDs(for:)` in the store `storeOf` chooses for each object.
    func obtainPermanentIDs(for objects: [ManagedObject], storeOf: (ManagedObject) throws -> PersistentStore) throws {
        // The logged edits name objects by the IDs they have now (`assign(_:to:)` comes here too).
        applyDeferredLinks()
        var byStore: [ObjectIdentifier: (store: PersistentStore, tables: [String: [ManagedObject]])] = [:]
        for object in objects where object.objectID.isTemporaryID {
            let store = try storeOf(object)
            let table = try store.entityMapping(object.entity.name).tableName
            byStore[ObjectIdentifier(store), default: (store, [:])].tables[table, default: []].append(object)
        }
        var mapping: [ManagedObjectID: ManagedObjectID] = [:]
        for (store, tables) in byStore.values {
            try store.checkAttached()
            let firstKeys: [String: Int64]
            do {
                firstKeys = try store.engine.write { tx in
                    var first: [String: Int64] = [:]
                    for (table, members) in tables { first[table] = try tx.reserveKeys(Int64(members.count), in: table) }
                    return first
                }
            } catch let error as StorageError { throw ContextError.storage(error) }
            for (table, members) in tables {
                for (offset, object) in members.enumerated() {
                    mapping[object.objectID] = ManagedObjectID(scope: store.idScope(for: object.entity), key: firstKeys[table]! + Int64(offset))
                }
            }
        }
        // Discarded objects too: their rules still count at save, and inverse maintenance matches IDs.
        for object in Array(registry.values) + Array(discarded.values) { object.replaceReferences(mapping) }
        if undoManager != nil { notePermanentIDsForUndo(mapping) }
        for object in objects {
            guard let permanent = mapping[object.objectID] else { continue }
            registry[object.objectID] = nil
            object.objectID = permanent
            register(object)
        }
    }
}
