/// How a save resolves objects that changed in the store since the context read them (optimistic
/// locking conflicts). Core Data's merge policies, by the same names.
public enum MergePolicy: Sendable, Hashable {
    /// The save fails with `ContextError.mergeConflicts` listing every conflict (the default).
    case error
    /// Per property: what the store has now wins where it changed; the context's other changes are kept.
    case mergeByPropertyStoreTrump
    /// Per property: the context's changes win; properties the context did not change take the store's values.
    case mergeByPropertyObjectTrump
    /// The context's objects are written as they are, replacing what the store has.
    case overwrite
    /// The context's changes to conflicting objects are dropped; they take the store's state.
    case rollback
}
