import Foundation

extension PersistentStore {
    /// The hierarchy a table of this store holds, from the map built at open (the snapshot's name for
    /// it otherwise).
    func tableMapping(for table: TableID, in snapshot: Snapshot) -> TableMapping? {
        tablesByID[table] ?? snapshot.tableName(for: table).flatMap { mapping.table(named: $0) }
    }

    func entityMapping(_ name: String) throws -> EntityMapping {
        guard let m = mapping.entity(named: name) else { throw ContextError.unknownEntity(name) }
        return m
    }

    /// The ID of the row a reference points at, with the row's actual entity (which, in a hierarchy
    /// table, may be a sub-entity of the relationship's destination).
    func objectID(for ref: RowReference, in snapshot: Snapshot) throws -> ManagedObjectID? {
        guard let table = tableMapping(for: ref.table, in: snapshot) else { return nil }
        let tableName = table.name
        if table.entityNames.count == 1 {
            return ManagedObjectID(entityName: table.entityNames[0], store: identifier, key: ref.key)
        }
        guard let row = try snapshot.row(in: tableName, key: ref.key), case .int(let code) = row[StorageMapping.entityColumn],
            let name = table.entityName(forCode: code)
        else { return nil }
        return ManagedObjectID(entityName: name, store: identifier, key: ref.key)
    }

    /// Decodes a row of `table` into the record of the object it stores.
    func record(from row: Row, key: Int64, table: TableMapping, snapshot: Snapshot) throws -> ObjectRecord {
        guard case .int(let code) = row[StorageMapping.entityColumn], let decoders = decoders[table.name],
            code >= 0, code < decoders.count
        else {
            throw ContextError.storage(.corruption(file: "table '\(table.name)'", offset: 0, reason: "row \(key) has no valid entity code"))
        }
        let decoder = decoders[Int(code)]
        let entityName = decoder.entity.name
        let layout = decoder.layout
        var values = layout.initialValues
        for i in layout.names.indices {
            guard let column = decoder.columns[i] else { continue }
            let stored = row[column]
            switch layout.kinds[i] {
            case .attribute(let a):
                do { values[i] = try a.type.swiftValue(from: stored) } catch {
                    throw ContextError.wrongValueType(entity: entityName, key: a.name, value: "\(stored)", reason: "stored value: \(error)")
                }
            case .toOne:
                if case .reference(let ref) = stored { values[i] = try objectID(for: ref, in: snapshot) }
            case .toMany:
                if case .references(let refs) = stored {
                    values[i] = try refs.compactMap { try objectID(for: $0, in: snapshot) }
                } else {
                    values[i] = [ManagedObjectID]()
                }
            }
        }
        var version: Int64 = 0
        if case .int(let v) = row[StorageMapping.versionColumn] { version = v }
        return ObjectRecord(id: ManagedObjectID(entityName: entityName, store: identifier, key: key), values: values, version: version,
                            layout: layout)
    }

    /// Encodes an object's values as a row of its table.
    func row(entity: EntityDescription, values: [Any?], version: Int64, in snapshot: Snapshot,
             resolve: (ManagedObjectID) -> ManagedObjectID) throws -> Row {
        guard let codec = codecs[entity] else { throw ContextError.unknownEntity(entity.name) }
        let layout = codec.layout
        var row = Row([Value](repeating: .null, count: codec.columnCount))
        row[StorageMapping.entityColumn] = .int(codec.entityCode)
        row[StorageMapping.versionColumn] = .int(version)
        func reference(_ id: ManagedObjectID, key: String) throws -> RowReference {
            let id = resolve(id)
            guard let pk = id.primaryKey, id.persistentStoreIdentifier == identifier else {
                throw ContextError.wrongValueType(entity: entity.name, key: key, value: id.description,
                                                  reason: "relationships cannot cross stores; the object is not in store \(identifier)")
            }
            if let table = tableIDs[id.entityName] { return RowReference(table: table, key: pk) }
            let destination = try entityMapping(id.entityName)
            return RowReference(table: try snapshot.tableID(of: destination.tableName), key: pk)
        }
        for i in layout.names.indices {
            guard let column = codec.columns[i] else { continue }
            switch layout.kinds[i] {
            case .attribute(let a):
                do { row[column] = try a.storageValue(for: values[i]) } catch {
                    throw ContextError.wrongValueType(entity: entity.name, key: a.name, value: String(describing: values[i] ?? "nil"),
                                                      reason: "\(error)")
                }
            case .toOne(let r):
                if let id = values[i] as? ManagedObjectID { row[column] = .reference(try reference(id, key: r.name)) }
            case .toMany(let r):
                row[column] = .references(try (values[i] as? [ManagedObjectID] ?? []).map { try reference($0, key: r.name) })
            }
        }
        return row
    }

    /// The current records of objects of this store, from one snapshot; nil for rows that are gone or
    /// IDs of another store.
    func records(for ids: [ManagedObjectID]) throws -> [ObjectRecord?] {
        let snapshot = engine.read()
        return try ids.map { try record(for: $0, in: snapshot) }
    }

    /// The current record of one object, or `nil` when its row is gone.
    func record(for id: ManagedObjectID) throws -> ObjectRecord? {
        try record(for: id, in: engine.read())
    }

    private func record(for id: ManagedObjectID, in snapshot: Snapshot) throws -> ObjectRecord? {
        guard let key = id.primaryKey, id.persistentStoreIdentifier == identifier else { return nil }
        let tableID = try tableIDs[id.entityName] ?? snapshot.tableID(of: entityMapping(id.entityName).tableName)
        guard let table = tableMapping(for: tableID, in: snapshot), let row = try snapshot.row(in: table.name, key: key) else { return nil }
        return try record(from: row, key: key, table: table, snapshot: snapshot)
    }
}

/// An entity's layout with the column of each of its properties, so that encoding and decoding a row
/// look nothing up by name.
struct EntityCodec: Sendable {
    let entity: EntityDescription
    let layout: EntityLayout
    /// The column of each property in layout order; nil for transient ones.
    let columns: [Int?]
    let entityCode: Int64
    let columnCount: Int

    init(entity: EntityDescription, mapping: EntityMapping) {
        self.entity = entity
        layout = EntityLayout.of(entity)
        columns = layout.names.map { mapping.column(forProperty: $0) }
        entityCode = mapping.entityCode
        columnCount = mapping.tableSchema.columns.count
    }
}
