import Granary

// Core Data's notification names and user-info keys. The names are Granary's own notifications (one
// post, two spellings); the keys are the ones Granary's notifications carry their object sets under.

extension Notification.Name {
    /// Core Data's name for `managedObjectContextDidSave`.
    public static let NSManagedObjectContextDidSave = Notification.Name.managedObjectContextDidSave
    /// Core Data's name for `managedObjectContextWillSave`.
    public static let NSManagedObjectContextWillSave = Notification.Name.managedObjectContextWillSave
    /// Core Data's name for `managedObjectContextObjectsDidChange`.
    public static let NSManagedObjectContextObjectsDidChange = Notification.Name.managedObjectContextObjectsDidChange
}

extension ManagedObjectContext {
    /// Core Data's (iOS 14) name for the did-save notification.
    public static let didSaveObjectsNotification = Notification.Name.managedObjectContextDidSave
    /// Core Data's (iOS 14) name for the will-save notification.
    public static let willSaveObjectsNotification = Notification.Name.managedObjectContextWillSave
    /// Core Data's (iOS 14) name for the objects-did-change notification.
    public static let didChangeObjectsNotification = Notification.Name.managedObjectContextObjectsDidChange
}

/// The inserted objects (`Set<NSManagedObject>`) in a context notification's `userInfo`.
public let NSInsertedObjectsKey = ContextChanges.insertedObjectsKey
/// The updated objects (`Set<NSManagedObject>`) in a context notification's `userInfo`.
public let NSUpdatedObjectsKey = ContextChanges.updatedObjectsKey
/// The deleted objects (`Set<NSManagedObject>`) in a context notification's `userInfo`.
public let NSDeletedObjectsKey = ContextChanges.deletedObjectsKey
/// The refreshed objects (`Set<NSManagedObject>`) in an objects-did-change notification's `userInfo`.
public let NSRefreshedObjectsKey = ContextChanges.refreshedObjectsKey
/// Object IDs of inserted objects, for `mergeChanges(fromRemoteContextSave:into:)`.
public let NSInsertedObjectIDsKey = "inserted_objectIDs"
/// Object IDs of updated objects, for `mergeChanges(fromRemoteContextSave:into:)`.
public let NSUpdatedObjectIDsKey = "updated_objectIDs"
/// Object IDs of deleted objects, for `mergeChanges(fromRemoteContextSave:into:)`.
public let NSDeletedObjectIDsKey = "deleted_objectIDs"
