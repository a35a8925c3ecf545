import Foundation

// Batch requests (Core Data's NSBatchInsertRequest, NSBatchUpdateRequest, NSBatchDeleteRequest) run
// straight on a store in one write transaction, without contexts or managed objects.
//
// What they check: keys (each must name a stored attribute of the entity), value types (each value must
// convert to its attribute's type, and nil only for optional attributes), and, through the engine,
// uniqueness constraints. What they do not: validation rules (ranges, lengths, patterns), relationship
// cardinality, merge policies, optimistic locking against live contexts. They set attributes only:
// relationships need managed objects, so that both sides stay in step. Any error fails the whole batch
// and writes nothing.
//
// Live contexts do not see a batch's effects until told: pass `BatchResult.changes` (result type
// `.objectIDs`) to `ManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)`. Rows a batch updates
// or deletes get a new row version, so a context that saves stale objects without merging gets merge
// conflicts, as after any other writer's save.

/// What a batch request reports.
public enum BatchResultType: Sendable, Hashable {
    /// Only how many objects it inserted, updated or deleted: cheapest for big batches.
    case count
    /// Also their object IDs and the changes to merge into live contexts.
    case objectIDs
}

/// The outcome of a batch request (Core Data's `NSBatchInsertResult`, `NSBatchUpdateResult`,
/// `NSBatchDeleteResult`).
public struct BatchResult: Sendable, Hashable {
    /// What the request asked to be reported.
    public let resultType: BatchResultType
    /// How many objects the request inserted, updated or deleted (for deletes, those its predicate
    /// matched, without cascades).
    public let count: Int
    /// The IDs of those objects, in store order; empty for `.count`.
    public let objectIDs: [ManagedObjectID]
    /// Everything the batch changed, to merge into live contexts with
    /// `ManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)`: inserted, updated or deleted
    /// objects, and for deletes also the objects deleted by cascade (`deleted`) and the objects whose
    /// relationships lost a deleted object (`updated`). Empty for `.count`.
    public let changes: ContextChanges

    init(_ type: BatchResultType, count: Int, objectIDs: [ManagedObjectID], changes: ContextChanges) {
        self.resultType = type
        self.count = count
        self.objectIDs = type == .objectIDs ? objectIDs : []
        self.changes = type == .objectIDs ? changes : ContextChanges()
    }
}

/// Inserts objects given as dictionaries of attribute values, without managed objects (Core Data's
/// `NSBatchInsertRequest`).
///
/// Use it for imports: one write transaction, no object graph. Missing attributes take their defaults;
/// a required attribute with no value and no default fails the batch.
///
/// **Uniqueness constraints.** An object whose constrained values a stored object already has updates
/// that object instead (the attributes it gives replace the stored ones; the others, and relationships,
/// stay), and a later object of the request with the same values updates the earlier one: importing a
/// feed a second time refreshes it, as Core Data's batch insert does. An object that matches two
/// different objects through two constraints fails the batch with `ContextError.constraintViolation`.
///
/// The objects come as an array (`objects`), or one at a time from a handler that fills a dictionary
/// (`dictionaryHandler`) or a managed object (`managedObjectHandler`) and returns `true` when there are
/// no more (the object of that last call is not inserted), so that a big feed is never held twice.
public struct BatchInsertRequest {
    /// The entity of every inserted object; it must not be abstract.
    public var entityName: String
    /// One dictionary of attribute name to value per object (empty when a handler supplies them).
    public var objects: [[String: Any]]
    /// Fills one object's attribute values per call; returns `true` when there are no more objects.
    public var dictionaryHandler: ((inout [String: Any]) -> Bool)?
    /// Sets one object's attributes per call; returns `true` when there are no more objects. The object
    /// is a new instance of the entity's class in no context: it is never inserted anywhere, only read.
    public var managedObjectHandler: ((ManagedObject) -> Bool)?
    /// What the result reports: a count, or also the written objects' IDs.
    public var resultType: BatchResultType

    /// An insert of `objects` as objects of the named entity.
    public init(entityName: String, objects: [[String: Any]], resultType: BatchResultType = .count) {
        self.entityName = entityName
        self.objects = objects
        self.resultType = resultType
    }

    /// An insert of the objects `dictionaryHandler` fills, one per call, until it returns `true`.
    public init(entityName: String, resultType: BatchResultType = .count, dictionaryHandler: @escaping (inout [String: Any]) -> Bool) {
        self.init(entityName: entityName, objects: [], resultType: resultType)
        self.dictionaryHandler = dictionaryHandler
    }

    /// An insert of the objects `managedObjectHandler` fills, one per call, until it returns `true`.
    public init(entityName: String, resultType: BatchResultType = .count, managedObjectHandler: @escaping (ManagedObject) -> Bool) {
        self.init(entityName: entityName, objects: [], resultType: resultType)
        self.managedObjectHandler = managedObjectHandler
    }

    /// An insert of `objects` as objects of `entity` (Core Data's `init(entity:objects:)`).
    public init(entity: EntityDescription, objects: [[String: Any]], resultType: BatchResultType = .count) {
        self.init(entityName: entity.name, objects: objects, resultType: resultType)
    }

    /// An insert of the objects of `entity` that `dictionaryHandler` fills (Core Data's
    /// `init(entity:dictionaryHandler:)`).
    public init(entity: EntityDescription, resultType: BatchResultType = .count, dictionaryHandler: @escaping (inout [String: Any]) -> Bool) {
        self.init(entityName: entity.name, resultType: resultType, dictionaryHandler: dictionaryHandler)
    }

    /// An insert of the objects of `entity` that `managedObjectHandler` fills (Core Data's
    /// `init(entity:managedObjectHandler:)`).
    public init(entity: EntityDescription, resultType: BatchResultType = .count, managedObjectHandler: @escaping (ManagedObject) -> Bool) {
        self.init(entityName: entity.name, resultType: resultType, managedObjectHandler: managedObjectHandler)
    }
}

/// Sets attributes of every object a predicate matches, without loading them (Core Data's
/// `NSBatchUpdateRequest`).
///
/// Use it for bulk edits (mark all read, reprice a category). Every value is a constant, checked against
/// its attribute's type; sub-entities' objects are included unless `includesSubentities` is `false`.
public struct BatchUpdateRequest {
    var selection: BatchSelection
    /// Attribute name to new value (`nil` or `NSNull()` for optional attributes).
    public var propertiesToUpdate: [String: Any]
    /// What the result reports: a count, or also the updated objects' IDs.
    public var resultType: BatchResultType
    /// Whether objects of sub-entities are updated too (the default).
    public var includesSubentities: Bool {
        get { selection.includesSubentities }
        set { selection.includesSubentities = newValue }
    }

    /// An update of the named entity's objects that match `predicate` (all of them when `nil`).
    public init(entityName: String, predicate: PredicateNode? = nil, propertiesToUpdate: [String: Any], resultType: BatchResultType = .count) {
        selection = BatchSelection(entityName: entityName, filter: predicate)
        self.propertiesToUpdate = propertiesToUpdate
        self.resultType = resultType
    }

    /// An update of the objects of `T`'s entity that match a `#Predicate`, which must be one the store can
    /// run (`PredicateNode.lower` translates it; otherwise executing throws).
    public init<T: ManagedObject>(for type: T.Type = T.self, predicate: Predicate<T>?, propertiesToUpdate: [String: Any],
                                  resultType: BatchResultType = .count) {
        selection = BatchSelection(entityName: nil, objectType: type)
        selection.setPredicate(predicate)
        self.propertiesToUpdate = propertiesToUpdate
        self.resultType = resultType
    }
}

/// Deletes every object a predicate matches, without loading them (Core Data's `NSBatchDeleteRequest`).
///
/// Use it to purge data. Relationships stay consistent and delete rules apply, as for a context's delete:
/// - **nullify** and **noAction**: each deleted object is removed from the inverse relationship of every
///   object it pointed at, so no stored row points at a deleted one (noAction would leave a dangling
///   reference in the store, which the object layer could not load);
/// - **cascade**: the destinations are deleted too, in the same transaction, and their rules apply in turn;
/// - **deny**: if a deleted object's deny relationship holds any object the batch does not delete too,
///   the whole batch fails with `ContextError.deleteDenied`.
public struct BatchDeleteRequest {
    var selection: BatchSelection
    /// The objects to delete, when the request names them rather than a predicate.
    public private(set) var objectIDs: [ManagedObjectID]?
    /// What the result reports: a count, or also the deleted objects' IDs.
    public var resultType: BatchResultType
    /// Whether objects of sub-entities are deleted too (the default).
    public var includesSubentities: Bool {
        get { selection.includesSubentities }
        set { selection.includesSubentities = newValue }
    }

    /// A delete of the named entity's objects that match `predicate` (all of them when `nil`).
    public init(entityName: String, predicate: PredicateNode? = nil, resultType: BatchResultType = .count) {
        selection = BatchSelection(entityName: entityName, filter: predicate)
        self.resultType = resultType
    }

    /// A delete of the given objects, in one store operation (Core Data's `init(objectIDs:)`): the way
    /// to delete objects a context found without loading them into it. They must be saved objects of
    /// one store; IDs of objects already gone are skipped.
    public init(objectIDs: [ManagedObjectID], resultType: BatchResultType = .count) {
        selection = BatchSelection(entityName: objectIDs.first?.entityName ?? "")
        self.objectIDs = objectIDs
        self.resultType = resultType
    }

    /// A delete of the objects a fetch request describes: its entity, `predicate` (which must be one the
    /// store can run), `filter`, `includesSubentities`, and its sort with `fetchLimit` / `fetchOffset`.
    public init<T: ManagedObject>(fetchRequest: FetchRequest<T>, resultType: BatchResultType = .count) {
        selection = BatchSelection(entityName: fetchRequest.entityName, objectType: T.self, filter: fetchRequest.filter,
                                   includesSubentities: fetchRequest.includesSubentities)
        selection.setPredicate(fetchRequest.predicate)
        selection.sortKeys = fetchRequest.sortKeys
        let descriptors = fetchRequest.sortDescriptors
        selection.lowerSort = { entity, model in
            let keys = descriptors.map { SortKey($0) { KeyPathProbe.components(of: $0, entity: entity, model: model) } }
            return keys.contains(where: { $0 == nil }) ? nil : keys.compactMap { $0 }
        }
        selection.limit = fetchRequest.fetchLimit
        selection.offset = fetchRequest.fetchOffset
        self.resultType = resultType
    }
}

/// Which objects a batch update or delete touches, resolved against the model when it runs.
struct BatchSelection {
    var entityName: String?
    var objectType: ManagedObject.Type?
    var filter: PredicateNode?
    /// Lowers the typed predicate for the entity; `nil` when there is one but it has no translation.
    var lowerPredicate: ((EntityDescription, ManagedObjectModel) throws(PredicateParseError) -> PredicateNode?)?
    var includesSubentities = true
    var sortKeys: [SortKey] = []
    /// Lowers sort descriptors; `nil` when one has no translation.
    var lowerSort: ((EntityDescription, ManagedObjectModel) -> [SortKey]?)?
    var limit = 0
    var offset = 0

    init(entityName: String?, objectType: ManagedObject.Type? = nil, filter: PredicateNode? = nil, includesSubentities: Bool = true) {
        self.entityName = entityName
        self.objectType = objectType
        self.filter = filter
        self.includesSubentities = includesSubentities
    }

    mutating func setPredicate<T: ManagedObject>(_ predicate: Predicate<T>?) {
        guard let predicate else { return }
        lowerPredicate = { entity, model throws(PredicateParseError) in
            try PredicateNode.lowering(predicate) { KeyPathProbe.components(of: $0, entity: entity, model: model) }
        }
    }

    /// The entity and the store fetch of the selected objects.
    func storeFetch(in model: ManagedObjectModel) throws -> StoreFetch {
        let entity: EntityDescription
        if let entityName {
            guard let named = model.entity(named: entityName) else { throw ContextError.unknownEntity(entityName) }
            entity = named
        } else {
            guard let objectType, let typed = model.entity(for: objectType) else {
                throw ContextError.unknownEntity("(no entity has class \(objectType.map { "\($0)" } ?? "?"); set entityName)")
            }
            entity = typed
        }
        var terms: [PredicateNode] = []
        if let lowerPredicate {
            guard let node = try lowerPredicate(entity, model) else {
                throw ContextError.invalidRequest(entity: entity.name,
                                                  reason: "the #Predicate has no store translation; batch requests cannot evaluate it on objects")
            }
            terms.append(node)
        }
        if let filter {
            try filter.checkDepth()
            terms.append(filter)
        }
        var sort = sortKeys
        if let lowerSort {
            guard let lowered = lowerSort(entity, model) else {
                throw ContextError.invalidRequest(entity: entity.name, reason: "a sort descriptor has no key path the model names")
            }
            sort += lowered
        }
        let windowed = limit > 0 || offset > 0
        return StoreFetch(entity: entity, includesSubentities: includesSubentities,
                          predicate: terms.isEmpty ? nil : terms.count == 1 ? terms[0] : .and(terms),
                          sort: windowed ? sort : [], limit: limit > 0 ? limit : nil, offset: offset)
    }
}

extension PersistentStoreCoordinator {
    /// Inserts the request's objects in one write transaction; an object whose uniqueness-constraint
    /// values exist already updates the existing object (see `BatchInsertRequest`).
    /// - Throws: `ContextError.unknownEntity`; `.invalidRequest` for an abstract entity;
    ///   `.invalidBatchObject` naming the object's position with `.unknownKey` or `.wrongValueType` (entity,
    ///   key and value) or `.constraintViolation` (nothing is written); `.noPersistentStore`; `.storage`.
    public func execute(_ request: BatchInsertRequest) throws -> BatchResult {
        // Rows change without being listed one by one: what was kept for stale reads goes.
        defer { rowCache.forgetAll() }
        guard let entity = managedObjectModel.entity(named: request.entityName) else { throw ContextError.unknownEntity(request.entityName) }
        if entity.isAbstract {
            throw ContextError.invalidRequest(entity: entity.name, reason: "the entity is abstract; insert objects of a sub-entity")
        }
        // Every object is converted before anything is written.
        let objects = try BatchInsertion.objects(of: request, entity: entity)
        let store = try store(forEntity: entity.name)
        try store.checkAttached()
        let entityMapping = try store.entityMapping(entity.name)
        let table = entityMapping.tableName
        let layout = EntityLayout.of(entity)
        let columns = layout.names.map { entityMapping.column(forProperty: $0) }
        let indexes = store.mapping.table(named: table).map { UniqueIndex.of($0, model: managedObjectModel) } ?? []
        var inserted: [ManagedObjectID] = []
        var updated: [ManagedObjectID] = []
        var written: [ManagedObjectID] = []
        try write(store) { tx in
            // Planned on the transaction's snapshot, which is let go before the writes: a snapshot held
            // across writes makes every write copy the nodes it shares.
            var rows: [BatchInsertion.Entry] = []
            do {
                let snapshot = tx.snapshot
                var plan = try BatchInsertion(table: table, snapshot: snapshot, indexes: indexes, expectedCount: objects.count)
                // Dictionaries' values are already storage values: each goes into a copy of the row
                // every object of the entity starts from.
                var template: Row?
                let attributeColumns = store.codecs[entity]?.steps.compactMap { step -> (index: Int, column: Int)? in
                    if case .attribute = step.kind { return (step.index, step.column) } else { return nil }
                } ?? []
                var objectRows: [Row] = []
                objectRows.reserveCapacity(objects.count)
                for object in objects {
                    if let stored = object.stored {
                        if template == nil { template = try store.row(entity: entity, values: layout.initialValues, version: 1, in: snapshot, resolve: { $0 }) }
                        var row = template!
                        for (index, column) in attributeColumns { row[column] = stored[index] }
                        objectRows.append(row)
                    } else {
                        objectRows.append(try store.row(entity: entity, values: object.values, version: 1, in: snapshot, resolve: { $0 }))
                    }
                }
                if !indexes.isEmpty { try plan.lookUpStored(objectRows) }
                for (position, row) in objectRows.enumerated() {
                    do {
                        try plan.add(row, given: objects[position].given, columns: columns, at: position)
                    } catch let error as ContextError {
                        throw ContextError.invalidBatchObject(index: position, error: error)
                    }
                }
                objectRows = []
                rows = plan.entries
            }
            // Every row is of the request's entity (an update of another entity's row was refused).
            let scope = store.idScope(for: entity)
            inserted.reserveCapacity(rows.count)
            written.reserveCapacity(rows.count)
            for entry in rows {
                let id = ManagedObjectID(scope: scope, key: entry.key)
                if entry.isNew { inserted.append(id) } else { updated.append(id) }
                written.append(id)
            }
            for entry in rows {
                if entry.isNew { try tx.insert(entry.row, into: table, key: entry.key) } else { try tx.update(entry.row, in: table, key: entry.key) }
            }
        }
        return BatchResult(request.resultType, count: written.count, objectIDs: written,
                           changes: ContextChanges(inserted: Set(inserted), updated: Set(updated)))
    }

    /// Sets the request's attributes on every matching object in one write transaction; each updated
    /// row gets a new row version.
    /// - Throws: `ContextError.unknownEntity`; `.invalidRequest` for a `#Predicate` the store cannot run;
    ///   `.unknownKey` and `.wrongValueType` naming entity, key and value (nothing is written);
    ///   `.constraintViolation`; `PredicateParseError` for unknown predicate keys; `.noPersistentStore`; `.storage`.
    public func execute(_ request: BatchUpdateRequest) throws -> BatchResult {
        // Rows change without being listed one by one: what was kept for stale reads goes.
        defer { rowCache.forgetAll() }
        let fetch = try request.selection.storeFetch(in: managedObjectModel)
        let updates = try request.propertiesToUpdate.map { key, value in
            (key: key, value: try Self.batchValue(value, forKey: key, of: fetch.entity))
        }
        let store = try store(forEntity: fetch.entity.name)
        try store.checkAttached()
        let table = try store.entityMapping(fetch.entity.name).tableName
        var ids: [ManagedObjectID] = []
        try record { statistics in
            try write(store) { tx in
                // Read and encode everything first, then write: a snapshot held across writes makes
                // every write copy the nodes it shares.
                var rows: [(key: Int64, row: Row)] = []
                do {
                    let snapshot = tx.snapshot
                    for record in try store.fetch(fetch, statistics: &statistics, in: snapshot) {
                        guard let entity = managedObjectModel.entity(named: record.id.entityName), let key = record.id.primaryKey else { continue }
                        let layout = EntityLayout.of(entity)
                        var values = record.values
                        for update in updates { values[layout.indexByName[update.key]!] = update.value }
                        rows.append((key, try store.row(entity: entity, values: values, version: record.version + 1, in: snapshot, resolve: { $0 })))
                        ids.append(record.id)
                    }
                }
                for (key, row) in rows { try tx.update(row, in: table, key: key) }
            }
        }
        return BatchResult(request.resultType, count: ids.count, objectIDs: ids, changes: ContextChanges(updated: Set(ids)))
    }

    /// Deletes every matching object in one write transaction, applying delete rules as
    /// `BatchDeleteRequest` describes.
    /// - Throws: `ContextError.unknownEntity`; `.invalidRequest` for a `#Predicate` or sort the store cannot
    ///   run; `.deleteDenied` (nothing is deleted); `PredicateParseError` for unknown predicate keys;
    ///   `.noPersistentStore`; `.storage`.
    public func execute(_ request: BatchDeleteRequest) throws -> BatchResult {
        // Rows change without being listed one by one: what was kept for stale reads goes.
        defer { rowCache.forgetAll() }
        if let ids = request.objectIDs { return try deleteObjects(ids, resultType: request.resultType) }
        let fetch = try request.selection.storeFetch(in: managedObjectModel)
        let store = try store(forEntity: fetch.entity.name)
        try store.checkAttached()
        var matched: [ManagedObjectID] = []
        var changes = ContextChanges()
        try record { statistics in
            try write(store) { tx in
                let records = try store.fetch(fetch, statistics: &statistics, in: tx.snapshot)
                (matched, changes) = try applyDeletion(of: records, in: store, tx)
            }
        }
        return BatchResult(request.resultType, count: matched.count, objectIDs: matched, changes: changes)
    }

    /// Deletes the objects a `BatchDeleteRequest(objectIDs:)` names.
    /// - Throws: `ContextError.invalidRequest` for a temporary ID or IDs of several stores; what
    ///   `execute(_:)` throws.
    private func deleteObjects(_ ids: [ManagedObjectID], resultType: BatchResultType) throws -> BatchResult {
        guard let first = ids.first else { return BatchResult(resultType, count: 0, objectIDs: [], changes: ContextChanges()) }
        if let temporary = ids.first(where: \.isTemporaryID) {
            throw ContextError.invalidRequest(entity: temporary.entityName, reason: "\(temporary) is a temporary ID: the object was never saved")
        }
        let store = try store(for: first)
        if let other = ids.first(where: { $0.persistentStoreIdentifier != store.identifier }) {
            throw ContextError.invalidRequest(entity: other.entityName, reason: "\(other) is in another store than \(first); delete each store's objects with a request of its own")
        }
        try store.checkAttached()
        var matched: [ManagedObjectID] = []
        var changes = ContextChanges()
        try write(store) { tx in
            var records: [ObjectRecord] = []
            do {
                let snapshot = tx.snapshot
                var seen = Set<ManagedObjectID>()
                for id in ids where seen.insert(id).inserted {
                    guard let key = id.primaryKey, let table = store.mapping.table(named: try store.entityMapping(id.entityName).tableName),
                        let row = try snapshot.row(in: table.name, key: key) else { continue }
                    records.append(try store.record(from: row, key: key, table: table, snapshot: snapshot))
                }
            }
            (matched, changes) = try applyDeletion(of: records, in: store, tx)
        }
        return BatchResult(resultType, count: matched.count, objectIDs: matched, changes: changes)
    }

    /// Deletes `records` and what their cascade rules take, and unlinks them from the survivors, in `tx`.
    private func applyDeletion(of records: [ObjectRecord], in store: PersistentStore,
                               _ tx: WriteTransaction) throws -> (matched: [ManagedObjectID], changes: ContextChanges) {
        var rowUpdates: [(table: String, key: Int64, row: Row)] = []
        var rowDeletes: [(table: String, key: Int64)] = []
        let matched: [ManagedObjectID]
        let changes: ContextChanges
        // Read and encode everything first, then write: a snapshot held across writes makes every write
        // copy the nodes it shares.
        do {
            let snapshot = tx.snapshot
            let plan = try BatchDeletion(store: store, model: managedObjectModel, snapshot: snapshot, matched: records)
            matched = plan.matched
            changes = ContextChanges(updated: Set(plan.unlinked.keys), deleted: Set(plan.doomed.keys))
            for (id, record) in plan.unlinked {
                guard let entity = managedObjectModel.entity(named: id.entityName), let key = id.primaryKey else { continue }
                let row = try store.row(entity: entity, values: record.values, version: record.version + 1, in: snapshot, resolve: { $0 })
                rowUpdates.append((try store.entityMapping(id.entityName).tableName, key, row))
            }
            for id in plan.order {
                guard let key = id.primaryKey else { continue }
                rowDeletes.append((try store.entityMapping(id.entityName).tableName, key))
            }
        }
        for update in rowUpdates { try tx.update(update.row, in: update.table, key: update.key) }
        for delete in rowDeletes { try tx.delete(from: delete.table, key: delete.key) }
        return (matched, changes)
    }

    /// Runs a write transaction on a store, with engine errors in the context layer's terms, and records
    /// what it changed in the store's persistent history when the store tracks it.
    private func write<R>(_ store: PersistentStore, _ body: (WriteTransaction) throws -> R) throws -> R {
        do {
            return try store.engine.write { tx in
                let history = HistoryRecorder.start(store, in: tx)
                let result = try body(tx)
                try history?.record(in: tx)
                return result
            }
        } catch let error as StorageError {
            throw Self.translate(error, store: store)
        }
    }

    /// A batch value in its attribute's canonical Swift form.
    /// - Throws: `ContextError.unknownKey`, or `.wrongValueType` for a relationship or transient key, a
    ///   value of the wrong type, or nil for a required attribute.
    static func batchValue(_ value: Any, forKey key: String, of entity: EntityDescription) throws -> Any? {
        guard let property = entity.propertiesByName[key] else { throw ContextError.unknownKey(entity: entity.name, key: key) }
        guard let attribute = property.attribute else {
            throw ContextError.wrongValueType(entity: entity.name, key: key, value: SafeDescription.of(value),
                                              reason: "batch requests set attributes only; set relationships on managed objects")
        }
        if attribute.isTransient {
            throw ContextError.wrongValueType(entity: entity.name, key: key, value: SafeDescription.of(value),
                                              reason: "the attribute is transient, so it is not stored")
        }
        // A value already of the attribute's own Swift type (most of an import) needs no round trip.
        if let fast = attribute.type.canonicalFastPath(value) { return fast }
        do {
            let stored = try attribute.storageValue(for: value is NSNull ? nil : value)
            if stored.isNull && !attribute.isOptional {
                throw ContextError.wrongValueType(entity: entity.name, key: key, value: "nil", reason: "the attribute is not optional")
            }
            return try attribute.type.swiftValue(from: stored)
        } catch let error as ValueConversionError {
            throw ContextError.wrongValueType(entity: entity.name, key: key, value: SafeDescription.of(value), reason: error.description)
        }
    }
}

/// What a batch delete does, worked out on a snapshot before anything is written: the objects it deletes
/// (the matched ones and their cascades) and the surviving objects whose relationships lose them.
private struct BatchDeletion {
    let matched: [ManagedObjectID]
    /// Every deleted object's record.
    private(set) var doomed: [ManagedObjectID: ObjectRecord] = [:]
    /// Deleted objects in the order they were reached.
    private(set) var order: [ManagedObjectID] = []
    /// Surviving objects with the deleted objects taken out of their relationships.
    private(set) var unlinked: [ManagedObjectID: ObjectRecord] = [:]

    /// - Throws: `ContextError.deleteDenied` for a deny rule; store errors.
    init(store: PersistentStore, model: ManagedObjectModel, snapshot: Snapshot, matched records: [ObjectRecord]) throws {
        matched = records.map(\.id)
        func load(_ id: ManagedObjectID) throws -> ObjectRecord? {
            guard let key = id.primaryKey else { return nil }
            let tableName = try store.entityMapping(id.entityName).tableName
            guard let table = store.mapping.table(named: tableName), let row = try snapshot.row(in: tableName, key: key) else { return nil }
            return try store.record(from: row, key: key, table: table, snapshot: snapshot)
        }
        func destinations(_ value: Any?) -> [ManagedObjectID] {
            (value as? ManagedObjectID).map { [$0] } ?? value as? [ManagedObjectID] ?? []
        }
        func relationships(of record: ObjectRecord) -> [(index: Int, relationship: RelationshipDescription)] {
            guard let entity = model.entity(named: record.id.entityName) else { return [] }
            return EntityLayout.of(entity).kinds.enumerated().compactMap { i, kind in
                switch kind {
                case .attribute: return nil
                case .toOne(let r), .toMany(let r): return (i, r)
                }
            }
        }

        // The matched objects and, through cascade rules, everything they take with them.
        var pending = Array(records.reversed())
        while let record = pending.popLast() {
            guard doomed[record.id] == nil else { continue }
            doomed[record.id] = record
            order.append(record.id)
            for (i, relationship) in relationships(of: record) where relationship.deleteRule == .cascade {
                for id in destinations(record.values[i]).reversed() where doomed[id] == nil {
                    if let destination = try load(id) { pending.append(destination) }
                }
            }
        }
        for id in order {
            let record = doomed[id]!
            for (i, relationship) in relationships(of: record) {
                let survivors = destinations(record.values[i]).filter { doomed[$0] == nil }
                if relationship.deleteRule == .deny && !survivors.isEmpty {
                    throw ContextError.deleteDenied(entity: id.entityName, relationship: relationship.name, object: id.description,
                                                    count: survivors.count)
                }
                // Nullify (and noAction, and cascade destinations that were already gone): the survivors
                // forget the deleted object.
                for survivor in survivors {
                    guard var target = try unlinked[survivor] ?? load(survivor), let entity = model.entity(named: survivor.entityName) else { continue }
                    let layout = EntityLayout.of(entity)
                    guard let j = layout.indexByName[relationship.graphInverseName] else { continue }
                    if target.values[j] as? ManagedObjectID == id {
                        target.values[j] = nil
                    } else if let ids = target.values[j] as? [ManagedObjectID] {
                        target.values[j] = ids.filter { $0 != id }
                    }
                    unlinked[survivor] = target
                }
            }
        }
    }
}
