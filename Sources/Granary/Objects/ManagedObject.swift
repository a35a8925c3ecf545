import Foundation

/// An object in the object graph: one row of its entity's table, tracked by a context.
///
/// Subclass it and declare properties with `@Managed` for typed access, or use `value(forKey:)` and
/// `setValue(_:forKey:)` for models built at run time:
///
/// ```swift
/// final class Employee: ManagedObject {
///     @Managed var name: String
///     @Managed var manager: Employee?
///     @Managed var reports: Set<Employee>
/// }
/// ```
///
/// Objects are not thread-safe and not `Sendable`: use one only on its context's queue (inside
/// `perform`/`performAndWait`, or on the main thread for a main-queue context). Pass `objectID`s
/// between contexts instead.
open class ManagedObject: CustomStringConvertible, Hashable {
    /// The entity this object belongs to.
    public var entity: EntityDescription { layout.entity }

    // The ID, the context and the state below are read and written several times for every property
    // set, read and saved, and only ever on the context's queue, by code that takes no access to them
    // across a call that could reach them again (to-many edits take their array out of `values` first).
    // They opt out of dynamic exclusivity checking, whose bookkeeping (a thread-local access set per
    // read or write) was a tenth of an import's instructions.

    /// Temporary until the object is saved, permanent after.
    @exclusivity(unchecked) public internal(set) var objectID: ManagedObjectID
    /// The context that owns the object; `nil` once it is removed (deleted and saved, or reset).
    @exclusivity(unchecked) public internal(set) weak var managedObjectContext: ManagedObjectContext?

    let layout: EntityLayout
    /// Current values by property index. Attributes hold Swift values; to-one relationships hold a
    /// `ManagedObjectID?`, to-many ones a `[ManagedObjectID]`.
    @exclusivity(unchecked) var values: [Any?] {
        // Any write may change a to-many relationship behind the member sets' back. (A `didSet` that
        // does not read `oldValue` keeps element writes in place.)
        didSet { if !keepsMemberSets && !memberSets.isEmpty { memberSets = [] } }
    }
    /// Members of large to-many relationships as sets, built on first use by inverse maintenance:
    /// linking 1,000 employees to a department one by one would otherwise scan its growing array on
    /// every link. Dropped on every write to `values` but the ones that keep it up to date. By property
    /// index, as long as the highest index that has one (an array: taking a set out of a dictionary and
    /// putting it back on every link cost more than the membership test it serves).
    @exclusivity(unchecked) var memberSets: [MemberIDSet?] = []
    /// The values as last read from or written to the store (or parent context); `nil` for an object
    /// that was never saved.
    @exclusivity(unchecked) var committed: [Any?]?
    /// The row version the committed values came with: the optimistic-locking check at save.
    @exclusivity(unchecked) var rowVersion: Int64 = 0
    @exclusivity(unchecked) var changedIndexes = PropertyIndexSet()
    /// The context's change epoch when it last filed this object as changed (see `objectDidChange`).
    @exclusivity(unchecked) var changeMark: UInt64 = 0
    // The flags and the small index share one word: an object is a few hundred bytes, and a `Bool`
    // declared alone takes a word of its own.
    @exclusivity(unchecked) var faultState = false
    @exclusivity(unchecked) var insertedState = false
    @exclusivity(unchecked) var deletedState = false
    /// Set once `awakeFromInsert()` has run: Core Data calls it once in an object's life, not again
    /// when the object is inserted anew (into a parent by a child's save, or after a rollback).
    @exclusivity(unchecked) var hasAwokenFromInsert = false
    /// Set while the context's `DeferredInverseLinks` holds edits of this object's relationships.
    @exclusivity(unchecked) var hasDeferredLinks = false
    /// Set while `addMember` writes a relationship whose member set it keeps up to date itself.
    @exclusivity(unchecked) private var keepsMemberSets = false
    /// The property a save is validating, so that the model's rules, reached through the overridable
    /// `validateValue(_:forKey:)`, find it without looking its name up (-1: none, or past `Int16`).
    @exclusivity(unchecked) var validatingIndex: Int16 = -1
    /// Errors of typed setters the model refused; the next save reports them.
    @exclusivity(unchecked) var rejectedValues: [Error] = []
    /// The batch this fault belongs to, when it came from a fetch with a batch size.
    @exclusivity(unchecked) var batch: (faulter: BatchFaulter, index: Int)?
    /// The results of fetched properties read since the object was last refreshed, by name.
    var fetchedResults: [String: [ManagedObject]] = [:]

    /// Creates an object of `entity`, inserted into `context` if one is given (Core Data's designated
    /// initializer). Subclasses that add stored properties must keep this initializer.
    public required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        let layout = EntityLayout.of(entity)
        self.layout = layout
        self.objectID = ManagedObjectID(temporaryIn: layout.temporaryScope)
        self.values = layout.initialValues
        if let context { context.insert(self) }
    }

    deinit {
        if layout.isObservable { ObjectObservation.forget(self) }
    }

    /// Creates an object of this class's entity in `context`'s model and inserts it.
    /// The class must be registered for an entity (`Entity("Employee", as: Employee.self)`).
    public convenience init(context: ManagedObjectContext) {
        guard let entity = context.model?.entity(for: Self.self) else {
            preconditionFailure("\(Self.self) is not the class of any entity in the model of context \(context)")
        }
        self.init(entity: entity, insertInto: context)
    }

    // MARK: State

    public var isInserted: Bool { insertedState }
    public var isDeleted: Bool { deletedState }
    /// Whether the object has unsaved edits. An edit that set a property to its saved value counts
    /// (as in Core Data); `hasPersistentChangedValues` tells whether anything would be written.
    public var isUpdated: Bool {
        applyPendingLinks()
        return !insertedState && !deletedState && !changedIndexes.isEmpty
    }
    /// Whether the object's values have not been loaded yet; touching any property loads them.
    public var isFault: Bool { faultState }
    public var hasChanges: Bool {
        applyPendingLinks()
        return insertedState || deletedState || !changedIndexes.isEmpty || !rejectedValues.isEmpty
    }

    /// Applies the edits an import logged for this object's relationships, if any, before its change
    /// state is read (see `DeferredInverseLinks`).
    @inline(__always)
    func applyPendingLinks() {
        if hasDeferredLinks { managedObjectContext?.applyDeferredLinks() }
    }

    /// The persistent properties whose values differ from the last saved ones, with their new values
    /// (relationships as objects); every persistent property of an inserted object. A property set
    /// back to its saved value, and a transient one, is left out (Core Data's `changedValues()`).
    public func changedValues() -> [String: Any?] {
        var result: [String: Any?] = [:]
        for i in persistentChangedIndexes() where !layout.isHidden[i] { result[layout.names[i]] = publicValue(at: i) }
        return result
    }

    /// The last saved values of `keys` (all properties when `nil`); relationships as object IDs.
    public func committedValues(forKeys keys: [String]?) -> [String: Any?] {
        guard let committed else { return [:] }
        var result: [String: Any?] = [:]
        for (i, name) in layout.names.enumerated() where !layout.isHidden[i] && keys?.contains(name) ?? true { result[name] = committed[i] }
        return result
    }

    // MARK: Key-value access

    /// The value of a property: an attribute's value, a to-one's object, a to-many's `Set` (or array,
    /// when ordered) of objects, a fetched property's array of objects (fetched on first read).
    /// - Throws: `ContextError.unknownKey` naming the entity and key; for a fetched property, what
    ///   `fetchedObjects(forKey:as:)` throws.
    public func value(forKey key: String) throws -> Any? {
        guard let i = layout.indexByName[key], !layout.isHidden[i] else {
            if entity.fetchedPropertiesByName[key] != nil { return try fetchedObjects(forKey: key) }
            throw ContextError.unknownKey(entity: entity.name, key: key)
        }
        return publicValue(at: i)
    }

    /// Sets a property, checking the value against the model, and maintains the inverse relationship.
    /// - Throws: `ContextError.unknownKey`, `.wrongValueType` naming entity, key and value,
    ///   `.foreignObject` for a relationship to an object of another context, or `.readOnlyProperty` for
    ///   a derived attribute or a fetched property.
    public func setValue(_ value: Any?, forKey key: String) throws {
        guard let i = layout.indexByName[key], !layout.isHidden[i] else {
            if let fetched = entity.fetchedPropertiesByName[key] {
                throw ContextError.readOnlyProperty(
                    entity: entity.name, key: key, reason: "it is a fetched property of \(fetched.destinationEntityName) objects")
            }
            throw ContextError.unknownKey(entity: entity.name, key: key)
        }
        try setPublicValue(value, at: i)
    }

    /// Debug builds stop on use off the context's queue. Release builds do not even load the weak
    /// context reference: that load costs on every read and write even when the check is empty.
    @inline(__always)
    func assertOnContextQueue(_ function: StaticString = #function) {
        #if DEBUG
        managedObjectContext?.assertOnQueue(function)
        #endif
    }

    /// The value `value(forKey:)` hands out; with `pendingMembers`, a to-many's members come as
    /// `ToManyMembers`, for a reader that puts them in a collection of its own type.
    func publicValue(at i: Int, pendingMembers: Bool = false) -> Any? {
        assertOnContextQueue()
        fireFaultIfNeeded()
        switch layout.kinds[i] {
        case .attribute:
            return values[i]
        case .toOne:
            guard let stored = values[i], let id = stored as? ManagedObjectID else { return nil }
            return managedObjectContext?.registeredOrFault(id)
        case .toMany(let r):
            let context = managedObjectContext
            // The members stay faults (as in Core Data), but the first one touched loads its batch
            // of them in one pass, as a fired relationship fault fills Core Data's row cache.
            let members = ToManyMembers(objects: context?.registeredOrFaults(values[i] as? [ManagedObjectID] ?? []) ?? [],
                                        isOrdered: r.isOrdered, context: context)
            return pendingMembers ? members : members.handedOut()
        }
    }

    /// A to-one relationship's target, as `publicValue(at:)` gives it, without boxing it in an `Any?`.
    func toOneTarget(at i: Int) -> ManagedObject? {
        assertOnContextQueue()
        fireFaultIfNeeded()
        guard let id = AnyBox.value(values[i], as: ManagedObjectID.self) ?? (values[i] as? ManagedObjectID) else { return nil }
        return managedObjectContext?.registeredOrFault(id)
    }

    /// Whether writing `canonical` at `i` would change nothing and the context asks to skip such writes.
    private func isUnchangedWrite(_ canonical: Any?, at i: Int, _ type: AttributeType?) -> Bool {
        // An inserted object's writes are no update to report; comparing them would only cost.
        guard !insertedState, let context = managedObjectContext, context.ignoresUnchangedWrites else { return false }
        fireFaultIfNeeded()
        return ManagedObjectContext.same(values[i], canonical, as: type)
    }

    func setPublicValue(_ value: Any?, at i: Int) throws {
        if layout.isDerived[i] { throw derivedAttributeIsReadOnly(at: i) }
        // Before looking through optionals: a cast to the attribute's type already does. A value of the
        // attribute's own type (what typed setters pass) needs no cast at all.
        if let type = layout.attributeTypes[i], type.holdsOwnSwiftType(value) {
            if isUnchangedWrite(value, at: i, type) { return }
            setRaw(value, at: i)
            return
        }
        if let value, let type = layout.attributeTypes[i], let fast = type.canonicalFastPath(value) {
            if isUnchangedWrite(fast, at: i, type) { return }
            setRaw(fast, at: i)
            return
        }
        switch layout.kinds[i] {
        case .attribute(let a):
            let value = ManagedValueCoercion.unwrap(value)
            if a.type == .undefined {
                // Any value at all, kept as set: the attribute is transient and never converted for storage.
                setRaw(value is NSNull ? nil : value, at: i)
                return
            }
            let canonical: Any?
            do {
                canonical = try a.type.swiftValue(from: a.storageValue(for: value))
            } catch {
                throw ContextError.wrongValueType(entity: entity.name, key: a.name, value: SafeDescription.of(value),
                                                  reason: "\(error)")
            }
            if isUnchangedWrite(canonical, at: i, a.type) { return }
            setRaw(canonical, at: i)
        case .toOne:
            let target: ManagedObject?
            if let object = value as? ManagedObject {
                target = object
            } else if ManagedValueCoercion.unwrap(value) == nil || value is NSNull {
                target = nil
            } else {
                throw ContextError.wrongValueType(entity: entity.name, key: layout.names[i], value: SafeDescription.of(value),
                                                  reason: "expected a managed object or nil")
            }
            try setToOne(target, at: i)
        case .toMany:
            var objects: [ManagedObject] = []
            switch ManagedValueCoercion.unwrap(value) {
            case nil: break
            case let set as Set<ManagedObject>: objects = Array(set)
            case let array as [ManagedObject]: objects = array
            // Core Data's generated classes assign `NSSet` and `NSOrderedSet` values.
            case let set as NSSet where set.allObjects is [ManagedObject]: objects = set.allObjects as! [ManagedObject]
            case let ordered as NSOrderedSet where ordered.array is [ManagedObject]: objects = ordered.array as! [ManagedObject]
            case let any as [Any]:
                guard let typed = any as? [ManagedObject] else { fallthrough }
                objects = typed
            default:
                if let sequence = value as? any Sequence, let typed = Array(sequence) as? [ManagedObject] {
                    objects = typed
                } else {
                    throw ContextError.wrongValueType(entity: entity.name, key: layout.names[i], value: SafeDescription.of(value),
                                                      reason: "expected a set or array of managed objects")
                }
            }
            try setToMany(objects, at: i)
        }
    }

    /// Keeps a change a non-throwing setter could not make, for the next `save()` to report (a setter
    /// cannot throw, and a crash would be worse than a failed save).
    func reject(_ error: Error) {
        rejectedValues.append(error)
        managedObjectContext?.changed[ObjectIdentifier(self)] = self
    }

    /// A to-many relationship's members, in order.
    func members(at i: Int) -> [ManagedObject] {
        fireFaultIfNeeded()
        return (values[i] as? [ManagedObjectID] ?? []).compactMap { managedObjectContext?.registeredOrFault($0) }
    }

    /// Sets a value without inverse maintenance, recording the change.
    func setRaw(_ value: Any?, at i: Int) {
        fireFaultIfNeeded()
        assertOnContextQueue()
        // The context is loaded once for both uses: a weak load on every write costs.
        let context = managedObjectContext
        if let context, context.recordsUndo { context.recordUndo(of: self, at: i, before: values[i]) }
        store(value, at: i, in: context)
    }

    /// The write of `setRaw`, after the undo record was taken care of.
    @inline(__always)
    private func store(_ value: Any?, at i: Int, in context: ManagedObjectContext?) {
        if layout.isObservable {
            ObjectObservation.mutating(self, indexes: [i]) { values[i] = value }
        } else {
            values[i] = value
        }
        if !insertedState { changedIndexes.insert(i) }
        context?.objectDidChange(self)
    }

    // MARK: Relationships

    private func checkSameContext(_ other: ManagedObject, key: String) throws {
        if other.managedObjectContext !== managedObjectContext {
            throw ContextError.foreignObject(entity: entity.name, key: key, object: other.objectID.description)
        }
    }

    func setToOne(_ target: ManagedObject?, at i: Int) throws {
        guard case .toOne(let r) = layout.kinds[i] else { return }
        if let target { try checkSameContext(target, key: r.name) }
        fireFaultIfNeeded()
        // Read from its box without a cast, as `toOneTarget(at:)` does.
        let oldID = AnyBox.value(values[i], as: ManagedObjectID.self) ?? (values[i] as? ManagedObjectID)
        let old = oldID.flatMap { managedObjectContext?.registeredOrFault($0) }
        if old === target { return }
        setRaw(target?.objectID, at: i)
        if let old, !old.deferInverse(of: self, relationship: r, isAddition: false) { old.inverseRemove(self, relationship: r) }
        if let target, !target.deferInverse(of: self, relationship: r, isAddition: true) { target.inverseAdd(self, relationship: r) }
    }

    func setToMany(_ targets: [ManagedObject], at i: Int) throws {
        guard case .toMany(let r) = layout.kinds[i] else { return }
        fireFaultIfNeeded()
        let oldIDs = values[i] as? [ManagedObjectID] ?? []
        for t in targets where t.managedObjectContext !== managedObjectContext {
            // A member it already has may stay: a set read from the relationship and assigned back may
            // hold an object inserted and deleted since, which has left the context (see `discarded`).
            if managedObjectContext?.discarded[t.objectID] === t && oldIDs.contains(t.objectID) { continue }
            try checkSameContext(t, key: r.name)
        }
        var seen = Set<ManagedObjectID>()
        let newIDs = targets.map(\.objectID).filter { seen.insert($0).inserted }
        if oldIDs == newIDs { return }
        setRaw(newIDs, at: i)
        let newSet = Set(newIDs)
        let oldSet = Set(oldIDs)
        for id in oldIDs where !newSet.contains(id) {
            managedObjectContext?.registeredOrFault(id)?.inverseRemove(self, relationship: r)
        }
        for t in targets where !oldSet.contains(t.objectID) { t.inverseAdd(self, relationship: r) }
    }

    /// Adds objects to a to-many relationship (keeping order for ordered ones).
    /// - Throws: as `setValue(_:forKey:)`.
    public func add(_ objects: [ManagedObject], toRelationship key: String) throws {
        guard let i = layout.indexByName[key], case .toMany = layout.kinds[i] else {
            throw ContextError.unknownKey(entity: entity.name, key: key)
        }
        // Loaded first: the members are read from `values`, which a fault (or logged edits) leaves behind.
        fireFaultIfNeeded()
        let current = (values[i] as? [ManagedObjectID] ?? []).compactMap { managedObjectContext?.registeredOrFault($0) }
        try setToMany(current + objects, at: i)
    }

    /// Removes objects from a to-many relationship.
    /// - Throws: as `setValue(_:forKey:)`.
    public func remove(_ objects: [ManagedObject], fromRelationship key: String) throws {
        guard let i = layout.indexByName[key], case .toMany = layout.kinds[i] else {
            throw ContextError.unknownKey(entity: entity.name, key: key)
        }
        let removed = Set(objects.map(\.objectID))
        fireFaultIfNeeded()
        let current = (values[i] as? [ManagedObjectID] ?? []).filter { !removed.contains($0) }
            .compactMap { managedObjectContext?.registeredOrFault($0) }
        try setToMany(current, at: i)
    }

    /// `self` was linked to `source` through `relationship` (whose inverse lives here): link back.
    func inverseAdd(_ source: ManagedObject, relationship: RelationshipDescription) {
        guard let i = layout.indexByName[relationship.graphInverseName] else { return }
        fireFaultIfNeeded()
        switch layout.kinds[i] {
        case .toOne:
            let previous = values[i] as? ManagedObjectID
            if previous == source.objectID { return }
            setRaw(source.objectID, at: i)
            // One-to-many: the object can belong to one owner only; leave the previous owner's set.
            if let previous, let owner = managedObjectContext?.registeredOrFault(previous), owner !== source,
                let ownerIndex = owner.layout.indexByName[relationship.name]
            {
                owner.fireFaultIfNeeded()
                if case .toMany = owner.layout.kinds[ownerIndex] {
                    owner.removeID(objectID, at: ownerIndex)
                } else if owner.values[ownerIndex] as? ManagedObjectID == objectID {
                    owner.setRaw(nil, at: ownerIndex)
                }
            }
        case .toMany:
            addMember(source.objectID, at: i)
        case .attribute:
            break
        }
    }

    /// Relationships at least this long get a member set for membership tests.
    static let memberSetThreshold = 32

    /// Appends an ID to a to-many relationship unless it is there already; returns whether it was added.
    @discardableResult
    func addMember(_ id: ManagedObjectID, at i: Int) -> Bool {
        var added = false
        mutateMembers(at: i) { ids, members in
            added = Self.addMember(id, to: &ids, members: &members)
            return added
        }
        return added
    }

    /// Appends `id` to a relationship's IDs unless it is there, keeping its member set (built once the
    /// relationship is long enough to need one); returns whether it was added.
    static func addMember(_ id: ManagedObjectID, to ids: inout [ManagedObjectID], members: inout MemberIDSet?) -> Bool {
        guard ids.count >= memberSetThreshold else {
            members = nil
            if ids.contains(id) { return false }
            ids.append(id)
            return true
        }
        if members == nil { members = MemberIDSet(ids) }
        guard members!.insert(id) else { return false }
        ids.append(id)
        return true
    }

    /// Takes `id` out of a relationship's IDs, if it is there, keeping its member set; returns whether
    /// it was there.
    static func removeMember(_ id: ManagedObjectID, from ids: inout [ManagedObjectID], members: inout MemberIDSet?) -> Bool {
        if let known = members, !known.contains(id) { return false }
        guard let k = ids.firstIndex(of: id) else { return false }
        ids.remove(at: k)
        members?.remove(id)
        return true
    }

    /// `mutateIDs` for an edit that keeps the relationship's member set up to date itself (nil when
    /// there is none), so that the write does not drop it.
    func mutateMembers(at i: Int, _ body: (inout [ManagedObjectID], inout MemberIDSet?) -> Bool) {
        // Loaded first: loading replaces `values`, which must drop the sets as any other write does.
        fireFaultIfNeeded()
        // Taken out of the table, so that inserting into it does not copy it; it goes back up to date.
        var members: MemberIDSet?
        if i < memberSets.count {
            members = memberSets[i]
            memberSets[i] = nil
        }
        keepsMemberSets = true
        defer { keepsMemberSets = false }
        mutateIDs(at: i) { ids in body(&ids, &members) }
        if let members {
            if memberSets.count <= i { memberSets += repeatElement(nil, count: i + 1 - memberSets.count) }
            memberSets[i] = members
        }
    }

    /// `self` was unlinked from `source` through `relationship`: unlink back.
    func inverseRemove(_ source: ManagedObject, relationship: RelationshipDescription) {
        guard let i = layout.indexByName[relationship.graphInverseName] else { return }
        fireFaultIfNeeded()
        switch layout.kinds[i] {
        case .toOne:
            if values[i] as? ManagedObjectID == source.objectID { setRaw(nil, at: i) }
        case .toMany:
            removeID(source.objectID, at: i)
        case .attribute:
            break
        }
    }

    /// Edits a to-many relationship's IDs in place, recording the change when `body` says it made one.
    /// The array is taken out of `values` first, so that it is not shared and appending to a big
    /// relationship does not copy it.
    func mutateIDs(at i: Int, _ body: (inout [ManagedObjectID]) -> Bool) {
        fireFaultIfNeeded()
        // Read in place when the value is the array itself (as it always is but for a value set from
        // outside the typed paths): a cast from `Any` went through the runtime each time.
        var ids = AnyBox.value(values[i], as: [ManagedObjectID].self) ?? (values[i] as? [ManagedObjectID] ?? [])
        values[i] = nil
        let context = managedObjectContext
        // The array is copied for the undo record only on the event's first change of it: an event that
        // links a thousand members one by one copies it once, and a context without an undo manager never.
        if let context, context.recordsUndo, context.needsUndoImage(of: self, at: i) {
            let before = ids
            guard body(&ids) else {
                values[i] = ids
                return
            }
            context.recordUndo(of: self, at: i, before: before)
        } else {
            guard body(&ids) else {
                values[i] = ids
                return
            }
        }
        assertOnContextQueue()
        store(ids, at: i, in: context)
    }

    /// Takes one ID out of a to-many relationship, if it is there, keeping its member set up to date:
    /// an import that moves objects between owners adds and removes in turn, and dropping the set on
    /// each removal would rebuild it on each addition.
    @discardableResult
    func removeID(_ id: ManagedObjectID, at i: Int) -> Bool {
        var removed = false
        mutateMembers(at: i) { ids, members in
            removed = Self.removeMember(id, from: &ids, members: &members)
            return removed
        }
        return removed
    }

    // MARK: Faulting

    func fireFaultIfNeeded() {
        // Every accessor comes here first: edits an import logged for this object are applied before
        // anything reads it (see `DeferredInverseLinks`).
        applyPendingLinks()
        guard faultState, let context = managedObjectContext else { return }
        if let batch {
            batch.faulter.load(batch.index)
            if !faultState { return }
        }
        context.fulfillFault(self)
    }

    /// Replaces every reference to `old` in this object's relationships (a temporary ID becoming
    /// permanent at save).
    func replaceReferences(_ mapping: [ManagedObjectID: ManagedObjectID]) {
        func remap(_ array: inout [Any?]) {
            for i in layout.relationshipIndexes {
                // Read from their boxes without casts: a save remaps every relationship of every object.
                if let id = AnyBox.value(array[i], as: ManagedObjectID.self) ?? (array[i] as? ManagedObjectID) {
                    if id.isTemporaryID, let new = mapping[id] { array[i] = new }
                } else if let ids = AnyBox.value(array[i], as: [ManagedObjectID].self) ?? (array[i] as? [ManagedObjectID]),
                    ids.contains(where: { $0.isTemporaryID && mapping[$0] != nil }) {
                    array[i] = ids.map { $0.isTemporaryID ? mapping[$0] ?? $0 : $0 }
                }
            }
        }
        remap(&values)
        if var c = committed {
            remap(&c)
            committed = c
        }
    }

    // MARK: Lifecycle hooks

    /// Called once in the object's life, when it is first inserted into a context (by
    /// `init(entity:insertInto:)` with a context, or `insert(_:)`): set initial values here, such as a
    /// unique identifier or a creation date. Not called again when a child context's save hands the
    /// object to its parent. Overrides call `super` first. The default does nothing.
    open func awakeFromInsert() {}

    /// Called when a fault is filled from the store or the parent context: compute caches and transient
    /// values from the persistent ones here. Changes made here are not recorded as changes (the object
    /// stays unchanged), as in Core Data, so do not edit relationships here: their inverses would not
    /// follow. Overrides call `super` first. The default does nothing.
    open func awakeFromFetch() {}

    /// Called after the object's values were replaced wholesale by `events`: `.refresh`
    /// (`refresh(_:mergeChanges: true)`, a merge of another context's save), `.rollback` (`rollback()`),
    /// `.mergePolicy` (a merge policy resolved a conflict of this object during a save), `.undoInsertion`,
    /// `.undoDeletion`, `.undoUpdate` (the context's `undo()` or `redo()` took the object out, brought it
    /// back, or put back its values). Recompute what depends on the values here; changes made here during
    /// an undo or redo are not recorded for undo. The default does nothing.
    open func awake(fromSnapshotEvents events: SnapshotEventType) {}

    /// Called by `save()` for every inserted, updated and deleted object, before validation: changes
    /// made here are validated and saved with the rest (a last-modified date). A change made here makes
    /// the save call `willSave()` of that object again, so compare before setting. Read `isDeleted` to
    /// tell a deletion. The default does nothing.
    open func willSave() {}

    /// Called after a successful save for every object it inserted, updated or deleted; a deleted object
    /// still reads `isDeleted == true` here, and leaves its context right after. Changes made here are
    /// unsaved changes of the context. The default does nothing.
    open func didSave() {}

    /// Called when the object is deleted (`delete(_:)`, or a cascade reaching it), before the delete
    /// rules of its relationships run: the relationships are still intact here. The default does nothing.
    open func prepareForDeletion() {}

    /// Called before the object turns into a fault (`refresh(_:mergeChanges: false)`, a batched fetch
    /// evicting it, its deletion being saved), while its values can still be read. The default does
    /// nothing.
    open func willTurnIntoFault() {}

    /// Called after the object turned into a fault: clear caches computed from its values here. The
    /// default does nothing.
    open func didTurnIntoFault() {}

    // MARK: Validation hooks

    /// Checks the object before `save()` inserts it: the default checks every property against the
    /// model with `validateValue(_:forKey:)`. Override to add rules across properties; call `super`
    /// and let its error through (or combine it with yours).
    /// - Throws: `ContextError.validation` listing every invalid property, or what an override of
    ///   `validateValue(_:forKey:)` throws.
    open func validateForInsert() throws { try validateProperties(Array(layout.names.indices)) }

    /// Checks the object before `save()` writes its changes: the default checks, with
    /// `validateValue(_:forKey:)`, the properties changed since the last save (the others were valid
    /// when saved). Override to add rules; call `super` first.
    /// - Throws: `ContextError.validation` listing every invalid property, or what an override of
    ///   `validateValue(_:forKey:)` throws.
    open func validateForUpdate() throws { try validateProperties(changedIndexes.sorted()) }

    /// Checks that the object may be deleted: the default refuses while a relationship with the deny
    /// rule still holds objects. Override to add rules; call `super` first.
    /// - Throws: `ContextError.deleteDenied` naming the relationship.
    open func validateForDelete() throws { try checkDenyRules() }

    /// Checks one value for a property, and may replace it with a coerced one (an `Int` for an
    /// `integer16` attribute becomes an `Int16`): what `save()` then stores. The default applies the
    /// model's rules (type, optionality, ranges, lengths, patterns, relationship counts). Override to
    /// add per-property rules (switch on `key`), calling `super` for the model's.
    /// - Throws: `ContextError.validation` listing what is wrong with the value,
    ///   `ContextError.unknownKey` for a key the entity lacks.
    open func validateValue(_ value: inout Any?, forKey key: String) throws { try validateModelRules(&value, forKey: key) }

    // MARK: Identity

    public static func == (a: ManagedObject, b: ManagedObject) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    open var description: String {
        let state = faultState ? "fault" : insertedState ? "inserted" : deletedState ? "deleted" : changedIndexes.isEmpty ? "saved" : "updated"
        return "<\(entity.name) \(objectID) (\(state))>"
    }
}
