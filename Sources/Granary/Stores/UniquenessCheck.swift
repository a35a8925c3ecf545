import Foundation

/// Thrown inside a save's write transaction when rows it writes share the values of a uniqueness
/// constraint with each other or with a stored row, so nothing is written; the context resolves the
/// conflicts with its merge policy and tries again (as for `ConflictsFound`).
struct ConstraintConflictsFound: Error, @unchecked Sendable {
    // @unchecked: the records hold plain values, and the error never leaves the saving thread: it is
    // thrown inside the store's write block and caught by the save that started it.
    struct Found {
        var entityName: String
        var properties: [String]
        /// The shared values, in the order of `properties`, in their Swift form.
        var values: [(any Sendable)?]
        /// The save's objects with these values, by the IDs the context gave them.
        var objectIDs: [ManagedObjectID]
        /// The stored row with these values that the save neither rewrites nor deletes.
        var database: ObjectRecord?
    }
    var conflicts: [Found]
}

/// A table's unique indexes as the model declares them: the uniqueness constraints of its entities.
struct UniqueIndex {
    let name: String
    let entityName: String
    let properties: [String]
    let positions: [Int]

    /// The unique indexes of a table (its entities' uniqueness constraints), in declared order.
    static func of(_ table: TableMapping, model: ManagedObjectModel) -> [UniqueIndex] {
        guard table.schema.indexes.contains(where: \.isUnique) else { return [] }
        var result: [UniqueIndex] = []
        for name in table.entityNames {
            guard let entity = model.entity(named: name) else { continue }
            for planned in StorageMapping.plannedIndexes(of: entity.storage.declaration) where planned.isUnique {
                guard let definition = table.schema.indexes.first(where: { $0.name == planned.name }) else { continue }
                let positions = definition.columns.compactMap { table.schema.columnIndex($0.name) }
                guard positions.count == definition.columns.count else { continue }
                result.append(UniqueIndex(name: planned.name, entityName: name, properties: planned.elements.map(\.propertyName),
                                          positions: positions))
            }
        }
        return result
    }

    /// The row's values in the index, or `nil` when one is null: such rows are exempt, as in SQL (and
    /// rows of other entities of the hierarchy have nulls in a sub-entity's columns).
    func key(of row: Row) -> [Value]? {
        var key: [Value] = []
        key.reserveCapacity(positions.count)
        for p in positions {
            let value = row[p]
            if value.isNull { return nil }
            key.append(value)
        }
        return key
    }
}

/// Finds what a save's rows would break in the store's unique indexes, before anything is written.
struct UniquenessCheck: Sendable {
    struct Written: Sendable {
        /// The context's ID of the object (temporary for an insert).
        var id: ManagedObjectID
        var table: String
        var key: Int64
        var row: Row
        /// The row as stored, for an update.
        var before: Row?
    }

    let store: PersistentStore
    let snapshot: Snapshot
    let model: ManagedObjectModel

    /// Every group of the save's rows and stored rows that share a unique index's values.
    /// - Parameters:
    ///   - written: the rows the save inserts and updates.
    ///   - removed: keys of stored rows the save deletes, by table: they hold no values any more.
    func conflicts(_ written: [Written], removed: [String: Set<Int64>]) throws -> [ConstraintConflictsFound.Found] {
        var byTable: [String: [Int]] = [:]
        for (i, w) in written.enumerated() { byTable[w.table, default: []].append(i) }
        var found: [ConstraintConflictsFound.Found] = []
        for (tableName, members) in byTable.sorted(by: { $0.key < $1.key }) {
            guard let table = store.mapping.table(named: tableName) else { continue }
            let indexes = UniqueIndex.of(table, model: model)
            guard !indexes.isEmpty else { continue }
            // Stored rows the save rewrites hold their new values, which are among the written rows.
            var rewritten = removed[tableName] ?? []
            for i in members where written[i].before != nil { rewritten.insert(written[i].key) }
            for index in indexes {
                // One row keeping the values it had: the index held them once, for it alone.
                let probed = Self.groups(members, of: written, by: index).filter { key, group in
                    !(group.count == 1 && written[group[0]].before.map { index.key(of: $0) == key } == true)
                }
                // The stored rows with each group's values, probed together (one index walk in key order
                // instead of one query per group). A unique index holds at most one row per value.
                let firstStored = try snapshot.firstKeys(in: tableName, index: index.name, equalTo: probed.map(\.key))
                for ((key, group), first) in zip(probed, firstStored) {
                    let stored = first.map { rewritten.contains($0) ? [] : [$0] } ?? []
                    guard group.count + stored.count > 1 else { continue }
                    var database: ObjectRecord?
                    if let first = stored.first, let row = try snapshot.row(in: tableName, key: first) {
                        database = try store.record(from: row, key: first, table: table, snapshot: snapshot)
                    }
                    // Saved objects first, then inserted ones in the order they were made.
                    let ids = group.map { written[$0].id }.sorted { a, b in
                        if a.isTemporaryID != b.isTemporaryID { return !a.isTemporaryID }
                        return a.number < b.number
                    }
                    found.append(.init(entityName: index.entityName, properties: index.properties,
                                       values: try swiftValues(key, index: index), objectIDs: ids, database: database))
                }
            }
        }
        return found
    }

    /// The written rows by their values in `index`, in the order each value first appears; rows with a
    /// null in the index are left out. One hash lookup per row, of the value itself for a one-column
    /// index (the common case: an ID), since hashing an array per row dominated large saves.
    private static func groups(_ members: [Int], of written: [Written], by index: UniqueIndex) -> [(key: [Value], members: [Int])] {
        if index.positions.count == 1 {
            let p = index.positions[0]
            // `Value` is nil-literal expressible: spelled out, so that a null is no key rather than `.null`.
            return bucket(members) { i -> Value? in
                let value = written[i].row[p]
                return value.isNull ? Optional<Value>.none : value
            }.map { ([$0.key], $0.members) }
        }
        return bucket(members) { index.key(of: written[$0].row) }
    }

    /// `members` grouped by `key` (members without one left out), in the order each key first appears.
    private static func bucket<Key: Hashable>(_ members: [Int], key: (Int) -> Key?) -> [(key: Key, members: [Int])] {
        var buckets: [(key: Key, members: [Int])] = []
        var slots: [Key: Int] = [:]
        slots.reserveCapacity(members.count)
        for i in members {
            guard let k = key(i) else { continue }
            if let slot = slots[k] {
                buckets[slot].members.append(i)
            } else {
                slots[k] = buckets.count
                buckets.append((k, [i]))
            }
        }
        return buckets
    }

    private func swiftValues(_ key: [Value], index: UniqueIndex) throws -> [(any Sendable)?] {
        guard let entity = model.entity(named: index.entityName) else { return key.map { _ in nil } }
        return try zip(index.properties, key).map { name, value -> (any Sendable)? in
            switch value {
            case .reference(let ref): return try store.objectID(for: ref, in: snapshot)
            default:
                guard let attribute = entity.propertiesByName[name]?.attribute else { return nil }
                return try? attribute.type.swiftValue(from: value)
            }
        }
    }
}
