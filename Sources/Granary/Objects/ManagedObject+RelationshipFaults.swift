import Foundation

extension ManagedObject {
    /// The IDs of the objects a relationship holds, without loading any of them: Core Data's
    /// `objectIDs(forRelationshipNamed:)`, for code that only needs to know which objects are related
    /// (to count them, to pass them to another context, to prefetch them in a batch).
    ///
    /// The object's own row is read if it is a fault (the IDs live in it); the destinations stay as they
    /// are. A to-one gives one ID or none; an ordered to-many gives its order.
    /// - Throws: `ContextError.unknownKey` when `key` names no relationship of the entity.
    public func objectIDs(forRelationshipNamed key: String) throws -> [ManagedObjectID] {
        let i = try relationshipIndex(forKey: key)
        assertOnContextQueue()
        fireFaultIfNeeded()
        return relatedIDs(at: i)
    }

    /// Whether reading the relationship would still have to load something: Core Data's
    /// `hasFault(forRelationshipNamed:)`. True while this object is a fault, or while one of the
    /// destination objects is not loaded in the context (not registered, or registered as a fault);
    /// false once every destination is loaded, and for an empty relationship of a loaded object. Asking
    /// fires nothing.
    /// - Throws: `ContextError.unknownKey` when `key` names no relationship of the entity.
    public func hasFault(forRelationshipNamed key: String) throws -> Bool {
        let i = try relationshipIndex(forKey: key)
        assertOnContextQueue()
        applyPendingLinks()
        if isFault { return true }
        guard let context = managedObjectContext else { return false }
        return relatedIDs(at: i).contains { id in context.registeredObject(for: id)?.isFault ?? true }
    }

    private func relationshipIndex(forKey key: String) throws(ContextError) -> Int {
        guard let i = layout.indexByName[key], !layout.isHidden[i] else { throw .unknownKey(entity: entity.name, key: key) }
        if case .attribute = layout.kinds[i] { throw .unknownKey(entity: entity.name, key: key) }
        return i
    }

    /// The IDs a loaded object's relationship at `i` holds, as stored.
    private func relatedIDs(at i: Int) -> [ManagedObjectID] {
        switch layout.kinds[i] {
        case .toOne:
            let id = AnyBox.value(values[i], as: ManagedObjectID.self) ?? (values[i] as? ManagedObjectID)
            return id.map { [$0] } ?? []
        case .toMany:
            return values[i] as? [ManagedObjectID] ?? []
        case .attribute:
            return []
        }
    }
}
