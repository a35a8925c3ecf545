/// Why an object's values were replaced wholesale, as `ManagedObject.awake(fromSnapshotEvents:)` is
/// told: Core Data's `NSSnapshotEventType`, with its raw values.
///
/// Granary raises `.rollback`, `.refresh` and `.mergePolicy`; it has no undo manager, so the undo
/// events are declared for code ported from Core Data but never raised.
public struct SnapshotEventType: OptionSet, Sendable, Hashable {
    public let rawValue: UInt

    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// An undone insertion (never raised: Granary has no undo manager).
    public static let undoInsertion = SnapshotEventType(rawValue: 1 << 1)
    /// An undone deletion (never raised: Granary has no undo manager).
    public static let undoDeletion = SnapshotEventType(rawValue: 1 << 2)
    /// An undone update (never raised: Granary has no undo manager).
    public static let undoUpdate = SnapshotEventType(rawValue: 1 << 3)
    /// `rollback()` put the object's saved values back.
    public static let rollback = SnapshotEventType(rawValue: 1 << 4)
    /// The object was reloaded with its unsaved changes kept (`refresh(_:mergeChanges: true)`, a merge
    /// of another context's save).
    public static let refresh = SnapshotEventType(rawValue: 1 << 5)
    /// A merge policy resolved a conflict of this object during a save.
    public static let mergePolicy = SnapshotEventType(rawValue: 1 << 6)
}
