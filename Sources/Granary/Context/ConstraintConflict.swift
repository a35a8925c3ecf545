/// Objects that share the values of a uniqueness constraint (Core Data's `NSConstraintConflict`), as a
/// save met them: objects of the save, and possibly an object already in the store.
///
/// A merge policy's ``MergePolicy/resolve(constraintConflicts:)`` receives these with
/// ``conflictingObjects`` and ``databaseObject`` set; the copies in `ContextError.constraintConflicts`
/// carry IDs and snapshots only.
public struct ConstraintConflict: Sendable, CustomStringConvertible {
    /// The entity that declares the constraint (objects of its sub-entities share it).
    public var entityName: String
    /// The constrained property names.
    public var constraint: [String]
    /// The values the objects share, by property name.
    public var constraintValues: ObjectSnapshot
    /// The object the store already holds with these values; `nil` when the conflict is among the
    /// save's own objects only.
    public var databaseObjectID: ManagedObjectID?
    /// The stored object's values.
    public var databaseSnapshot: ObjectSnapshot?
    /// The save's objects with these values, in the order they were inserted (IDs as the context had
    /// them: temporary for inserted objects).
    public var conflictingObjectIDs: [ManagedObjectID]
    /// Their values, in the same order.
    public var conflictingSnapshots: [ObjectSnapshot]

    /// The save's objects in conflict, while the save runs the merge policy (on the context's queue);
    /// empty in errors, which cross threads.
    public var conflictingObjects: [ManagedObject] { attached?.objects ?? [] }
    /// The context's object for ``databaseObjectID`` (loaded or a fault), while the save runs the
    /// merge policy; `nil` in errors.
    public var databaseObject: ManagedObject? { attached?.database }

    var attached: ConflictObjects?

    init(entityName: String, constraint: [String], constraintValues: ObjectSnapshot, databaseObjectID: ManagedObjectID?,
         databaseSnapshot: ObjectSnapshot?, conflictingObjectIDs: [ManagedObjectID], conflictingSnapshots: [ObjectSnapshot]) {
        self.entityName = entityName
        self.constraint = constraint
        self.constraintValues = constraintValues
        self.databaseObjectID = databaseObjectID
        self.databaseSnapshot = databaseSnapshot
        self.conflictingObjectIDs = conflictingObjectIDs
        self.conflictingSnapshots = conflictingSnapshots
    }

    /// The conflict without its objects, for an error.
    var detached: ConstraintConflict {
        var copy = self
        copy.attached = nil
        return copy
    }

    public var description: String {
        let values = constraint.map { "\($0) = \(constraintValues[$0].map { SafeDescription.of($0) } ?? "nil")" }.joined(separator: ", ")
        let stored = databaseObjectID.map { " and stored object \($0)" } ?? ""
        return "\(entityName) (\(values)) is shared by \(conflictingObjectIDs.map(\.description).joined(separator: ", "))\(stored)"
    }
}
