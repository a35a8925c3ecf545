import Foundation

extension ManagedObjectContext {
    /// One aggregate over the objects a request matches, computed in the store: a total, average,
    /// extreme or count without a managed object made, for a figure on screen (`sum(amount)` of this
    /// month's sales).
    ///
    /// What `fetchDictionaries(_:)` returns for a request whose `propertiesToFetch` is this one
    /// expression, as `type`: numbers convert to `Int16`, `Int32`, `Int64`, `Int`, `Double`, `Float`
    /// and `Decimal` as ``ExpressionDescription/expressionResultType`` converts them. The request's
    /// predicate applies; its grouping, having predicate, sort and window do not. Nil when no value
    /// takes part in an average, minimum or maximum. As for every dictionary fetch, unsaved changes are
    /// not seen.
    ///
    /// ```swift
    /// let total = try context.aggregate(.sum("amount"), for: FetchRequest<Sale>(), as: Double.self)
    /// ```
    ///
    /// - Throws: `ContextError.invalidAggregate` for an aggregate the key path does not allow, or a value
    ///   that is not a `type` (a date asked for as a number); what `fetchDictionaries(_:)` throws.
    public func aggregate<T: ManagedObject, V>(_ expression: ExpressionDescription.Expression, for request: FetchRequest<T>,
                                               as type: V.Type = V.self) throws -> V? {
        var single = request
        let name = "value"
        let resultType = Self.attributeType(for: V.self)
        single.propertiesToFetch = [.expression(ExpressionDescription(name: name, expression: expression, resultType: resultType))]
        single.propertiesToGroupBy = []
        single.havingPredicate = nil
        single.returnsDistinctResults = false
        single.sortDescriptors = []
        single.sortKeys = []
        (single.fetchLimit, single.fetchOffset) = (0, 0)
        if expression.function == nil {
            throw ContextError.invalidAggregate(entity: try entity(for: request).name, name: name, keyPath: expression.keyPath ?? "SELF",
                                                reason: "aggregate(_:for:as:) needs a function (sum, average, min, max or count)")
        }
        guard let value = try fetchDictionaries(single).first?[name] else { return nil }
        if let typed = value as? V { return typed }
        if V.self == Int.self, let wide = value as? Int64, let narrow = Int(exactly: wide) { return narrow as? V }
        throw ContextError.invalidAggregate(entity: try entity(for: request).name, name: name, keyPath: expression.keyPath ?? "SELF",
                                            reason: "its value is a \(Swift.type(of: value)), not a \(V.self)")
    }

    /// The result type that makes an aggregate's value a `V`, or `.undefined` for a type that is no
    /// number (the value keeps its own type then).
    private static func attributeType<V>(for type: V.Type) -> AttributeType {
        switch type {
        case is Int16.Type: return .integer16
        case is Int32.Type: return .integer32
        case is Int64.Type, is Int.Type: return .integer64
        case is Double.Type: return .double
        case is Float.Type: return .float
        case is Decimal.Type: return .decimal
        default: return .undefined
        }
    }

    /// A grouped or aggregate dictionary fetch (see `fetchDictionaries(_:)`), run by the store.
    func fetchAggregates<T: ManagedObject>(_ request: FetchRequest<T>, entity: EntityDescription) throws -> [[String: Any]] {
        guard let model, let coordinator = persistentStoreCoordinator else { throw ContextError.noPersistentStore("the context has no coordinator") }
        // Each store aggregates its own rows; combining several stores' groups is not done, and a
        // wrong total would be worse than this error.
        guard !coordinator.spansSeveralStores(entity) else {
            throw ContextError.invalidRequest(entity: entity.name, reason: "grouped and aggregate fetches read one store, and entity '\(entity.name)' is in several attached stores")
        }
        var (fetch, unlowered) = try storeFetch(request, window: false)
        guard fetch.sort.count == request.sortKeys.count + request.sortDescriptors.count else {
            throw ContextError.invalidRequest(entity: entity.name, reason: "a sort descriptor's key path cannot be named, so it cannot name a key of the results")
        }
        let query = try AggregateQuery(request: request, entity: entity, model: model, sort: fetch.sort)
        // The store orders the groups; the rows it reads need no order.
        fetch.sort = []
        if unlowered != nil {
            // The store cannot run this #Predicate: the saved objects it matches are found first (which
            // registers them), and the store aggregates their rows, read by key.
            var matching = request
            matching.includesPendingChanges = false
            matching.propertiesToFetch = []
            matching.propertiesToGroupBy = []
            matching.havingPredicate = nil
            matching.returnsDistinctResults = false
            matching.sortDescriptors = []
            matching.sortKeys = []
            (matching.fetchLimit, matching.fetchOffset) = (0, 0)
            fetch.predicate = .objects([], try fetchObjects(matching).map(\.objectID))
        }
        return try coordinator.aggregate(fetch, query)
    }
}
