import Granary

// Core Data's names for what a merge policy is handed, and the version numbers Core Data's
// `NSMergeConflict` reports as `Int`s.

/// Core Data's `NSMergeConflict`: Granary's `MergeConflict`. Its `sourceObject` is optional (nil in a
/// save's error, which crosses threads); inside a merge policy's `resolve` it is always set.
public typealias NSMergeConflict = MergeConflict
/// Core Data's `NSConstraintConflict`: Granary's `ConstraintConflict`.
public typealias NSConstraintConflict = ConstraintConflict
/// Core Data's `NSSnapshotEventType`: Granary's `SnapshotEventType`, with the same option names.
public typealias NSSnapshotEventType = SnapshotEventType

extension MergeConflict {
    /// The row version the context read: Core Data's `oldVersionNumber`.
    public var oldVersionNumber: Int { Int(expectedVersion) }
    /// The row version the store holds now, or 0 when the object was deleted there: Core Data's
    /// `newVersionNumber`.
    public var newVersionNumber: Int { storeVersion.map { Int($0) } ?? 0 }
}
