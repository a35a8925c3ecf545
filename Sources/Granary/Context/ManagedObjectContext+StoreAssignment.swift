import Foundation

extension ManagedObjectContext {
    /// Chooses the store a newly inserted object will be saved in (Core Data's `assign(_:to:)`), for
    /// models whose configurations put one entity in several stores (by default, an entity goes to the
    /// first attached store holding it). The object gets its permanent ID in that store now; fetches
    /// read every store holding the entity.
    /// - Throws: `ContextError.invalidRequest` for an object that is not newly inserted in this context,
    ///   already has a permanent ID in another store, or whose entity the store's configuration lacks;
    ///   `.noPersistentStore` for a store not attached to this context's coordinator; store errors.
    public func assign(_ object: ManagedObject, to store: PersistentStore) throws {
        assertOnQueue()
        let entity = object.entity.name
        guard object.managedObjectContext === self, object.isInserted else {
            throw ContextError.invalidRequest(entity: entity, reason: "only an object newly inserted in this context can be assigned to a store")
        }
        guard let coordinator = persistentStoreCoordinator, coordinator.persistentStores.contains(where: { $0 === store }) else {
            throw ContextError.noPersistentStore("the store \(store.url?.path ?? store.identifier.uuidString) is not attached to this context's coordinator")
        }
        guard store.entityNames.contains(entity) else {
            throw ContextError.invalidRequest(entity: entity, reason: "the store's configuration '\(store.configurationName ?? "Default")' does not hold entity '\(entity)'")
        }
        if let current = object.objectID.persistentStoreIdentifier {
            if current == store.identifier { return }
            throw ContextError.invalidRequest(entity: entity, reason: "\(object.objectID) already has its permanent ID in another store")
        }
        try obtainPermanentIDs(for: [object]) { _ in store }
    }
}
