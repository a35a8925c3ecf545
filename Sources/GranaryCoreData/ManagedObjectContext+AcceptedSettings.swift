import Granary

// Context settings Core Data code sets routinely and Granary has no use for. They are accepted so that
// those lines compile unchanged, and do nothing: each property reads as what Granary does instead.

extension ManagedObjectContext {
    /// Accepted and ignored: Granary keeps no undo stack, so this is always nil (`context.undoManager =
    /// nil`, the common line, is what Granary does anyway). Its type is `AnyObject?` because Foundation on
    /// Linux has no `UndoManager`: code that makes one does not compile, rather than losing its undo
    /// silently. Undo a context's unsaved changes with `rollback()`.
    public var undoManager: AnyObject? {
        get { nil }
        // swiftlint:disable:next unused_setter_value
        set {}
    }
}
