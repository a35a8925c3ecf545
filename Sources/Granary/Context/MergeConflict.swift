/// An object's property values by name, in a form that can cross threads: attributes in their Swift
/// form, to-one relationships as a `ManagedObjectID`, to-many ones as `[ManagedObjectID]`. Nil values
/// and transient attributes are left out. Conflicts carry them so that a merge policy, or whoever
/// catches the save's error, can see each side's values.
public typealias ObjectSnapshot = [String: any Sendable]

/// An object changed both in a context and in the store since the context read it (Core Data's
/// `NSMergeConflict`), as a save met it.
///
/// A merge policy's ``MergePolicy/resolve(optimisticLockingConflicts:)`` receives these with
/// ``sourceObject`` set; the copies in `ContextError.mergeConflicts` carry IDs and snapshots only.
public struct MergeConflict: Sendable, CustomStringConvertible {
    public var objectID: ManagedObjectID
    /// The row version the context read (Core Data's `oldVersionNumber`).
    public var expectedVersion: Int64
    /// The row version the store holds now (`newVersionNumber`); `nil`: the object was deleted there.
    public var storeVersion: Int64?
    /// The object's values in the context, with its unsaved changes.
    public var objectSnapshot: ObjectSnapshot?
    /// The values the context last read from the store.
    public var cachedSnapshot: ObjectSnapshot?
    /// The values the store holds now; `nil` when the object was deleted there.
    public var persistedSnapshot: ObjectSnapshot?
    /// The context's object, while its save runs the merge policy (on the context's queue); `nil` in
    /// errors, which cross threads.
    public var sourceObject: ManagedObject? { attached?.objects.first }

    var attached: ConflictObjects?
    /// The store's state of the object, for the built-in resolution.
    var storeRecord: ObjectRecord? { attached?.record }

    init(objectID: ManagedObjectID, expectedVersion: Int64, storeVersion: Int64?) {
        self.objectID = objectID
        self.expectedVersion = expectedVersion
        self.storeVersion = storeVersion
    }

    /// The conflict without its objects, for an error.
    var detached: MergeConflict {
        var copy = self
        copy.attached = nil
        return copy
    }

    public var description: String {
        storeVersion.map { "\(objectID) is at version \($0) in the store but \(expectedVersion) in the context" }
            ?? "\(objectID) was deleted in the store"
    }
}

/// The objects a conflict names, attached while the saving context runs its merge policy.
final class ConflictObjects: @unchecked Sendable {
    // @unchecked: made, read and dropped on the saving context's queue during its save; conflicts are
    // `detached` before they go into an error, the only way they leave that queue.
    let objects: [ManagedObject]
    let database: ManagedObject?
    let record: ObjectRecord?

    init(objects: [ManagedObject], database: ManagedObject? = nil, record: ObjectRecord?) {
        self.objects = objects
        self.database = database
        self.record = record
    }
}

extension ManagedObject {
    /// The object's values (or `values`, in its layout) as a snapshot.
    func snapshot(of values: [Any?]? = nil) -> ObjectSnapshot {
        let values = values ?? self.values
        return Self.snapshot(of: values, layout: layout)
    }

    static func snapshot(of values: [Any?], layout: EntityLayout) -> ObjectSnapshot {
        var result: ObjectSnapshot = [:]
        for (i, kind) in layout.kinds.enumerated() where i < values.count {
            switch kind {
            case .attribute(let a):
                guard !a.isTransient, let value = values[i], let stored = try? a.type.storageValue(for: value),
                    let swift = try? a.type.swiftValue(from: stored)
                else { continue }
                result[layout.names[i]] = swift
            case .toOne:
                if let id = values[i] as? ManagedObjectID { result[layout.names[i]] = id }
            case .toMany:
                if let ids = values[i] as? [ManagedObjectID] { result[layout.names[i]] = ids }
            }
        }
        return result
    }
}
