import Granary

extension FetchRequest {
    /// A request for `Result`'s entity filtered and sorted with key paths, for `context.fetch`,
    /// `FetchedResultsController` or anything else that takes a `FetchRequest`.
    ///
    /// ```swift
    /// let request = try FetchRequest(\User.numberOfOrders > 0 && .beginsWith(\User.name, "A"),
    ///                                sortedBy: [.ascending(\User.birthDate)], in: context)
    /// ```
    /// - Throws: `KeyPathQueryError` naming a key path that is not a stored property of the entity, or
    ///   when the context's model has no entity for `Result`.
    public init(_ predicate: ComparisonPredicate<Result>?, sortedBy clauses: [ComparisonClause<Result>] = [],
                in context: ManagedObjectContext) throws(KeyPathQueryError) {
        let resolver = try KeyPathResolver(for: Result.self, in: context)
        self.init(entityName: resolver.entity.name)
        filter = try predicate?.node(with: resolver)
        sortKeys = try clauses.map { c throws(KeyPathQueryError) in try c.sortKey(with: resolver) }
    }
}
