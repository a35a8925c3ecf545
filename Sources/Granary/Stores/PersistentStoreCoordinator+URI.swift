import Foundation

extension PersistentStoreCoordinator {
    /// The object ID a URI from `ManagedObjectID.uriRepresentation` stands for, if it belongs to one of
    /// this coordinator's stores: Core Data's `managedObjectID(forURIRepresentation:)`, for IDs kept
    /// outside the store (user defaults, a URL scheme, a file) and brought back.
    ///
    /// As in Core Data, the row itself is not read: an ID of a deleted object is returned, and fetching
    /// it (`existingObject(with:)`) then fails.
    /// - Parameter uri: A URI of the form `x-granary://<store UUID>/<Entity>/p<key>`.
    /// - Returns: nil for a URI that is not an object URI, a temporary ID's URI, a URI of a store not
    ///   attached to this coordinator, or of an entity that store does not hold.
    public func managedObjectID(forURIRepresentation uri: URL) -> ManagedObjectID? {
        guard let id = try? ManagedObjectID(uriRepresentation: uri), let storeIdentifier = id.persistentStoreIdentifier,
            let store = persistentStores.first(where: { $0.identifier == storeIdentifier }),
            store.entityNames.contains(id.entityName)
        else { return nil }
        return id
    }
}
