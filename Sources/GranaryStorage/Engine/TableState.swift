/// One secondary index: its definition, where its columns sit in a row, and its entries.
///
/// An entry's key is the order-preserving encoding of the indexed values followed by the row's primary
/// key, so entries are unique even in a non-unique index and carry the row they point at.
struct IndexState: Sendable {
    var definition: IndexDefinition
    var columnPositions: [Int]
    var entries: ByteTree

    /// The encoded values of `row` in this index's columns, without the primary-key suffix.
    func valuePrefix(of row: Row) throws -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(16 * columnPositions.count + 8)
        for (i, position) in columnPositions.enumerated() {
            try IndexKey.append(row[position], descending: definition.columns[i].isDescending, to: &key)
        }
        return key
    }

    func entryKey(of row: Row, key: Int64) throws -> [UInt8] {
        var k = try valuePrefix(of: row)
        k.append(contentsOf: IndexKey.primaryKey(key))
        return k
    }

    /// Rows with a null in any indexed column are exempt from uniqueness, as in SQL.
    func participatesInUniqueness(_ row: Row) -> Bool {
        definition.isUnique && !columnPositions.contains { row[$0].isNull }
    }

    /// The primary key of another row that already has `prefix`, if any.
    func conflictingKey(prefix: [UInt8], excluding key: Int64) -> Int64? {
        var found: Int64?
        entries.scan(from: .init(key: prefix, isInclusive: true), to: ByteTree.prefixSuccessor(prefix).map { .init(key: $0, isInclusive: false) }) { k, _ in
            let other = IndexKey.primaryKey(from: k)
            if other != key {
                found = other
                return false
            }
            return true
        }
        return found
    }
}

/// One table: its schema, its rows keyed by primary key, and its indexes.
struct TableState: Sendable {
    var id: TableID
    var schema: TableSchema
    var rows: ByteTree
    var indexes: [IndexState]
    /// Keys are never reused, even after deletes, so that an object ID saved elsewhere cannot come to
    /// name a different row.
    var nextKey: Int64

    /// A table loaded from a snapshot, whose trees are already built.
    init(id: TableID, schema: TableSchema, rows: ByteTree, indexes: [IndexState], nextKey: Int64) {
        self.id = id
        self.schema = schema
        self.rows = rows
        self.indexes = indexes
        self.nextKey = nextKey
    }

    init(id: TableID, schema: TableSchema) throws {
        self.id = id
        self.schema = TableSchema(name: schema.name, columns: schema.columns, indexes: [])
        self.rows = ByteTree()
        self.indexes = []
        self.nextKey = 1
        for definition in schema.indexes { try addIndex(definition) }
    }

    var name: String { schema.name }

    func row(forKey key: Int64) throws -> Row? {
        try Self.row(forKey: key, in: rows, table: name)
    }

    /// The lookup on the tree alone: a closure that captured the whole table and called `row(forKey:)`
    /// copied the table (schema, indexes and all) for every row it visited.
    static func row(forKey key: Int64, in rows: ByteTree, table: String) throws -> Row? {
        try IndexKey.withPrimaryKey(key) { kb in
            try rows.withValue(forKey: kb) { try RowCodec.decode($0, table: table, key: key) }
        }
    }

    /// The rows with these primary keys, looked up together (see `ByteTree.withValues`): `body` gets
    /// each key's position in `keys` and its row, or `nil` when there is none.
    static func rows(forKeys keys: [Int64], in rows: ByteTree, table: String, _ body: (_ index: Int, _ row: EncodedRow?) throws -> Void) rethrows {
        try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: keys.count) { encoded in
            for (i, key) in keys.enumerated() {
                encoded.initializeElement(at: i, to: IndexKey.withPrimaryKey(key) { $0.loadUnaligned(as: UInt64.self) })
            }
            try rows.withValues(forKeys: UnsafeRawBufferPointer(encoded), width: IndexKey.primaryKeyLength) { i, value in
                try body(i, value.map { EncodedRow(bytes: $0, table: table, key: keys[i]) })
            }
        }
    }

    func containsRow(_ key: Int64) -> Bool {
        IndexKey.withPrimaryKey(key) { rows.contains($0) }
    }

    /// Checks a row against the schema before anything is changed, so a rejected write changes nothing.
    func validate(_ row: Row) throws {
        try Self.validate(row, against: schema)
    }

    static func validate(_ row: Row, against schema: TableSchema) throws {
        let name = schema.name
        if row.values.count > schema.columns.count {
            throw StorageError.invalidArgument(
                "row for table '\(name)' has \(row.values.count) values but the table has \(schema.columns.count) columns")
        }
        for (i, column) in schema.columns.enumerated() {
            let value = row[i]
            guard let type = value.type else {
                if !column.isNullable { throw StorageError.nullViolation(table: name, column: column.name) }
                continue
            }
            if column.type != .any && column.type != type {
                throw StorageError.typeMismatch(table: name, column: column.name, expected: column.type, value: "\(type) \(SafeDescription.of(value))")
            }
        }
    }

    mutating func addIndex(_ definition: IndexDefinition) throws {
        if indexes.contains(where: { $0.definition.name == definition.name }) {
            throw StorageError.indexExists(table: name, index: definition.name)
        }
        var index = try Self.emptyIndex(definition, in: schema)
        // Build from existing rows; a unique violation leaves the table as it was.
        var failure: Error?
        rows.scan { k, v in
            do {
                let key = IndexKey.primaryKey(from: k)
                let row = try RowCodec.decode(v, table: name, key: key)
                let prefix = try index.valuePrefix(of: row)
                if index.participatesInUniqueness(row), let other = index.conflictingKey(prefix: prefix, excluding: key) {
                    throw StorageError.uniqueViolation(
                        table: name, index: definition.name,
                        value: Self.describe(row, index.columnPositions) + " (rows \(other) and \(key))")
                }
                index.entries.insert(key: prefix + IndexKey.primaryKey(key), value: [])
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        indexes.append(index)
        schema.indexes.append(definition)
    }

    /// An index with no entries yet, its definition checked against the table's columns.
    /// - Throws: `StorageError.invalidArgument` for an index that names no columns or a to-many column;
    ///   `.noSuchColumn`.
    static func emptyIndex(_ definition: IndexDefinition, in schema: TableSchema) throws -> IndexState {
        if definition.columns.isEmpty {
            throw StorageError.invalidArgument("index '\(definition.name)' on table '\(schema.name)' names no columns")
        }
        return IndexState(definition: definition, columnPositions: try positions(of: definition, in: schema), entries: ByteTree())
    }

    static func positions(of definition: IndexDefinition, in schema: TableSchema) throws -> [Int] {
        try definition.columns.map { c in
            guard let p = schema.columnIndex(c.name) else { throw StorageError.noSuchColumn(table: schema.name, column: c.name) }
            if schema.columns[p].type == .references {
                throw StorageError.invalidArgument("column '\(schema.name).\(c.name)' holds to-many references and cannot be indexed")
            }
            return p
        }
    }

    /// Recomputes every index from the rows: for snapshots written with another index-key encoding.
    /// - Throws: `StorageError.corruption` if a row cannot be decoded.
    mutating func rebuildIndexes() throws {
        var entries: [[[UInt8]]] = indexes.map { _ in [] }
        var failure: Error?
        rows.scan { k, v in
            do {
                let key = IndexKey.primaryKey(from: k)
                let row = try RowCodec.decode(v, table: name, key: key)
                for (i, index) in indexes.enumerated() { entries[i].append(try Self.entryKey(index, row, key)) }
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        for i in indexes.indices {
            var builder = ByteTree.Builder()
            ByteTree.sortKeys(&entries[i])
            for entry in entries[i] { try builder.append(key: entry, value: []) }
            indexes[i].entries = builder.finish()
        }
    }

    mutating func removeIndex(named indexName: String) throws {
        guard let i = indexes.firstIndex(where: { $0.definition.name == indexName }) else {
            throw StorageError.noSuchIndex(table: name, index: indexName)
        }
        indexes.remove(at: i)
        schema.indexes.removeAll { $0.name == indexName }
    }

    static func describe(_ row: Row, _ positions: [Int]) -> String {
        positions.count == 1 ? SafeDescription.of(row[positions[0]]) : "(" + positions.map { SafeDescription.of(row[$0]) }.joined(separator: ", ") + ")"
    }

    /// One index entry to remove and one to add when a row changes.
    private typealias IndexChange = (index: Int, remove: [UInt8]?, add: [UInt8]?)

    /// The full entry key (values, then primary key) of `row` in `index`, built in one buffer.
    private static func entryKey(_ index: IndexState, _ row: Row, _ key: Int64) throws -> [UInt8] {
        var k: [UInt8] = []
        k.reserveCapacity(24 * index.columnPositions.count + IndexKey.primaryKeyLength)
        for (i, position) in index.columnPositions.enumerated() {
            try IndexKey.append(row[position], descending: index.definition.columns[i].isDescending, to: &k)
        }
        IndexKey.appendPrimaryKey(key, to: &k)
        return k
    }

    /// Index entries to remove and add when a row changes from `old` to `new`; unique checks happen
    /// here, before any mutation.
    private func indexChanges(key: Int64, old: Row?, new: Row?) throws -> [IndexChange] {
        var changes: [IndexChange] = []
        changes.reserveCapacity(indexes.count)
        for (i, index) in indexes.enumerated() {
            let oldKey = try old.map { try Self.entryKey(index, $0, key) }
            let newKey = try new.map { try Self.entryKey(index, $0, key) }
            if oldKey == newKey { continue }
            if let new, let newKey, index.participatesInUniqueness(new),
                let other = index.conflictingKey(prefix: Array(newKey.dropLast(IndexKey.primaryKeyLength)), excluding: key)
            {
                throw StorageError.uniqueViolation(
                    table: name, index: index.definition.name,
                    value: Self.describe(new, index.columnPositions) + " (held by row \(other))")
            }
            changes.append((i, oldKey, newKey))
        }
        return changes
    }

    private mutating func apply(_ changes: [IndexChange]) {
        for change in changes {
            if let r = change.remove { indexes[change.index].entries.remove(key: r) }
            if let a = change.add { indexes[change.index].entries.insert(key: a, value: []) }
        }
    }

    mutating func insert(_ row: Row, encoded: [UInt8], key: Int64) throws {
        if containsRow(key) { throw StorageError.duplicateKey(table: name, key: key) }
        let changes = indexes.isEmpty ? [] : try indexChanges(key: key, old: nil, new: row)
        store(encoded, key: key)
        apply(changes)
        if key >= nextKey { nextKey = key == .max ? key : key + 1 }
    }

    /// The stored row's values in the columns of some index, the others null: all `indexChanges` reads
    /// of a row being replaced or removed.
    private func existingIndexedValues(_ key: Int64) throws -> Row {
        let indexes = self.indexes
        let end = indexes.reduce(0) { max($0, ($1.columnPositions.max() ?? -1) + 1) }
        let row = try IndexKey.withPrimaryKey(key) { kb in
            try rows.withValue(forKey: kb) { bytes in
                try RowCodec.decodeColumns(bytes, end: end, table: name, key: key) { position in
                    indexes.contains { $0.columnPositions.contains(position) }
                }
            }
        }
        guard let row else { throw StorageError.noSuchRow(table: name, key: key) }
        return row
    }

    /// Replaces a row; returns nothing because the caller already holds the old row when it needs it.
    mutating func update(_ row: Row, encoded: [UInt8], key: Int64) throws {
        let changes = try indexes.isEmpty ? [] : indexChanges(key: key, old: existingIndexedValues(key), new: row)
        if indexes.isEmpty && !containsRow(key) { throw StorageError.noSuchRow(table: name, key: key) }
        store(encoded, key: key)
        apply(changes)
    }

    private mutating func store(_ encoded: [UInt8], key: Int64) {
        IndexKey.withPrimaryKey(key) { k in encoded.withUnsafeBytes { _ = rows.insert(key: k, value: $0) } }
    }

    mutating func delete(key: Int64) throws {
        let changes = try indexes.isEmpty ? [] : indexChanges(key: key, old: existingIndexedValues(key), new: nil)
        if indexes.isEmpty && !containsRow(key) { throw StorageError.noSuchRow(table: name, key: key) }
        IndexKey.withPrimaryKey(key) { _ = rows.remove(key: $0) }
        apply(changes)
    }

    /// Adds a column at the end of the row; existing rows read it as null until rewritten.
    mutating func addColumn(_ column: Column) throws {
        if schema.columnIndex(column.name) != nil {
            throw StorageError.invalidArgument("table '\(name)' already has a column '\(column.name)'")
        }
        if !column.isNullable && rows.count > 0 {
            throw StorageError.invalidArgument(
                "cannot add non-nullable column '\(column.name)' to table '\(name)', which has rows; add it nullable and fill it")
        }
        schema.columns.append(column)
    }
}
