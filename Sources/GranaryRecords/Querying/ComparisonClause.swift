import Granary

/// One level of a key-path sort (CorePersistence's `ComparisonClause`): `.ascending(\User.birthDate)`.
///
/// It becomes Granary's `SortKey` (strings compare by Unicode scalars, as an index orders them; nulls
/// first in ascending order), so the planner can deliver the order from an index.
public struct ComparisonClause<Root: ManagedObject>: @unchecked Sendable {
    // @unchecked: a key path is immutable.
    /// The key path sorted on.
    public let keyPath: PartialKeyPath<Root>
    /// Whether smaller values come first.
    public let isAscending: Bool

    /// Smaller values first.
    public static func ascending<V>(_ keyPath: KeyPath<Root, V>) -> ComparisonClause { ComparisonClause(keyPath: keyPath, isAscending: true) }
    /// Larger values first.
    public static func descending<V>(_ keyPath: KeyPath<Root, V>) -> ComparisonClause { ComparisonClause(keyPath: keyPath, isAscending: false) }

    /// Granary's sort key for this clause over `Root`'s entity in `model`.
    /// - Throws: `KeyPathQueryError.notAStoredProperty` for a key path that is not a stored property.
    public func sortKey(in model: ManagedObjectModel) throws(KeyPathQueryError) -> SortKey {
        try sortKey(with: KeyPathResolver(for: Root.self, in: model))
    }

    func sortKey(with resolver: KeyPathResolver) throws(KeyPathQueryError) -> SortKey {
        SortKey(keyPath: try resolver.path(keyPath), ascending: isAscending)
    }
}
