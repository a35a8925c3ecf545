import Foundation

extension ManagedObjectContext {
    /// The objects a request matches as dictionaries of the values `propertiesToFetch` names, as Core
    /// Data's `.dictionaryResultType` returns them: read from the store's rows without making objects
    /// (nothing is registered in the context), for lists and exports that need a few columns of many
    /// objects.
    ///
    /// Each dictionary holds only the keys `propertiesToFetch` names (every stored attribute when it is
    /// empty), and among those only the ones whose value is not nil; a to-one relationship's value is
    /// the destination's ``ManagedObjectID``, and the object's own ID is there only when
    /// ``FetchRequest/objectIDKey`` is named. As in Core Data, the answer is the store's: the context's
    /// unsaved changes (and, in a child context, its parents') are not seen, whatever
    /// `includesPendingChanges` says. `returnsDistinctResults` drops repeated dictionaries.
    ///
    /// **Aggregates and groups.** With an aggregate ``ExpressionDescription`` in `propertiesToFetch`
    /// (a sum, average, minimum, maximum or count) or key paths in `propertiesToGroupBy`, the store
    /// computes one dictionary per group of the matching objects (one in all when nothing is grouped),
    /// as Core Data's `NSExpressionDescription` and `propertiesToGroupBy` do: it streams the matching
    /// rows (through an index when one fits the predicate) and accumulates each group's values, then
    /// keeps the groups `havingPredicate` accepts, drops repeated dictionaries for
    /// `returnsDistinctResults`, sorts by the sort keys (which name keys of the results) and applies
    /// offset and limit. Every fetched property must then be grouped by or be an aggregate. Unsaved
    /// changes are not seen here either (Apple's `includesPendingChanges` documentation says so of all
    /// dictionary results): an aggregate is the store's, as of its last save.
    ///
    /// A `#Predicate` or sort descriptor the store cannot run is applied to objects loaded for the
    /// purpose instead, which registers them: the one case that makes objects.
    ///
    /// - Throws: `ContextError.unknownKey` for a name in `propertiesToFetch` or `propertiesToGroupBy`
    ///   that is not a property of the entity, `.invalidRequest` for a to-many relationship among the
    ///   fetched properties (a dictionary holds one value a key) or a `havingPredicate` on a fetch that
    ///   neither groups nor aggregates; for grouped and aggregate fetches, `.invalidAggregate`,
    ///   `.invalidGrouping`, `.ungroupedProperty` and `.unknownResultKey` (see
    ///   ``ContextError``); and what `fetch(_:)` throws.
    public func fetchDictionaries<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [[String: Any]] {
        assertOnQueue()
        applyDeferredLinks()
        let entity = try entity(for: request)
        if AggregateQuery.isAggregate(request) { return try fetchAggregates(request, entity: entity) }
        if request.havingPredicate != nil {
            throw ContextError.invalidRequest(entity: entity.name, reason: "havingPredicate filters groups, and the fetch neither groups (propertiesToGroupBy) nor computes an aggregate")
        }
        let columns = try dictionaryColumns(request, entity: entity)
        var (fetch, unlowered) = try storeFetch(request, window: !request.returnsDistinctResults)
        // Several stores' rows come back one store after the other: sorted and windowed here instead.
        let sortable = fetch.sort.count == request.sortKeys.count + request.sortDescriptors.count
            && persistentStoreCoordinator?.spansSeveralStores(entity) != true
        if request.returnsDistinctResults, unlowered == nil, sortable, let query = try distinctQuery(request, columns, fetch.sort, entity: entity) {
            guard let coordinator = persistentStoreCoordinator else { throw ContextError.noPersistentStore("the context has no coordinator") }
            return try coordinator.aggregate(fetch, query)
        }
        var rows: [[String: Any]] = []
        if unlowered == nil && sortable {
            guard let coordinator = persistentStoreCoordinator else { throw ContextError.noPersistentStore("the context has no coordinator") }
            let pushed = fetch.limit != nil || fetch.offset > 0
            if request.returnsDistinctResults { (fetch.limit, fetch.offset) = (nil, 0) }
            let records = try coordinator.fetch(fetch)
            rows.reserveCapacity(records.count)
            for record in records { rows.append(Self.dictionary(values: record.values, id: record.id, layout: record.layout, columns: columns)) }
            if !request.returnsDistinctResults {
                return pushed ? rows : Self.window(rows, request)
            }
        } else {
            // The store cannot answer alone: the objects it holds, filtered and sorted here.
            var stored = request
            stored.includesPendingChanges = false
            stored.fetchLimit = request.returnsDistinctResults ? 0 : request.fetchLimit
            stored.fetchOffset = request.returnsDistinctResults ? 0 : request.fetchOffset
            for object in try fetchObjects(stored) {
                object.fireFaultIfNeeded()
                rows.append(Self.dictionary(values: object.values, id: object.objectID, layout: object.layout, columns: columns))
            }
            if !request.returnsDistinctResults { return rows }
        }
        var seen = Set<[AnyHashable?]>()
        rows = rows.filter { row in
            seen.insert(columns.map { column in row[column.key].map { ($0 as? AnyHashable) ?? AnyHashable(String(describing: $0)) } }).inserted
        }
        return Self.window(rows, request)
    }

    /// A key of the dictionaries and where its value is: the object's ID, or the property of that name
    /// in the entity's layout (whose position, for an entity with sub-entities, may differ from one
    /// sub-entity to another).
    struct DictionaryColumn {
        let key: String
        let property: String
        let isObjectID: Bool
    }

    /// A distinct fetch of stored properties as groups of their values (see `AggregateQuery`), so that
    /// the store answers it without a record per object; nil when the object's ID is fetched (every
    /// dictionary is distinct then), a key is renamed, or the order names a key the dictionaries lack.
    private func distinctQuery<T>(_ request: FetchRequest<T>, _ columns: [DictionaryColumn], _ sort: [SortKey],
                                  entity: EntityDescription) throws -> AggregateQuery? {
        guard let model, !columns.contains(where: { $0.isObjectID || $0.key != $0.property }) else { return nil }
        let names = columns.map(\.key)
        var order: [SortKey] = []
        for key in sort {
            guard key.keyPath.count == 1, names.contains(key.keyPath[0]) else { return nil }
            order.append(key)
        }
        return try AggregateQuery(distinct: names, entity: entity, model: model, sort: order, offset: request.fetchOffset,
                                  limit: request.fetchLimit > 0 ? request.fetchLimit : nil)
    }

    private func dictionaryColumns<T>(_ request: FetchRequest<T>, entity: EntityDescription) throws -> [DictionaryColumn] {
        let layout = EntityLayout.of(entity)
        let keys = request.propertiesToFetch.isEmpty
            ? layout.kinds.enumerated().compactMap { i, kind -> (key: String, property: String)? in
                if case .attribute(let a) = kind, !a.isTransient { return (layout.names[i], layout.names[i]) } else { return nil }
            }
            : request.propertiesToFetch.map { property -> (key: String, property: String) in
                switch property {
                case .property(let name): return (name, name)
                case .expression(let e): return (e.name, e.expression.keyPath ?? "")
                }
            }
        return try keys.map { key, property in
            if property == FetchRequest<T>.objectIDKey {
                return DictionaryColumn(key: key, property: property, isObjectID: true)
            }
            if let e = Self.expression(named: key, in: request) {
                // Only a plain key path reaches here (an aggregate makes the fetch an aggregate one).
                if property.contains(".") {
                    throw ContextError.invalidRequest(entity: entity.name, reason: "expression '\(key)' reads '\(property)' through a relationship, which only a grouped fetch (propertiesToGroupBy) can")
                }
                if let a = entity.attributesByName[property], e.expressionResultType != .undefined, e.expressionResultType != a.type {
                    throw ContextError.invalidAggregate(entity: entity.name, name: key, keyPath: property,
                                                        reason: "a value is converted to expressionResultType only in a grouped or aggregate fetch; leave it .undefined or \(a.type)")
                }
            }
            guard let i = layout.indexByName[property] else { throw ContextError.unknownKey(entity: entity.name, key: property) }
            switch layout.kinds[i] {
            case .attribute(let a) where a.isTransient:
                throw ContextError.invalidRequest(entity: entity.name, reason: "'\(property)' in propertiesToFetch is transient, so the store has no value for it")
            case .toMany:
                throw ContextError.invalidRequest(entity: entity.name, reason: "'\(property)' in propertiesToFetch is a to-many relationship, which a dictionary result cannot hold")
            default:
                return DictionaryColumn(key: key, property: property, isObjectID: false)
            }
        }
    }

    private static func expression<T>(named name: String, in request: FetchRequest<T>) -> ExpressionDescription? {
        for case .expression(let e) in request.propertiesToFetch where e.name == name { return e }
        return nil
    }

    private static func dictionary(values: [Any?], id: ManagedObjectID, layout: EntityLayout, columns: [DictionaryColumn]) -> [String: Any] {
        var row: [String: Any] = [:]
        row.reserveCapacity(columns.count)
        for column in columns {
            if column.isObjectID {
                row[column.key] = id
            } else if let i = layout.indexByName[column.property], let value = values[i] {
                row[column.key] = value
            }
        }
        return row
    }

    private static func window<T>(_ rows: [[String: Any]], _ request: FetchRequest<T>) -> [[String: Any]] {
        let start = min(request.fetchOffset, rows.count)
        let end = request.fetchLimit > 0 ? min(rows.count, start + request.fetchLimit) : rows.count
        return start == 0 && end == rows.count ? rows : Array(rows[start..<end])
    }
}
