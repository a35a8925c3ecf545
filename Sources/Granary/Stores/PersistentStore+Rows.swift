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

    /// The scope of `entity`'s IDs in this store: its codec's, without interning, for the entities the
    /// store holds.
    func idScope(for entity: EntityDescription) -> ManagedObjectID.Scope {
        codecs[entity]?.scope ?? .of(entityName: entity.name, store: identifier)
    }

    /// Decodes a row of `table` into the record of the object it stores.
    func record(from row: Row, key: Int64, table: TableMapping, snapshot: Snapshot) throws -> ObjectRecord {
        var decoder = try RecordDecoder(store: self, table: table, snapshot: snapshot)
        return try decoder.record(from: row, key: key)
    }

    /// Encodes an object's values as a row of its table.
    func row(entity: EntityDescription, values: [Any?], version: Int64, in snapshot: Snapshot,
             resolve: (ManagedObjectID) -> ManagedObjectID) throws -> Row {
        guard let codec = codecs[entity] else { throw ContextError.unknownEntity(entity.name) }
        let layout = codec.layout
        var row = Row([Value](repeating: .null, count: codec.columnCount))
        row[StorageMapping.entityColumn] = .int(codec.entityCode)
        row[StorageMapping.versionColumn] = .int(version)
        // IDs of one scope (entity and store) share a table: the last scope's is kept, as a to-many's
        // members and a run of rows' to-ones mostly name one entity, and finding it hashes a name.
        var lastScope: (scope: ManagedObjectID.Scope, table: TableID)?
        func reference(_ id: ManagedObjectID, key: String) throws -> RowReference {
            let id = resolve(id)
            if let lastScope, lastScope.scope === id.scope { return RowReference(table: lastScope.table, key: id.number) }
            guard let pk = id.primaryKey, id.persistentStoreIdentifier == identifier else {
                throw ContextError.wrongValueType(entity: entity.name, key: key, value: id.description,
                                                  reason: "relationships cannot cross stores; the object is not in store \(identifier)")
            }
            let table: TableID
            if let known = tableIDs[id.entityName] {
                table = known
            } else {
                table = try snapshot.tableID(of: try entityMapping(id.entityName).tableName)
            }
            lastScope = (id.scope, table)
            return RowReference(table: table, key: pk)
        }
        for step in codec.steps {
            let i = step.index
            switch step.kind {
            case .attribute(let type):
                if let fast = type.ownTypeStorageValue(values[i]) {
                    row[step.column] = fast
                    continue
                }
                do { row[step.column] = try type.storageValue(for: values[i]) } catch {
                    // The attribute's own conversion names it in the error; only this rare path needs it.
                    guard case .attribute(let a) = layout.kinds[i] else { throw error }
                    throw ContextError.wrongValueType(entity: entity.name, key: a.name, value: SafeDescription.of(values[i]),
                                                      reason: "\(error.naming(a.qualifiedName))")
                }
            case .toOne:
                if let id = values[i] as? ManagedObjectID { row[step.column] = .reference(try reference(id, key: layout.names[i])) }
            case .toMany:
                row[step.column] = .references(try (values[i] as? [ManagedObjectID] ?? []).map { try reference($0, key: layout.names[i]) })
            }
        }
        return row
    }

    /// The current records of objects of this store, from one snapshot; nil for rows that are gone or
    /// IDs of another store.
    func records(for ids: [ManagedObjectID]) throws -> [ObjectRecord?] {
        let snapshot = engine.read()
        var records = [ObjectRecord?](repeating: nil, count: ids.count)
        // The faults of one relationship are of one entity, mostly: each run of IDs in the same scope
        // finds its table and decoder once, and its rows are looked up together, so that their cache
        // misses overlap.
        var start = 0
        while start < ids.count {
            let scope = ids[start].scope
            var end = start + 1
            while end < ids.count && ids[end].scope === scope { end += 1 }
            defer { start = end }
            let id = ids[start]
            guard id.persistentStoreIdentifier == identifier, !id.isTemporaryID else { continue }
            let tableID = try tableIDs[id.entityName] ?? snapshot.tableID(of: entityMapping(id.entityName).tableName)
            guard let table = tableMapping(for: tableID, in: snapshot) else { continue }
            let rows = try snapshot.keyedRows(of: table.name)
            var decoder = try RecordDecoder(store: self, table: table, snapshot: snapshot)
            let keys = ids[start..<end].map { $0.primaryKey ?? 0 }
            try rows.withRows(forKeys: keys) { i, encoded in
                guard let encoded else { return }
                records[start + i] = try decoder.record(from: encoded)
            }
        }
        return records
    }

    /// The current record of one object, or `nil` when its row is gone.
    func record(for id: ManagedObjectID) throws -> ObjectRecord? {
        try records(for: [id])[0]
    }

    /// The version of an object's row, or `nil` when it is gone or not in this store. Reads the row's
    /// first values only: a row holding a large to-many relationship costs no more than any other.
    func rowVersion(of id: ManagedObjectID) throws -> Int64? {
        guard id.persistentStoreIdentifier == identifier, !id.isTemporaryID, let key = id.primaryKey else { return nil }
        let snapshot = engine.read()
        let tableID = try tableIDs[id.entityName] ?? snapshot.tableID(of: entityMapping(id.entityName).tableName)
        guard let table = tableMapping(for: tableID, in: snapshot) else { return nil }
        var version: Int64?
        try snapshot.keyedRows(of: table.name).withRows(forKeys: [key]) { _, encoded in
            guard let encoded else { return }
            var values = try encoded.values()
            for column in 0...StorageMapping.versionColumn {
                guard let value = try values.next() else { return }
                if column == StorageMapping.versionColumn, case .int(let v) = value { version = v }
            }
        }
        return version
    }
}

/// An entity's layout with the column of each of its properties, so that encoding and decoding a row
/// look nothing up by name. A class: taking a codec for each row decoded copied a struct of six
/// references.
final class EntityCodec: Sendable {
    let entity: EntityDescription
    let layout: EntityLayout
    let entityCode: Int64
    let columnCount: Int
    /// The stored properties in layout order, each with its column and what it holds: matching on the
    /// layout's kinds copied a whole attribute description (name, rules, default) per value decoded.
    let steps: [Step]
    /// The scope of the entity's IDs in this store, so that decoding a row does not intern it.
    let scope: ManagedObjectID.Scope
    /// For each column, the position in `steps` of the property stored there, or -1: decoding a row
    /// value by value finds each one's step without a search.
    let stepByColumn: [Int]
    /// The properties no column stores (transient attributes), which a decoded record gives their
    /// initial values.
    let unstoredIndexes: [Int]

    struct Step: Sendable {
        enum Kind: Sendable {
            case attribute(AttributeType)
            case toOne
            case toMany
        }
        let index: Int
        let column: Int
        let kind: Kind
    }

    init(entity: EntityDescription, mapping: EntityMapping, store: UUID) {
        self.entity = entity
        scope = .of(entityName: entity.name, store: store)
        let layout = EntityLayout.of(entity)
        self.layout = layout
        let columns = layout.names.map { mapping.column(forProperty: $0) }
        entityCode = mapping.entityCode
        columnCount = mapping.tableSchema.columns.count
        steps = layout.kinds.indices.compactMap { i in
            guard let column = columns[i] else { return nil }
            switch layout.kinds[i] {
            case .attribute(let a): return Step(index: i, column: column, kind: .attribute(a.type))
            case .toOne: return Step(index: i, column: column, kind: .toOne)
            case .toMany: return Step(index: i, column: column, kind: .toMany)
            }
        }
        var stepByColumn = [Int](repeating: -1, count: columnCount)
        for (position, step) in steps.enumerated() where step.column < columnCount { stepByColumn[step.column] = position }
        self.stepByColumn = stepByColumn
        unstoredIndexes = columns.indices.filter { columns[$0] == nil }
    }

    /// A record's values before its row is decoded into them: every stored property nil, the others
    /// at their initial values. A new array rather than a copy of the layout's initial values, which
    /// copied every value through the runtime's generic witnesses only for decoding to overwrite them.
    ///
    /// Filled through its uninitialized buffer: `Array(repeating:count:)` copied its `nil` into each
    /// element through the runtime's value witnesses and looked up the array's metadata each time, a
    /// twentieth of an indexed fetch.
    func blankValues() -> [Any?] {
        let count = layout.names.count
        var values = [Any?](unsafeUninitializedCapacity: count) { buffer, initialized in
            var element = buffer.baseAddress!
            for _ in 0..<count {
                element.initialize(to: nil)
                element += 1
            }
            initialized = count
        }
        for i in unstoredIndexes { values[i] = layout.initialValues[i] }
        return values
    }
}

/// Decodes rows of one table into records, for a fetch or a single lookup: the table's codecs are
/// looked up once, not per row, and the table a run of references points at is remembered (a fetch of
/// employees resolves 100,000 department references into the same table).
struct RecordDecoder {
    let store: PersistentStore
    let table: TableMapping
    let snapshot: Snapshot
    private let codecs: [EntityCodec]
    private var referencedTable: TableID?
    /// The ID scope of every row of `referencedTable`, when that table holds a single entity.
    private var referencedScope: ManagedObjectID.Scope?
    /// Value arrays made ahead for the records of a full scan (`prepareBlanks`), taken in order.
    private var blanks: [[Any?]] = []
    private var nextBlank = 0
    private var blanksCodec: EntityCodec?

    /// - Throws: `ContextError.storage` when the store has no codecs for the table.
    init(store: PersistentStore, table: TableMapping, snapshot: Snapshot) throws {
        guard let codecs = store.decoders[table.name] else {
            throw ContextError.storage(.corruption(file: "table '\(table.name)'", offset: 0, reason: "the store does not map this table"))
        }
        self.store = store
        self.table = table
        self.snapshot = snapshot
        self.codecs = codecs
    }

    /// Makes `count` blank value arrays for records of the entity with `entityCode`, before any row is
    /// decoded. A scan that decodes each row straight into its record otherwise allocates each record's
    /// array right after the strings of the row before, wherever freed memory has room: reading the
    /// objects afterwards then missed the cache on most value arrays and took 1.6 times as long. Made
    /// together, the arrays lie one after another, and reading them streams.
    mutating func prepareBlanks(count: Int, entityCode: Int64) {
        guard entityCode >= 0 && entityCode < codecs.count else { return }
        let codec = codecs[Int(entityCode)]
        blanksCodec = codec
        blanks.reserveCapacity(count)
        for _ in 0..<count { blanks.append(codec.blankValues()) }
    }

    /// The next prepared blank when it is of `codec`'s entity, else a new one.
    private mutating func blankValues(for codec: EntityCodec) -> [Any?] {
        guard codec === blanksCodec, nextBlank < blanks.count else { return codec.blankValues() }
        // Swapped out, so that the record's array is uniquely held and decoding into it copies nothing.
        var taken: [Any?] = []
        swap(&taken, &blanks[nextBlank])
        nextBlank += 1
        return taken
    }

    /// Decodes a row of the table into the record of the object it stores.
    mutating func record(from row: Row, key: Int64) throws -> ObjectRecord {
        guard case .int(let code) = row[StorageMapping.entityColumn], code >= 0, code < codecs.count else { throw noEntityCode(key) }
        let codec = codecs[Int(code)]
        var values = blankValues(for: codec)
        for step in codec.steps { try decode(row[step.column], as: step, of: codec, key: key, into: &values) }
        var version: Int64 = 0
        if case .int(let v) = row[StorageMapping.versionColumn] { version = v }
        return ObjectRecord(id: ManagedObjectID(scope: codec.scope, key: key), values: values, version: version, layout: codec.layout)
    }

    /// Decodes a row still encoded, value by value, into the record of the object it stores: no `Row`
    /// is built. The entity code is the first column, so each later value finds its step.
    mutating func record(from encoded: EncodedRow) throws -> ObjectRecord {
        var stored = try encoded.values()
        guard StorageMapping.entityColumn == 0, case .int(let code)? = try stored.next(), code >= 0, code < codecs.count else {
            throw noEntityCode(encoded.key)
        }
        let codec = codecs[Int(code)]
        var values = blankValues(for: codec)
        var version: Int64 = 0
        let stepByColumn = codec.stepByColumn
        while let value = try stored.next() {
            let column = stored.column - 1
            if column == StorageMapping.versionColumn {
                if case .int(let v) = value { version = v }
            } else if column < stepByColumn.count, case let position = stepByColumn[column], position >= 0 {
                try decode(value, as: codec.steps[position], of: codec, key: encoded.key, into: &values)
            }
        }
        // A row written before a column was added reads the missing columns as null, as `Row` does.
        for step in codec.steps where step.column >= stored.count { try decode(.null, as: step, of: codec, key: encoded.key, into: &values) }
        return ObjectRecord(id: ManagedObjectID(scope: codec.scope, key: encoded.key), values: values, version: version, layout: codec.layout)
    }

    private func noEntityCode(_ key: Int64) -> ContextError {
        .storage(.corruption(file: "table '\(table.name)'", offset: 0, reason: "row \(key) has no valid entity code"))
    }

    private mutating func decode(_ stored: Value, as step: EntityCodec.Step, of codec: EntityCodec, key: Int64,
                                 into values: inout [Any?]) throws {
        switch step.kind {
        case .attribute(let type):
            // The common types straight into the record: `swiftValue` returns `any Sendable`, which
            // the runtime boxes again to store as `Any`.
            switch (type, stored) {
            case (.integer64, .int(let i)): values[step.index] = i; return
            case (.string, .string(let s)): values[step.index] = s; return
            case (.date, .date(let d)): values[step.index] = d; return
            case (.double, .double(let d)): values[step.index] = d; return
            case (.boolean, .bool(let b)): values[step.index] = b; return
            default: break
            }
            do { values[step.index] = try type.swiftValue(from: stored) } catch {
                let attribute = codec.layout.names[step.index]
                throw ContextError.unreadableValue(entity: codec.entity.name, attribute: attribute,
                                                   object: ManagedObjectID(scope: codec.scope, key: key),
                                                   reason: error.naming("\(codec.entity.name).\(attribute)").description)
            }
        case .toOne:
            if case .reference(let ref) = stored { values[step.index] = try objectID(for: ref) }
        case .toMany:
            if case .references(let refs) = stored {
                var ids: [ManagedObjectID] = []
                ids.reserveCapacity(refs.count)
                for ref in refs { if let id = try objectID(for: ref) { ids.append(id) } }
                values[step.index] = ids
            } else {
                values[step.index] = [ManagedObjectID]()
            }
        }
    }

    private mutating func objectID(for ref: RowReference) throws -> ManagedObjectID? {
        if ref.table != referencedTable {
            referencedTable = ref.table
            let mapping = store.tableMapping(for: ref.table, in: snapshot)
            referencedScope = mapping.flatMap { $0.entityNames.count == 1 ? store.decoders[$0.name]?.first?.scope : nil }
        }
        if let referencedScope { return ManagedObjectID(scope: referencedScope, key: ref.key) }
        return try store.objectID(for: ref, in: snapshot)
    }
}
