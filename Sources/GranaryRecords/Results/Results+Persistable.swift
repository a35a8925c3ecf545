import Granary

extension Results where T: Persistable {
    /// Results ordered by the ID (`idKeyPath`) ascending, CorePersistence's default order.
    /// - Throws: `KeyPathQueryError` for a key path that is not a stored property, or a store error.
    public convenience init(context: ManagedObjectContext, filterBy predicate: ComparisonPredicate<T>? = nil) throws {
        try self.init(context: context, filterBy: predicate, sortedBy: [.ascending(T.idKeyPath)])
    }
}
