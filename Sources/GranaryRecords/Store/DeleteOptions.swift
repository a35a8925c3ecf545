import Granary

/// Which objects `delete(with:)` removes: those matching `predicate`, in the order of
/// `comparisonClauses`, after skipping the first `offset` of them (CorePersistence's `DeleteOptions`).
public struct DeleteOptions: Sendable {
    /// The objects to delete; every object of the entity by default.
    public var predicate: FetchPredicate
    /// The order `offset` counts in.
    public var comparisonClauses: [SortKey]
    /// How many of the ordered matches to keep at the head; 0 deletes them all.
    public var offset: Int

    /// Options deleting what `predicate` matches, in the order of `comparisonClauses`, from `offset` on.
    public init(predicate: FetchPredicate = .all, comparisonClauses: [SortKey] = [], offset: Int = 0) {
        self.predicate = predicate
        self.comparisonClauses = comparisonClauses
        self.offset = offset
    }
}
