import Foundation

/// A whole new content for a store, built beside the current one and installed in one atomic step by
/// `Engine.rewrite(_:)`.
///
/// Use it for changes too large for a transaction, such as a schema migration that rewrites every row:
/// rows go straight into bulk-built trees instead of the log, and the result reaches the disk as one
/// snapshot whose rename is the switch. A store killed at any moment opens afterwards either as it was
/// or fully rewritten.
///
/// Not thread-safe: fill it from the closure that `rewrite` runs.
public final class StoreRewrite {
    /// The content being replaced, for reading rows while writing the new ones.
    public let source: Snapshot
    /// The metadata the rewritten store will have; starts as the source's.
    public var metadata: StoreMetadata
    private(set) var tables: [TableRewrite] = []
    private var nextTableID: UInt32

    init(source: Snapshot) {
        self.source = source
        self.metadata = source.metadata
        self.nextTableID = source.state.nextTableID
    }

    /// Adds a table to the new content.
    ///
    /// Pass the ID of a source table to keep it, so that references to its rows stay valid without
    /// rewriting; a new ID is assigned otherwise. IDs are never reused for other tables later.
    /// - Parameters:
    ///   - schema: The table's name, columns and indexes in the new content.
    ///   - id: The ID of a source table to keep, or `nil` for a new one.
    ///   - nextKey: The least key the table will hand out; raised past every appended key.
    /// - Throws: `StorageError.tableExists` for a name or ID already added; `.invalidArgument` for an ID
    ///   the source store never assigned, or an index naming unknown columns or a to-many column.
    public func addTable(_ schema: TableSchema, id: TableID? = nil, nextKey: Int64 = 1) throws -> TableRewrite {
        if tables.contains(where: { $0.schema.name == schema.name }) { throw StorageError.tableExists(schema.name) }
        let tableID: TableID
        if let id {
            if id.rawValue >= nextTableID { throw StorageError.invalidArgument("table id \(id) was never assigned by this store") }
            if tables.contains(where: { $0.id == id }) { throw StorageError.tableExists("\(schema.name) (id \(id))") }
            tableID = id
        } else {
            tableID = TableID(rawValue: nextTableID)
            nextTableID += 1
        }
        let table = try TableRewrite(id: tableID, schema: schema, nextKey: nextKey)
        tables.append(table)
        return table
    }

    /// Reserves the ID of a table to be added later in this rewrite (pass it to `addTable`), so rows
    /// written before can reference that table's rows: a migration that makes objects of a new entity.
    public func reserveTableID() -> TableID {
        defer { nextTableID += 1 }
        return TableID(rawValue: nextTableID)
    }

    /// Builds the new state: trees from the appended rows, indexes sorted and checked for uniqueness.
    func makeState() throws -> EngineState {
        var state = EngineState()
        state.metadata = metadata
        state.nextTableID = nextTableID
        for table in tables {
            let built = try table.finish()
            state.tables[built.id] = TableBox(built)
            state.tableIDs[built.name] = built.id
        }
        return state
    }
}

/// One table of a `StoreRewrite`: rows appended in increasing key order.
public final class TableRewrite {
    public let id: TableID
    public let schema: TableSchema
    /// The least key the table will hand out after the rewrite.
    public private(set) var nextKey: Int64
    /// Rows appended so far.
    public private(set) var count = 0
    private var rows: SnapshotCodec.BuilderBox? = SnapshotCodec.BuilderBox()
    private var lastKey: Int64?
    private let indexes: [IndexState]
    /// Per index, its entries (values then primary key), in append order until `finish` sorts them.
    private var entries: [[[UInt8]]]
    /// Per index, the rows with a null in an indexed column: exempt from uniqueness, as in SQL.
    private var exempt: [Set<Int64>]
    private var encoder = ByteWriter()

    init(id: TableID, schema: TableSchema, nextKey: Int64) throws {
        self.id = id
        self.schema = schema
        self.nextKey = nextKey
        indexes = try schema.indexes.map { try TableState.emptyIndex($0, in: schema) }
        entries = indexes.map { _ in [] }
        exempt = indexes.map { _ in [] }
    }

    /// Appends a row under a key greater than every key appended before.
    /// - Throws: `StorageError.invalidArgument` for a key out of order; `.typeMismatch` or
    ///   `.nullViolation` for a row that does not fit the schema.
    public func append(_ row: Row, key: Int64) throws {
        if let lastKey, key <= lastKey {
            throw StorageError.invalidArgument("rows of table '\(schema.name)' must be appended in increasing key order, but \(key) came after \(lastKey)")
        }
        try TableState.validate(row, against: schema)
        encoder.bytes.removeAll(keepingCapacity: true)
        RowCodec.encode(row, into: &encoder)
        try IndexKey.withPrimaryKey(key) { k in
            try encoder.bytes.withUnsafeBytes { v in try rows!.builder!.append(key: k, value: v) }
        }
        for (i, index) in indexes.enumerated() {
            entries[i].append(try index.entryKey(of: row, key: key))
            if index.definition.isUnique && !index.participatesInUniqueness(row) { exempt[i].insert(key) }
        }
        lastKey = key
        nextKey = max(nextKey, key &+ 1)
        count += 1
    }

    /// The finished table; a unique index that two rows share values in fails with every duplicate
    /// named (up to ten).
    func finish() throws -> TableState {
        let tree = rows!.finish()
        rows = nil
        var table = TableState(id: id, schema: schema, rows: tree, indexes: [], nextKey: nextKey)
        for (i, var index) in indexes.enumerated() {
            var sorted = entries[i]
            entries[i] = []
            ByteTree.sortKeys(&sorted)
            if index.definition.isUnique { try checkUnique(sorted, index, exempt: exempt[i], rows: table) }
            var builder = ByteTree.Builder()
            for entry in sorted { try builder.append(key: entry, value: []) }
            index.entries = builder.finish()
            table.indexes.append(index)
        }
        return table
    }

    /// Sorted entries that share their value prefix belong to rows with equal values.
    private func checkUnique(_ sorted: [[UInt8]], _ index: IndexState, exempt: Set<Int64>, rows: TableState) throws {
        let suffix = IndexKey.primaryKeyLength
        func prefix(_ entry: [UInt8]) -> ArraySlice<UInt8> { entry.prefix(entry.count - suffix) }
        var duplicates: [String] = []
        var total = 0
        var i = 0
        while i < sorted.count {
            var j = i + 1
            while j < sorted.count, sorted[j].count == sorted[i].count, prefix(sorted[j]) == prefix(sorted[i]) { j += 1 }
            let keys = sorted[i..<j].map { IndexKey.primaryKey(from: Array($0.suffix(suffix))) }.filter { !exempt.contains($0) }
            if keys.count > 1 {
                total += 1
                if duplicates.count < 10, let row = try rows.row(forKey: keys[0]) {
                    duplicates.append("\(TableState.describe(row, index.columnPositions)) in rows \(keys.map(String.init).joined(separator: ", "))")
                }
            }
            i = j
        }
        if total > 0 {
            let more = total > duplicates.count ? "; and \(total - duplicates.count) more" : ""
            throw StorageError.uniqueViolation(table: schema.name, index: index.definition.name, value: duplicates.joined(separator: "; ") + more)
        }
    }
}
