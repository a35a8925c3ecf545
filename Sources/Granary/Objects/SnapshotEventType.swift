/// Why an object's values were replaced wholesale, as `ManagedObject.awake(fromSnapshotEvents:)` is
/// told: Core Data's `NSSnapshotEventType`, with its raw values.
///
/// Granary raises them all. An undo or a redo (`ManagedObjectContext.undo()`, `redo()`, or the context's
/// `undoManager` played back directly) tells each object it changed once, with the one event that fits:
/// an object it took out of the context (or marked deleted) gets `.undoInsertion`, one it brought back
/// gets `.undoDeletion`, one whose values only it put back gets `.undoUpdate`; a redo names what it does
/// the same way (redoing a deletion is `.undoInsertion`).
public struct SnapshotEventType: OptionSet, Sendable, Hashable {
    public let rawValue: UInt

    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// An undo or redo took the object out: an undone insertion (or a redone deletion).
    public static let undoInsertion = SnapshotEventType(rawValue: 1 << 1)
    /// An undo or redo brought the object back: an undone deletion (or a redone insertion), its values
    /// and relationships restored.
    public static let undoDeletion = SnapshotEventType(rawValue: 1 << 2)
    /// An undo or redo put back values of the object, which stayed in the context.
    public static let undoUpdate = SnapshotEventType(rawValue: 1 << 3)
    /// `rollback()` put the object's saved values back.
    public static let rollback = SnapshotEventType(rawValue: 1 << 4)
    /// The object was reloaded with its unsaved changes kept (`refresh(_:mergeChanges: true)`, a merge
    /// of another context's save).
    public static let refresh = SnapshotEventType(rawValue: 1 << 5)
    /// A merge policy resolved a conflict of this object during a save.
    public static let mergePolicy = SnapshotEventType(rawValue: 1 << 6)
}
