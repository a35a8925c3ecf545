import Granary

extension Results where T: Persistable {
    /// Results ordered by the ID (`idKeyPath`) ascending, CorePersistence's default order.
    /// - Throws: `KeyPathQueryError` for a key path that is not a stored property, or a store error.
    public convenience init(context: ManagedObjectContext, filterBy predicate: ComparisonPredicate<T>? = nil) throws {
        try self.init(context: context, filterBy: predicate, sortedBy: [.ascending(T.idKeyPath)])
    }

    /// Results in a store manager's main context, ordered by the ID ascending: CorePersistence's
    /// `Results<User>()`, for a list on screen that follows every write of the manager's writer.
    ///
    /// Call it on the main context's queue (`store.mainContext.perform`), where the batches arrive too.
    /// - Parameters:
    ///   - store: The manager; `StoreManager.default` when nil.
    ///   - predicate: Which objects; all when `nil`.
    /// - Throws: `RecordsError.noDefaultStore` when `store` is nil and no default manager is set;
    ///   `KeyPathQueryError` for a key path that is not a stored property, or a store error.
    public convenience init(store: StoreManager? = nil, filterBy predicate: ComparisonPredicate<T>? = nil) throws {
        try self.init(context: StoreManager.resolve(store).mainContext, filterBy: predicate, sortedBy: [.ascending(T.idKeyPath)])
    }
}

extension Results {
    /// Results in a store manager's main context, in the order of `clauses`: see
    /// `init(context:filterBy:sortedBy:)`. Call it on the main context's queue.
    /// - Parameters:
    ///   - store: The manager; `StoreManager.default` when nil.
    ///   - predicate: Which objects; all when `nil`.
    ///   - clauses: The order; it must not be empty.
    /// - Throws: `RecordsError.noDefaultStore` when `store` is nil and no default manager is set;
    ///   `KeyPathQueryError` for a key path that is not a stored property; `ContextError` for an empty
    ///   order, or a store error.
    public convenience init(store: StoreManager? = nil, filterBy predicate: ComparisonPredicate<T>? = nil,
                            sortedBy clauses: [ComparisonClause<T>]) throws {
        try self.init(context: StoreManager.resolve(store).mainContext, filterBy: predicate, sortedBy: clauses)
    }
}
