import Foundation
import Granary

// The CRUD reads and deletes with key-path predicates and `ComparisonClause`s, CorePersistence's
// spelling: `User.get(using: \User.numberOfOrders > 3, comparisonClauses: [.ascending(\User.name)])`.
// Each resolves the key paths against the manager's model and calls the `FetchPredicate` / `SortKey` form.

extension Persistable {
    /// The objects matching a key-path predicate, ordered by `comparisonClauses`, in `context` (the
    /// main context by default).
    /// - Throws: `KeyPathQueryError.notAStoredProperty` naming a key path that is not a stored
    ///   property; `RecordsError.noDefaultStore`; a fetch error.
    public static func get(using predicate: ComparisonPredicate<Self>, comparisonClauses: [ComparisonClause<Self>] = [],
                           from store: StoreManager? = nil, context: ManagedObjectContext? = nil) throws -> [Self] {
        let model = try model(store, context)
        return try get(using: FetchPredicate(predicate.node(in: model)), comparisonClauses: sortKeys(comparisonClauses, model),
                       from: store, context: context)
    }

    /// Every object of the entity, ordered by `comparisonClauses`, in `context` (the main context by
    /// default).
    /// - Throws: as `get(using:comparisonClauses:from:context:)`.
    public static func getAll(comparisonClauses: [ComparisonClause<Self>], from store: StoreManager? = nil,
                              context: ManagedObjectContext? = nil) throws -> [Self] {
        try get(using: .all, comparisonClauses: sortKeys(comparisonClauses, model(store, context)), from: store, context: context)
    }

    /// Deletes what a key-path predicate matches, in the order of `comparisonClauses`, from `offset`
    /// on (see `delete(from:with:)`).
    /// - Returns: How many objects were deleted.
    /// - Throws: `KeyPathQueryError.notAStoredProperty`, `RecordsError.noDefaultStore`, a fetch or
    ///   save error (nothing is deleted then).
    @discardableResult
    public static func delete(from store: StoreManager? = nil, where predicate: ComparisonPredicate<Self>,
                              comparisonClauses: [ComparisonClause<Self>] = [], offset: Int = 0) async throws -> Int {
        let model = try StoreManager.resolve(store).stack.managedObjectModel
        let options = DeleteOptions(predicate: FetchPredicate(try predicate.node(in: model)),
                                    comparisonClauses: try sortKeys(comparisonClauses, model), offset: offset)
        return try await delete(from: store, with: options)
    }

    private static func model(_ store: StoreManager?, _ context: ManagedObjectContext?) throws -> ManagedObjectModel {
        if let model = context?.model { return model }
        return try StoreManager.resolve(store).stack.managedObjectModel
    }

    private static func sortKeys(_ clauses: [ComparisonClause<Self>], _ model: ManagedObjectModel) throws -> [SortKey] {
        var keys: [SortKey] = []
        for clause in clauses { keys.append(try clause.sortKey(in: model)) }
        return keys
    }
}
