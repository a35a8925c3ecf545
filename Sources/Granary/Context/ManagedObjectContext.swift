import Foundation
import Synchronization

/// A scratch pad of managed objects: fetch, insert, edit and delete objects, then `save()` to make the
/// changes permanent (or `rollback()` to drop them).
///
/// A context runs on one queue: `.mainQueue` (the main thread) or `.privateQueue` (its own serial
/// queue). Touch it and its objects only from inside `perform { }` / `performAndWait { }` (or on the main
/// thread for a main-queue context); debug builds check this. The context itself may be passed between
/// threads (it is `Sendable`); its objects may not (pass `objectID`s instead).
///
/// A context sits either on a coordinator (its saves go to the stores) or on a parent context (its
/// saves go into the parent, which saves them later).
public final class ManagedObjectContext: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: every mutable property is used only on `queue` (checked in debug builds).

    public enum ConcurrencyType: Sendable, Hashable {
        case mainQueue
        case privateQueue
    }

    public let concurrencyType: ConcurrencyType
    /// The coordinator at the root of this context's chain (its own, or its parent's).
    ///
    /// Settable, as in Core Data, until the context is first used (an object registered, a fetch or a
    /// save): setting it after that, setting it to `nil`, or setting it on a context that has a parent
    /// is a programmer error and stops the program (Core Data raises an exception there).
    public var persistentStoreCoordinator: PersistentStoreCoordinator? {
        get { coordinatorStorage ?? parentStorage?.persistentStoreCoordinator }
        set {
            guard let newValue else { preconditionFailure("\(self): the persistent store coordinator cannot be set to nil") }
            checkStoresCanChange("persistentStoreCoordinator")
            precondition(parentStorage == nil, "\(self) has a parent context; a context has a coordinator or a parent, not both")
            coordinatorStorage = newValue
            updateMergeSubscription()
        }
    }
    /// The context this one saves into, or `nil` for a context on a coordinator.
    ///
    /// Settable, as in Core Data, until the context is first used (an object registered, a fetch or a
    /// save): setting it after that, or on a context that has a coordinator of its own, is a programmer
    /// error and stops the program (Core Data raises an exception there).
    public var parent: ManagedObjectContext? {
        get { parentStorage }
        set {
            checkStoresCanChange("parent")
            precondition(newValue == nil || coordinatorStorage == nil,
                         "\(self) has a coordinator of its own; a context has a coordinator or a parent, not both")
            precondition(newValue !== self, "a context cannot be its own parent")
            parentStorage = newValue
            updateMergeSubscription()
        }
    }
    private var coordinatorStorage: PersistentStoreCoordinator?
    private var parentStorage: ManagedObjectContext?
    /// A name of your choosing, shown in the context's description, in its save notifications and in
    /// the persistent history of its saves: for telling contexts apart in logs.
    public var name: String?
    /// Who makes this context's saves (a user, a sync engine, an importer), carried in its did-save
    /// notifications (`ContextChanges.transactionAuthorKey`), its description and, for a store that tracks
    /// it, the persistent history of its saves (`PersistentHistoryTransaction.author`).
    public var transactionAuthor: String?
    public var mergePolicy: MergePolicy = .error
    /// When true, setting an attribute to the value it already holds leaves the object unchanged. Core
    /// Data marks the object updated on any write, and so does a context by default; JSON imports set
    /// this while mapping, so that importing data the store already holds saves nothing and tells no
    /// observer of a change.
    @_spi(GranaryRecords) public var ignoresUnchangedWrites = false
    /// Whether saves of other contexts on the same coordinator (for a root context) or of the parent
    /// (for a child) are merged into this context as they happen.
    public var automaticallyMergesChangesFromParent = false {
        didSet { updateMergeSubscription() }
    }

    /// Whether `save()` refuses: the context's objects can still be fetched and edited, but nothing in it
    /// ever reaches its parent or the stores. For scratch contexts and read-only views, where a save
    /// would be a bug.
    public var isReadOnly = false

    /// What firing a fault does when its object is gone from the store (another context, coordinator or
    /// process deleted it since the fault was made), as Core Data's `shouldDeleteInaccessibleFaults`.
    ///
    /// `true`, the default: the fault becomes a deleted object (`isDeleted` is true) whose properties
    /// read as the entity's defaults (nil, zero or false unless the model says otherwise), so code that
    /// walks a relationship into a vanished object goes on and can test `isDeleted`. It is not put in
    /// `deletedObjects`: there is no row left for a save to delete. `false`: firing such a fault stops
    /// the program, as Core Data raises `NSObjectInaccessibleException` there; set it while debugging
    /// to find code that keeps objects across other contexts' deletes. A store that fails to answer
    /// (removed, damaged) is not an inaccessible fault: the object stays a fault and the error comes
    /// from the next fetch or save.
    public var shouldDeleteInaccessibleFaults = true

    /// How long, in seconds, values loaded for a fault may be reused when the object is turned into a
    /// fault and fired again (Core Data's `stalenessInterval`), instead of reading the store.
    ///
    /// `0`, Granary's default: every fault reads the row as the store holds it now. Reading a row is a
    /// lookup in an in-memory snapshot, so Granary needs no row cache to be fast, and Core Data's
    /// default of -1 (reuse for ever, which makes `refresh(_:mergeChanges:)` keep showing old values
    /// until this is set to 0) surprises more than it saves. A positive value reuses values loaded
    /// through this context's coordinator within that many seconds; a negative value reuses them for as
    /// long as the coordinator keeps them. Saves through the same coordinator always replace what it
    /// keeps, as Core Data's row cache is updated by its own coordinator's saves: only changes made by
    /// other coordinators or processes can be hidden. Contexts with a parent context read the parent,
    /// never a cache.
    public var stalenessInterval: TimeInterval = 0

    /// Whether the context keeps every registered object alive until it is reset or the object leaves
    /// it (Core Data's `retainsRegisteredObjects`).
    ///
    /// `false`, the default: objects with unsaved changes are kept, and the others only for as long as
    /// the app holds them, so iterating a large result does not keep all of it. `true`: every object
    /// the context registered stays, faulted or loaded, so that going back to it costs no load; memory
    /// then grows with everything the context has touched. Turning it off again lets the next sweep
    /// drop what nobody holds.
    public var retainsRegisteredObjects = false

    let queue: DispatchQueue
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    /// Marks the main queue itself, not the main thread: where `dispatch_main()` runs (as under `swift
    /// test` on Linux), the main queue's blocks run on a worker thread, which `Thread.isMainThread` denies.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    // The tables below are touched for every object an import or a save handles, only on the context's
    // queue, and never held across a call that reaches them again: they opt out of dynamic exclusivity
    // checking (see `ManagedObject.values`).

    /// Every object the context knows. Held strongly, but an unchanged object that nobody else holds is
    /// dropped at the next sweep (`register`), which keeps memory bounded while iterating big results,
    /// as Core Data's weakly held registry does. Not weak references: an object that is the target of
    /// one moves its reference counts to a side table, which makes every retain and release of it take
    /// the slow path, and most of an object's life is retains and releases.
    @exclusivity(unchecked) var registry = ObjectTable<IDSlotMap>()
    @exclusivity(unchecked) private var nextRegistrySweep = 1024
    /// Objects with unsaved changes, held strongly until saved or rolled back.
    @exclusivity(unchecked) var changed = ObjectTable<[ObjectIdentifier: Int]>() {
        didSet {
            if changed.count < filedCounts.changed { changeEpoch = 0 }
            filedCounts.changed = changed.count
        }
    }
    /// Changes since the last objects-did-change notification.
    @exclusivity(unchecked) var pendingNotification = ContextChanges() {
        didSet {
            if pendingNotification.inserted.count < filedCounts.inserted || pendingNotification.updated.count < filedCounts.updated {
                changeEpoch = 0
            }
            filedCounts.inserted = pendingNotification.inserted.count
            filedCounts.updated = pendingNotification.updated.count
        }
    }
    /// What `objectDidChange` files an object under stays filed until something leaves `changed` or
    /// `pendingNotification`'s inserted or updated objects: an object marked with the current epoch needs
    /// nothing more, and an import that sets six properties of each object files it once instead of six
    /// times (two table lookups a property were a tenth of an import). Each write to those tables is one
    /// insertion or one removal (or a reset), so a count that went down is a removal, and ends the epoch
    /// (0: none yet); additions leave every mark true. Epochs come from one process-wide counter, so that
    /// a mark never matches another context's.
    @exclusivity(unchecked) private var changeEpoch: UInt64 = 0
    @exclusivity(unchecked) private var filedCounts = (changed: 0, inserted: 0, updated: 0)
    private static let changeEpochs = Atomic<UInt64>(0)
    /// Objects inserted and deleted again since the last save, by ID. They leave the context at once (the
    /// store never sees them), but their deny and no-action rules leave the other ends of their
    /// relationships pointing at them until the save. They are kept here so that those ends still reach
    /// them: moving a member out of one updates it (and so frees its deny rule), the save refuses one
    /// whose deny relationship still has members, and it drops the references that remain, as the store
    /// does for a deleted row (without this, a reference made a fault of an ID no store can load, and the
    /// save failed on it).
    @exclusivity(unchecked) var discarded: [ManagedObjectID: ManagedObject] = [:]
    /// The inverse edits an import logs while `deferringInverseLinks(_:)` runs; nil otherwise.
    @exclusivity(unchecked) var deferredLinks: DeferredInverseLinks?
    /// How many changes `reservingCapacity(forChanges:_:)` makes room for while it runs.
    private var reservedChanges = 0
    /// What faulting has loaded in this context, for tests that count loads.
    var faultStatistics = FaultStatistics()
    private var mergeToken: UInt64?
    /// State of the lifecycle hooks and of the context's first use (see `ContextLifecycle`).
    @exclusivity(unchecked) var lifecycle = ContextLifecycle()

    /// The undo manager that records this context's changes, or `nil` (the default, as in Core Data) to
    /// record nothing at no cost: set one to make changes undoable with `undo()` and `redo()`.
    ///
    /// The context records every change of an event (inserts, deletes with what their delete rules
    /// changed, attribute and relationship edits, both ends of each) and registers them with the manager
    /// as one action when the event ends. There is no run loop to end events: an event ends at
    /// `processPendingChanges()`, which `save()`, fetches, `undo()`, `redo()` and `rollback()` call, as
    /// Core Data calls it at the end of each run-loop event; open groups of your own with the manager's
    /// `beginUndoGrouping()` and `endUndoGrouping()`. `rollback()` and `reset()` empty the manager's
    /// stacks. A manager given up here forgets the actions it holds for this context.
    public var undoManager: ContextUndoManager? {
        didSet { if oldValue !== undoManager { undoManagerDidChange(from: oldValue) } }
    }
    /// Whether writes record what they replace: `undoManager` is set and no undo or redo is being
    /// played back. Read on every property write, so one flag rather than the manager's state.
    @exclusivity(unchecked) var recordsUndo = false
    /// The current event's changes, registered with the undo manager when the event ends.
    @exclusivity(unchecked) var pendingUndo = UndoRecord()
    /// Permanent IDs of objects saved while undo actions were recorded, by the temporary IDs those
    /// actions' relationship values may still hold.
    var permanentIDsForUndo: [ManagedObjectID: ManagedObjectID] = [:]
    /// Deleted objects a save let go of while undo actions were recorded (those whose deletion it wrote,
    /// and discarded ones), by ID, with the values they had (a saved deletion empties them): an undo
    /// brings one back, or puts back a no-action reference to one whose deletion stays (see `revert`);
    /// either way it has its values again, as before the save. Both tables are emptied once the manager
    /// holds no action, or its actions are removed.
    var savedDeletionsForUndo: [ManagedObjectID: (object: ManagedObject, values: [Any?])] = [:]

    /// Creates a context; give it a coordinator or a parent before using it.
    public init(concurrencyType: ConcurrencyType, coordinator: PersistentStoreCoordinator? = nil, parent: ManagedObjectContext? = nil) {
        precondition(coordinator == nil || parent == nil, "a context has a coordinator or a parent, not both")
        self.concurrencyType = concurrencyType
        self.parentStorage = parent
        self.coordinatorStorage = parent == nil ? coordinator : nil
        switch concurrencyType {
        case .mainQueue: queue = .main
        case .privateQueue: queue = DispatchQueue(label: "granary.context")
        }
        if concurrencyType == .privateQueue { queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self)) }
    }

    deinit {
        eventStreams.finish()
        if let mergeToken {
            if let parent { parent.childFeed.unsubscribe(mergeToken) } else { persistentStoreCoordinator?.didSaveFeed.unsubscribe(mergeToken) }
        }
    }

    /// Saves of this context, for child contexts that merge automatically.
    let childFeed = SaveFeed()
    /// The async sequences made by `events()`.
    let eventStreams = EventStreams<ContextEvent>()

    public var model: ManagedObjectModel? { persistentStoreCoordinator?.managedObjectModel }

    public var description: String {
        "<ManagedObjectContext \(name ?? "")\(transactionAuthor.map { " author: \($0)" } ?? "") \(concurrencyType)>"
    }

    // MARK: Queues

    /// Whether the calling code runs on this context's queue.
    public var isOnQueue: Bool {
        switch concurrencyType {
        case .mainQueue:
            // The main queue is not always served by the process's main thread (Swift Testing on Linux
            // runs main-actor code elsewhere), so ask the queue, and accept the main thread outside it.
            return Thread.isMainThread || DispatchQueue.getSpecific(key: Self.mainQueueKey) != nil
        case .privateQueue: return DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self)
        }
    }

    /// Debug builds stop on use from the wrong queue: the bug Core Data users hit most, caught where it happens.
    func assertOnQueue(_ function: StaticString = #function) {
        #if DEBUG
        if !isOnQueue {
            preconditionFailure("\(self) used off its queue in \(function): wrap the code in perform { } or performAndWait { }")
        }
        #endif
    }

    /// Runs `body` on the context's queue and waits for it; re-entrant.
    public func performAndWait<T>(_ body: () throws -> T) rethrows -> T {
        if isOnQueue { return try body() }
        return try queue.sync(execute: body)
    }

    /// Runs `body` on the context's queue and returns its result asynchronously.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Schedules `body` on the context's queue without waiting (Core Data's `perform(_:)`).
    public func schedule(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    /// Schedules `block` on the context's queue and returns at once: Core Data's fire-and-forget
    /// `perform(_:)`, for code that does not wait for the block (use `await perform { }` to get a
    /// result, `performAndWait { }` to block until it ran).
    public func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async(execute: block)
    }

    // MARK: Registered objects

    /// The registered object with this ID if one is alive, else a new fault for it (not checked
    /// against the store: see `existingObject(with:)`).
    public func object(with id: ManagedObjectID) -> ManagedObject {
        assertOnQueue()
        return registeredOrFault(id)!
    }

    /// The object with this ID, loaded; throws when the store has no such object.
    /// - Throws: `ContextError.noSuchObject`, or store errors.
    public func existingObject(with id: ManagedObjectID) throws -> ManagedObject {
        assertOnQueue()
        if let object = liveObject(id), !object.faultState { return object }
        guard let record = try loadRecord(for: id) else { throw ContextError.noSuchObject(id) }
        let object = registeredOrFault(id)!
        if object.faultState { object.apply(record) }
        return object
    }

    /// The registered object with this ID, if the context has one alive.
    public func registeredObject(for id: ManagedObjectID) -> ManagedObject? { liveObject(id) }

    /// Every object the context holds alive.
    public var registeredObjects: Set<ManagedObject> {
        applyDeferredLinks()
        sweepRegistry()
        return Set(registry.values)
    }

    func registeredOrFault(_ id: ManagedObjectID) -> ManagedObject? {
        if let object = liveObject(id, keepingCurrent: true) { return object }
        if !discarded.isEmpty, let object = discarded[id] { return object }
        guard let entity = model?.entity(named: id.entityName) else { return nil }
        return makeFault(id, entity: entity)
    }

    /// `registeredOrFault` for each ID, in order, skipping IDs of entities the model lacks. A
    /// relationship's members share an entity, so it is looked up by name once per run of one scope.
    func registeredOrFaults(_ ids: [ManagedObjectID]) -> [ManagedObject] {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(ids.count)
        var scope: ManagedObjectID.Scope?
        var entity: EntityDescription?
        for id in ids {
            if let object = liveObject(id, keepingCurrent: true) ?? (discarded.isEmpty ? nil : discarded[id]) {
                objects.append(object)
                continue
            }
            if id.scope !== scope {
                scope = id.scope
                entity = model?.entity(named: id.entityName)
            }
            if let entity { objects.append(makeFault(id, entity: entity)) }
        }
        return objects
    }

    /// A new fault for an ID that is not registered, registered.
    func makeFault(_ id: ManagedObjectID, entity: EntityDescription) -> ManagedObject {
        let type = (entity.objectType as? ManagedObject.Type) ?? ManagedObject.self
        let object = type.init(entity: entity, insertInto: nil)
        object.objectID = id
        object.managedObjectContext = self
        object.faultState = true
        register(object)
        return object
    }

    func register(_ object: ManagedObject) {
        lifecycle.hasBeenUsed = true
        sweepRegistryIfDue(adding: 1)
        registry[object.objectID] = object
    }

    /// Runs `body` with room made for `count` more objects to register and change: an import that
    /// knows how many objects it will insert or edit grows the registry, the change table and the
    /// announcement's sets once, rather than rehashing each of them a dozen times as they fill. The sets
    /// of an announcement made meanwhile (a fetch ends the event) are replaced by sets as roomy.
    @_spi(GranaryRecords) public func reservingCapacity<T>(forChanges count: Int, _ body: () throws -> T) rethrows -> T {
        prepareToRegister(count)
        changed.reserveCapacity(changed.count + count)
        let reserved = reservedChanges
        reservedChanges = count
        defer { reservedChanges = reserved }
        reserveAnnouncement()
        return try body()
    }

    private func reserveAnnouncement() {
        guard reservedChanges > 0 else { return }
        pendingNotification.inserted.reserveCapacity(pendingNotification.inserted.count + reservedChanges)
        pendingNotification.updated.reserveCapacity(pendingNotification.updated.count + reservedChanges)
    }

    /// Makes room for `count` more registered objects (a fetch's), sweeping first when they would take
    /// the registry past its next sweep: growing a table that is about to be swept rehashed every key
    /// it held, on every cycle of a context that fetches and lets go.
    func prepareToRegister(_ count: Int) {
        sweepRegistryIfDue(adding: count)
        registry.reserveCapacity(registry.count + count)
    }

    /// Drops the objects nobody else holds, but only when the registry has doubled since the last
    /// sweep, so that registering stays O(1) amortized even when every object is still held.
    private func sweepRegistryIfDue(adding count: Int) {
        if registry.count + count > nextRegistrySweep {
            sweepRegistry()
            nextRegistrySweep = max(1024, registry.count * 2)
        }
    }

    /// The registered object with this ID, if it is alive. One that only the registry holds is what a
    /// weakly held registry would already have lost: it is forgotten here, so that nobody is handed its
    /// stale values (the next use loads the object afresh, as Core Data would).
    ///
    /// With `keepingCurrent` (resolving a relationship's references), a loaded object that only the
    /// registry holds is kept and returned when its row is still at the version it was loaded at: its
    /// values are then exactly what loading it afresh would give. Forgetting it anyway made a walk over
    /// 1,000,000 employees that reads each one's department load the department again for every
    /// employee, each time with its 10,000 members: quadratic (100 s, against 1.9 s for GRDB). Checking
    /// the version reads two small values of the row; loading it decodes all of them.
    func liveObject(_ id: ManagedObjectID, keepingCurrent: Bool = false) -> ManagedObject? {
        if retainsRegisteredObjects { return registry[id] }
        guard keepingCurrent else { return registry.liveObject(forKey: id) }
        guard let (object, isHeldOnlyHere) = registry.entry(forKey: id) else { return nil }
        if isHeldOnlyHere && !isCurrent(object) {
            registry.removeValue(forKey: id)
            return nil
        }
        return object
    }

    /// Whether a loaded object's values are its row's in the store now. Contexts with a parent do not
    /// ask: the parent's state has no row versions to compare.
    private func isCurrent(_ object: ManagedObject) -> Bool {
        guard !object.faultState, parent == nil, !object.objectID.isTemporaryID, let coordinator = persistentStoreCoordinator,
            let version = try? coordinator.rowVersion(of: object.objectID)
        else { return false }
        return version == object.rowVersion
    }

    /// Forgets the registered objects that only the registry holds. Objects with unsaved changes are
    /// also held by `changed`, so they stay. In place: when every object is still held (a fetch
    /// building its result) nothing is rebuilt, only scanned.
    func sweepRegistry() {
        if retainsRegisteredObjects { return }
        registry.removeObjectsHeldOnlyHere { $0.objectID }
    }

    /// The store's (or parent's) state of an object.
    /// - Parameter maximumAge: how old a record the coordinator kept may be (see `stalenessInterval`);
    ///   0 reads the store.
    func loadRecord(for id: ManagedObjectID, maximumAge: TimeInterval = 0) throws -> ObjectRecord? {
        if let parent {
            return try parent.performAndWait { () throws -> ObjectRecord? in
                var found = parent.registeredObject(for: id)
                if found == nil && !id.isTemporaryID {
                    // Only "no such object" means absent; a missing store or a damaged one is an error.
                    do { found = try parent.existingObject(with: id) } catch ContextError.noSuchObject { found = nil }
                }
                guard let object = found else { return nil }
                if object.deletedState { return nil }
                object.fireFaultIfNeeded()
                return ObjectRecord(id: id, values: object.values, version: object.rowVersion, layout: object.layout)
            }
        }
        guard let coordinator = persistentStoreCoordinator else { throw ContextError.noPersistentStore("the context has no coordinator or parent") }
        if id.isTemporaryID { return nil }
        return try maximumAge == 0 ? coordinator.record(for: id) : coordinator.cachedRecord(for: id, maximumAge: maximumAge)
    }

    /// Loads faults in one pass over one snapshot (a batch of a batched fetch, the members of a fired
    /// to-many relationship). Contexts with a parent leave them to fire one at a time through it.
    func fulfillFaults(_ objects: [ManagedObject]) {
        guard parent == nil, let coordinator = persistentStoreCoordinator else { return }
        let faults = objects.filter { $0.faultState && !$0.objectID.isTemporaryID }
        // Objects of another store than the first one's come back nil and stay faults.
        let ids = faults.map(\.objectID)
        guard faults.count > 1,
            let records = try? stalenessInterval == 0 ? coordinator.records(for: ids)
                : coordinator.cachedRecords(for: ids, maximumAge: stalenessInterval)
        else { return }
        faultStatistics.loads += 1
        for (object, record) in zip(faults, records) {
            if let record {
                object.apply(record)
                faultStatistics.fulfilledObjects += 1
            }
        }
    }

    func fulfillFault(_ object: ManagedObject) {
        faultStatistics.loads += 1
        faultStatistics.fulfilledObjects += 1
        do {
            if let record = try loadRecord(for: object.objectID, maximumAge: stalenessInterval) {
                object.apply(record)
            } else {
                guard shouldDeleteInaccessibleFaults else {
                    preconditionFailure("\(self): could not fulfill a fault for \(object.objectID): the object is gone from the store "
                                        + "(shouldDeleteInaccessibleFaults is false)")
                }
                // Deleted elsewhere since the fault was made: a deleted object with its entity's defaults.
                object.faultState = false
                object.committed = object.values
                object.deletedState = true
            }
        } catch {
            object.faultState = false
            object.committed = object.values
        }
    }

    // MARK: Inserting and deleting

    /// Registers a new object for insertion at the next save.
    public func insert(_ object: ManagedObject) {
        assertOnQueue()
        if object.managedObjectContext === self && object.insertedState { return }
        if recordsUndo { recordUndo(existenceOf: object) }
        if !discarded.isEmpty { discarded[object.objectID] = nil }
        object.managedObjectContext = self
        object.insertedState = true
        object.deletedState = false
        object.faultState = false
        register(object)
        changed[ObjectIdentifier(object)] = object
        pendingNotification.inserted.insert(object.objectID)
        if !object.hasAwokenFromInsert {
            object.hasAwokenFromInsert = true
            object.awakeFromInsert()
        }
    }

    /// Marks an object for deletion at the next save and applies the delete rules of its relationships
    /// now: nullify unlinks the other side, cascade deletes the destinations, deny is checked at save.
    public func delete(_ object: ManagedObject) {
        assertOnQueue()
        // The rules read and edit the relationships of the object and of its destinations.
        applyDeferredLinks()
        // A discarded object is already gone (a cascade reaches one through a no-action leftover).
        guard !object.deletedState, discarded.isEmpty || discarded[object.objectID] !== object else { return }
        object.fireFaultIfNeeded()
        if recordsUndo { recordUndo(deletionOf: object) }
        let wasInserted = object.insertedState
        // Marked deleted before the rules run, so that cycles of cascades end, and an object that refers
        // to itself (whose own inverse the rules edit) stays out of the change set.
        object.deletedState = true
        if !wasInserted {
            changed[ObjectIdentifier(object)] = object
            pendingNotification.deleted.insert(object.objectID)
        }
        // Before the rules tear the relationships down, with `isDeleted` already true, as in Core Data.
        object.prepareForDeletion()
        propagateDeletion(of: object)
        if wasInserted {
            // Never saved: it just goes away.
            object.insertedState = false
            object.deletedState = false
            object.changedIndexes = []
            changed[ObjectIdentifier(object)] = nil
            registry[object.objectID] = nil
            object.managedObjectContext = nil
            discarded[object.objectID] = object
            // Observers that were already told of the insert must now be told it is gone.
            if pendingNotification.inserted.remove(object.objectID) == nil { pendingNotification.deleted.insert(object.objectID) }
            pendingNotification.updated.remove(object.objectID)
        }
    }

    /// Applies the delete rules of a deleted object's relationships: nullify unlinks the other side,
    /// cascade deletes the destinations.
    func propagateDeletion(of object: ManagedObject) {
        for (i, kind) in object.layout.kinds.enumerated() {
            let relationship: RelationshipDescription
            let ids: [ManagedObjectID]
            switch kind {
            case .attribute: continue
            case .toOne(let r):
                relationship = r
                ids = (object.values[i] as? ManagedObjectID).map { [$0] } ?? []
            case .toMany(let r):
                relationship = r
                ids = object.values[i] as? [ManagedObjectID] ?? []
            }
            let targets = ids.compactMap { registeredOrFault($0) }
            switch relationship.deleteRule {
            case .nullify:
                for target in targets { target.inverseRemove(object, relationship: relationship) }
            case .cascade:
                for target in targets {
                    target.inverseRemove(object, relationship: relationship)
                    delete(target)
                }
            case .deny, .noAction:
                break
            }
        }
    }

    func objectDidChange(_ object: ManagedObject) {
        if changeEpoch != 0 && object.changeMark == changeEpoch {
            if lifecycle.isRunningWillSave { lifecycle.changedDuringWillSave.append(object) }
            return
        }
        // An inserted object is in `changed` from `insert` until a save, a rollback or its deletion
        // clears its inserted state, or a reset detaches it (then this is not called): filing it again
        // on each of its first writes cost a table lookup per property set.
        if object.insertedState {
            assert(changed[ObjectIdentifier(object)] === object, "an inserted object is missing from its context's changes")
        } else {
            changed[ObjectIdentifier(object)] = object
        }
        // An inserted object's edits are news once its insertion has been announced.
        if !object.deletedState && !(object.insertedState && pendingNotification.inserted.contains(object.objectID)) {
            pendingNotification.updated.insert(object.objectID)
        }
        if lifecycle.isRunningWillSave { lifecycle.changedDuringWillSave.append(object) }
        if changeEpoch == 0 { changeEpoch = Self.changeEpochs.add(1, ordering: .relaxed).newValue }
        object.changeMark = changeEpoch
    }

    // MARK: Change sets

    // The change sets are read after the edits an import logged are applied: the owners they edit
    // join the changes only then.
    public var insertedObjects: Set<ManagedObject> {
        applyDeferredLinks()
        return Set(changed.values.filter(\.insertedState))
    }
    public var deletedObjects: Set<ManagedObject> {
        applyDeferredLinks()
        return Set(changed.values.filter(\.deletedState))
    }
    public var updatedObjects: Set<ManagedObject> {
        applyDeferredLinks()
        return Set(changed.values.filter(\.isUpdated))
    }
    public var hasChanges: Bool {
        applyDeferredLinks()
        return changed.values.contains { $0.hasChanges }
    }

    /// Ends the current event: registers its changes with the undo manager as one undo action, closes
    /// the manager's group for the event, and posts objects-did-change for what changed since the last
    /// call. Core Data does this at the end of each run-loop event; Granary at save, fetch, merge, undo,
    /// redo and rollback, and whenever you call this.
    public func processPendingChanges() {
        assertOnQueue()
        applyDeferredLinks()
        endUndoEvent()
        postPendingChanges()
    }

    /// Posts objects-did-change for what changed since the last post, without ending the undo event
    /// (a save ends it once it is done).
    func postPendingChanges() {
        guard !pendingNotification.isEmpty else { return }
        let changes = pendingNotification
        pendingNotification = ContextChanges()
        reserveAnnouncement()
        NotificationCenter.default.post(name: .managedObjectContextObjectsDidChange, object: self,
                                        userInfo: changes.userInfo(objectsIn: self, candidates: changed.values, candidatesAreRegistered: true))
        objectsDidChangeFeed.publish(changes, from: ObjectIdentifier(self))
        eventStreams.yield(.objectsDidChange(changes))
    }

    /// Objects-did-change events of this context, for fetched-results controllers.
    let objectsDidChangeFeed = SaveFeed()

    // MARK: Undoing

    /// Drops every unsaved change: inserted objects leave, deleted ones come back, edited ones return to
    /// their last saved values. Empties the undo manager's stacks, as in Core Data.
    public func rollback() {
        assertOnQueue()
        applyDeferredLinks()
        var restored: [ManagedObject] = []
        for object in changed.values {
            object.rejectedValues = []
            if object.insertedState {
                object.insertedState = false
                object.managedObjectContext = nil
                registry[object.objectID] = nil
                // Gone: news only if its insertion was announced.
                pendingNotification.updated.remove(object.objectID)
                if pendingNotification.inserted.remove(object.objectID) == nil { pendingNotification.deleted.insert(object.objectID) }
            } else {
                object.deletedState = false
                object.managedObjectContext = self
                if let committed = object.committed { ObjectObservation.mutating(object, indexes: nil) { object.values = committed } }
                object.changedIndexes = []
                // Back as it was saved: not deleted after all.
                pendingNotification.deleted.remove(object.objectID)
                pendingNotification.refreshed.insert(object.objectID)
                restored.append(object)
            }
        }
        changed.removeAll()
        discarded = [:]
        for object in restored { object.awake(fromSnapshotEvents: .rollback) }
        processPendingChanges()
        // After the event ends, so that what the hooks changed goes too: Core Data's rollback empties
        // the undo stack.
        removeAllUndoActions()
    }

    /// Forgets every object; objects held elsewhere are detached from the context. Empties the undo
    /// manager's stacks, as in Core Data: their actions would restore objects the context no longer has.
    public func reset() {
        assertOnQueue()
        applyDeferredLinks()
        for object in registry.values {
            object.managedObjectContext = nil
            object.forgetFetchedResults()
        }
        registry.removeAll()
        changed.removeAll()
        discarded = [:]
        pendingNotification = ContextChanges()
        pendingUndo = UndoRecord()
        removeAllUndoActions()
    }

    /// Turns an object back into a fault (dropping its changes), or, with `mergeChanges`, reloads it
    /// from the store and puts its unsaved changes back on top.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        assertOnQueue()
        applyDeferredLinks()
        // Fetched properties are evaluated again after a refresh, whatever else it does (Core Data).
        if object.managedObjectContext === self { object.forgetFetchedResults() }
        guard object.managedObjectContext === self, !object.insertedState else { return }
        if mergeChanges {
            guard let record = try? loadRecord(for: object.objectID) else { return }
            merge(record, into: object)
        } else {
            if !object.faultState { object.willTurnIntoFault() }
            let wasFault = object.faultState
            object.changedIndexes = []
            object.deletedState = false
            changed[ObjectIdentifier(object)] = nil
            // Unsaved changes dropped are changes its observers are told of.
            ObjectObservation.mutating(object, indexes: nil) { object.values = object.layout.initialValues }
            object.committed = nil
            object.faultState = true
            if !wasFault { object.didTurnIntoFault() }
        }
        pendingNotification.refreshed.insert(object.objectID)
    }

    /// Takes `record` as the object's saved state and puts its unsaved changes back on top.
    func merge(_ record: ObjectRecord, into object: ManagedObject) {
        let base = object.committed
        let local = object.changedIndexes.map { ($0, object.values[$0]) }
        let wasFault = object.faultState
        object.apply(record)
        for (i, value) in local {
            object.values[i] = object.rebased(value, at: i, base: base?[i], onto: record.values[i])
            object.changedIndexes.insert(i)
        }
        // A fault was filled (and told so by `awakeFromFetch`); a loaded object was refreshed.
        if !wasFault { object.awake(fromSnapshotEvents: .refresh) }
    }

    /// Refreshes every registered object, keeping unsaved changes.
    public func refreshAllObjects() {
        for object in registeredObjects where !object.faultState { refresh(object, mergeChanges: true) }
        processPendingChanges()
    }

    // MARK: Merging saves from elsewhere

    private func updateMergeSubscription() {
        if let mergeToken {
            if let parent { parent.childFeed.unsubscribe(mergeToken) } else { persistentStoreCoordinator?.didSaveFeed.unsubscribe(mergeToken) }
            self.mergeToken = nil
        }
        guard automaticallyMergesChangesFromParent else { return }
        let me = ObjectIdentifier(self)
        let handler: @Sendable (ContextChanges, ObjectIdentifier) -> Void = { [weak self] changes, source in
            guard let self, source != me else { return }
            self.schedule { self.mergeChanges(fromContextDidSave: changes) }
        }
        mergeToken = parent?.childFeed.subscribe(handler) ?? persistentStoreCoordinator?.didSaveFeed.subscribe(handler)
    }

    /// Applies another context's save to this one: registered objects that were updated are refreshed
    /// (keeping this context's unsaved changes), deleted ones leave the context, and observers are told.
    public func mergeChanges(fromContextDidSave changes: ContextChanges) {
        assertOnQueue()
        applyDeferredLinks()
        for id in changes.updated {
            guard let object = liveObject(id), !object.faultState else {
                // Nothing loaded to refresh, but observers (fetched-results controllers) may need to
                // re-evaluate the object: it may now match their predicate.
                pendingNotification.refreshed.insert(id)
                continue
            }
            refresh(object, mergeChanges: true)
        }
        for id in changes.deleted {
            guard let object = liveObject(id) else { continue }
            registry[id] = nil
            changed[ObjectIdentifier(object)] = nil
            object.deletedState = true
            object.managedObjectContext = nil
            pendingNotification.deleted.insert(id)
        }
        pendingNotification.inserted.formUnion(changes.inserted)
        processPendingChanges()
    }
}

extension ManagedObject {
    /// A local value re-applied on top of a newer stored one. A to-many relationship keeps the
    /// other side's additions and removals and applies this context's own (its difference from
    /// `base`, the value it was edited from), so that two contexts adding members to one relationship
    /// both keep theirs; other values are taken as they are.
    func rebased(_ local: Any?, at i: Int, base: Any?, onto stored: Any?) -> Any? {
        guard case .toMany = layout.kinds[i], let local = local as? [ManagedObjectID] else { return local }
        let base = base as? [ManagedObjectID] ?? []
        let stored = stored as? [ManagedObjectID] ?? []
        if base == stored { return local }
        let localSet = Set(local)
        let baseSet = Set(base)
        let removed = baseSet.subtracting(localSet)
        var result = stored.filter { !removed.contains($0) }
        var present = Set(result)
        for id in local where !baseSet.contains(id) && present.insert(id).inserted { result.append(id) }
        return result
    }

    /// Takes a record's values as the object's saved state; a fault so filled is told by `awakeFromFetch()`.
    func apply(_ record: ObjectRecord) {
        let wasFault = faultState
        if layout.isObservable && !wasFault {
            // A loaded object taking newer values (a refresh, a merge): its observers are told. A fault
            // being filled changes nothing anybody saw.
            ObjectObservation.mutating(self, indexes: nil) { values = record.values }
        } else {
            values = record.values
        }
        committed = record.values
        rowVersion = record.version
        changedIndexes = []
        faultState = false
        if wasFault { awakeFromFetchUnrecorded() }
    }
}
