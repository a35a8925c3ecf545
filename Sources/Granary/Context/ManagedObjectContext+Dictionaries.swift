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
    /// A `#Predicate` or sort descriptor the store cannot run is applied to objects loaded for the
    /// purpose instead, which registers them: the one case that makes objects.
    ///
    /// - Throws: `ContextError.unknownKey` for a name in `propertiesToFetch` that is not a stored
    ///   property of the entity, `.invalidRequest` for a to-many relationship there (a dictionary holds
    ///   one value a key), and what `fetch(_:)` throws.
    public func fetchDictionaries<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [[String: Any]] {
        assertOnQueue()
        let entity = try entity(for: request)
        let columns = try dictionaryColumns(request, entity: entity)
        var (fetch, unlowered) = try storeFetch(request, window: !request.returnsDistinctResults)
        let sortable = fetch.sort.count == request.sortKeys.count + request.sortDescriptors.count
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

    /// A key of the dictionaries and where its value is: the object's ID, or a position in the entity's
    /// layout (which, for an entity with sub-entities, may differ from one sub-entity to another).
    struct DictionaryColumn {
        let key: String
        let isObjectID: Bool
    }

    private func dictionaryColumns<T>(_ request: FetchRequest<T>, entity: EntityDescription) throws -> [DictionaryColumn] {
        let layout = EntityLayout.of(entity)
        let keys = request.propertiesToFetch.isEmpty
            ? layout.kinds.enumerated().compactMap { i, kind in
                if case .attribute(let a) = kind, !a.isTransient { return layout.names[i] } else { return nil }
            }
            : request.propertiesToFetch
        return try keys.map { key in
            if key == FetchRequest<T>.objectIDKey { return DictionaryColumn(key: key, isObjectID: true) }
            guard let i = layout.indexByName[key] else { throw ContextError.unknownKey(entity: entity.name, key: key) }
            switch layout.kinds[i] {
            case .attribute(let a) where a.isTransient:
                throw ContextError.invalidRequest(entity: entity.name, reason: "'\(key)' in propertiesToFetch is transient, so the store has no value for it")
            case .toMany:
                throw ContextError.invalidRequest(entity: entity.name, reason: "'\(key)' in propertiesToFetch is a to-many relationship, which a dictionary result cannot hold")
            default:
                return DictionaryColumn(key: key, isObjectID: false)
            }
        }
    }

    private static func dictionary(values: [Any?], id: ManagedObjectID, layout: EntityLayout, columns: [DictionaryColumn]) -> [String: Any] {
        var row: [String: Any] = [:]
        row.reserveCapacity(columns.count)
        for column in columns {
            if column.isObjectID {
                row[column.key] = id
            } else if let i = layout.indexByName[column.key], let value = values[i] {
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
