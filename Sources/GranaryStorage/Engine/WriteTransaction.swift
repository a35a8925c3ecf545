/// The single writer's view of a store while a `write` block runs: every read sees the transaction's
/// own changes, and nothing is visible to anyone else until the block returns and the commit is logged.
///
/// If the block throws, or the commit cannot be logged, nothing it did takes effect. Each operation is
/// itself all-or-nothing: one that throws (a unique violation, a type mismatch) changes nothing, so a
/// block may catch the error and go on. A transaction must not escape its block.
public final class WriteTransaction {
    var state: EngineState
    private var payload = ByteWriter(capacity: 256)
    private(set) var operationCount = 0
    var changes = ChangeTracker()
    private var isOpen = true

    init(state: EngineState) {
        self.state = state
    }

    /// A snapshot of the transaction's current state, including its uncommitted changes.
    ///
    /// Use it for reads that `WriteTransaction` does not offer directly. Let it go before the next
    /// write, or that write will copy the tree nodes the snapshot still shares.
    public var snapshot: Snapshot { Snapshot(state: state) }

    /// The row with this key as the transaction currently sees it.
    /// - Throws: `StorageError.noSuchTable`, `.corruption`.
    public func row(in table: String, key: Int64) throws -> Row? {
        try state.table(table).table.row(forKey: key)
    }

    /// - Throws: `StorageError.noSuchTable`.
    public func contains(in table: String, key: Int64) throws -> Bool {
        try state.table(table).table.containsRow(key)
    }

    public var metadata: StoreMetadata { state.metadata }

    // MARK: Schema

    /// Creates a table with its indexes.
    /// - Throws: `StorageError.tableExists`, `.noSuchColumn` for an index on a missing column,
    ///   `.invalidArgument` for a duplicate column name.
    @discardableResult
    public func createTable(_ schema: TableSchema) throws -> TableID {
        try checkOpen()
        var seen = Set<String>()
        for c in schema.columns where !seen.insert(c.name).inserted {
            throw StorageError.invalidArgument("table '\(schema.name)' declares column '\(c.name)' twice")
        }
        if schema.name.isEmpty { throw StorageError.invalidArgument("a table needs a non-empty name") }
        let id = TableID(rawValue: state.nextTableID)
        try record(.createTable(id, schema))
        changes.schemaChanged.insert(id)
        return id
    }

    /// Removes a table, its rows and its indexes.
    /// - Throws: `StorageError.noSuchTable`.
    public func dropTable(_ name: String) throws {
        try checkOpen()
        let id = try state.tableID(name)
        try record(.dropTable(id))
        changes.droppedTable(id, name: name)
    }

    /// Gives a table a new name; its ID, rows and indexes stay.
    /// - Throws: `StorageError.noSuchTable`, `.tableExists`.
    public func renameTable(_ name: String, to newName: String) throws {
        try checkOpen()
        let id = try state.tableID(name)
        try record(.renameTable(id, newName))
        changes.droppedTableNames.insert(name)
        changes.schemaChanged.insert(id)
    }

    /// Appends a column; existing rows read it as null.
    /// - Throws: `StorageError.noSuchTable`, `.invalidArgument` for a duplicate name or a non-nullable
    ///   column on a table that has rows.
    public func addColumn(_ column: Column, to table: String) throws {
        try checkOpen()
        let id = try state.tableID(table)
        try record(.addColumn(id, column))
        changes.schemaChanged.insert(id)
    }

    /// Builds an index over the table's existing rows.
    /// - Throws: `StorageError.uniqueViolation` naming two rows that share a value, `.indexExists`,
    ///   `.noSuchColumn`.
    public func createIndex(_ definition: IndexDefinition, on table: String) throws {
        try checkOpen()
        let id = try state.tableID(table)
        try record(.createIndex(id, definition))
        changes.schemaChanged.insert(id)
    }

    /// - Throws: `StorageError.noSuchIndex`, `.noSuchTable`.
    public func dropIndex(named name: String, on table: String) throws {
        try checkOpen()
        let id = try state.tableID(table)
        try record(.dropIndex(id, name))
        changes.schemaChanged.insert(id)
    }

    // MARK: Rows

    /// Inserts a row under a key the caller chose.
    /// - Throws: `StorageError.duplicateKey`, `.uniqueViolation`, `.typeMismatch`, `.nullViolation`,
    ///   `.noSuchTable`.
    public func insert(_ row: Row, into table: String, key: Int64) throws {
        try checkOpen()
        try insert(row, into: state.tableID(table), key: key)
    }

    /// Inserts a row under a key, in the table with this identifier (`Snapshot.tableID(of:)`): a
    /// caller writing many rows names the table once, not once a row.
    /// - Throws: as `insert(_:into:key:)` with the table's name.
    public func insert(_ row: Row, into id: TableID, key: Int64) throws {
        try checkOpen()
        let encoded = RowCodec.encode(row)
        try state.mutate(id) { t in
            try t.validate(row)
            try t.insert(row, encoded: encoded, key: key)
        }
        log(.insert, id, key, encoded)
        changes.inserted(id, key)
    }

    /// Inserts a row under the table's next unused key and returns that key.
    /// - Throws: as `insert(_:into:key:)`.
    @discardableResult
    public func insert(_ row: Row, into table: String) throws -> Int64 {
        let key = try state.table(table).table.nextKey
        try insert(row, into: table, key: key)
        return key
    }

    /// Replaces the row with this key.
    /// - Throws: `StorageError.noSuchRow`, `.uniqueViolation`, `.typeMismatch`, `.nullViolation`.
    public func update(_ row: Row, in table: String, key: Int64) throws {
        try checkOpen()
        try update(row, in: state.tableID(table), key: key)
    }

    /// Replaces the row with this key in the table with this identifier (`Snapshot.tableID(of:)`).
    /// - Throws: as `update(_:in:key:)` with the table's name.
    public func update(_ row: Row, in id: TableID, key: Int64) throws {
        try checkOpen()
        let encoded = RowCodec.encode(row)
        try state.mutate(id) { t in
            try t.validate(row)
            try t.update(row, encoded: encoded, key: key)
        }
        log(.update, id, key, encoded)
        changes.updated(id, key)
    }

    /// Inserts the row, or replaces it if the key exists.
    /// - Throws: as `insert` and `update`.
    public func upsert(_ row: Row, in table: String, key: Int64) throws {
        if try contains(in: table, key: key) { try update(row, in: table, key: key) } else { try insert(row, into: table, key: key) }
    }

    /// Deletes the row with this key.
    /// - Throws: `StorageError.noSuchRow`, `.noSuchTable`.
    public func delete(from table: String, key: Int64) throws {
        try checkOpen()
        try delete(from: state.tableID(table), key: key)
    }

    /// Deletes the row with this key from the table with this identifier (`Snapshot.tableID(of:)`).
    /// - Throws: as `delete(from:key:)` with the table's name.
    public func delete(from id: TableID, key: Int64) throws {
        try checkOpen()
        try state.mutate(id) { try $0.delete(key: key) }
        log(.delete, id, key, nil)
        changes.deleted(id, key)
    }

    /// Reserves `count` consecutive keys of a table for rows inserted later (by this or a later
    /// transaction), and returns the first. Reserved keys are never handed out by `insert(_:into:)`.
    /// - Throws: `StorageError.noSuchTable`, `.invalidArgument` for a count below 1.
    public func reserveKeys(_ count: Int64, in table: String) throws -> Int64 {
        try checkOpen()
        guard count >= 1 else { throw StorageError.invalidArgument("cannot reserve \(count) keys in table '\(table)'") }
        let id = try state.tableID(table)
        let first = try state.table(id).table.nextKey
        try record(.reserveKeys(id, first + count))
        return first
    }

    /// What the transaction has changed so far, per table and key, folded as its commit's
    /// `ChangeSummary` will be (`lsn` is the one the commit will get, if nothing else commits first).
    ///
    /// For a layer that writes its own account of a commit inside that commit (persistent history), so
    /// that no crash can separate the two. Computing it sorts the writes so far: call it once, at the end.
    public var changesSoFar: ChangeSummary {
        changes.summary(lsn: state.lsn + 1) { state.tables[$0]?.table.name }
    }

    // MARK: Metadata

    /// Replaces the store's metadata as part of this transaction. The store UUID cannot change.
    /// - Throws: `StorageError.invalidArgument` if `metadata.storeUUID` differs from the store's.
    public func setMetadata(_ metadata: StoreMetadata) throws {
        try checkOpen()
        if metadata.storeUUID != state.metadata.storeUUID {
            throw StorageError.invalidArgument("a store's UUID cannot change (store \(state.metadata.storeUUID))")
        }
        try record(.setMetadata(metadata))
        changes.metadataChanged = true
    }

    // MARK: Internals

    var isEmpty: Bool { operationCount == 0 }

    private func checkOpen() throws {
        guard isOpen else { throw StorageError.invalidArgument("a write transaction was used after its block returned") }
    }

    /// Applies and logs a schema or metadata operation.
    private func record(_ op: Operation) throws {
        try state.apply(op)
        op.encode(into: &payload)
        operationCount += 1
    }

    /// Logs a row operation without re-encoding it through `Operation`, which would copy the row.
    private func log(_ code: Operation.Code, _ table: TableID, _ key: Int64, _ row: [UInt8]?) {
        payload.write(code.rawValue)
        payload.writeVarint(UInt64(table.rawValue))
        payload.writeSignedVarint(key)
        if let row { payload.writeLengthPrefixed(row) }
        operationCount += 1
    }

    /// Closes the transaction and returns its log payload.
    func finish() -> [UInt8] {
        isOpen = false
        var w = ByteWriter(capacity: payload.count + 12)
        w.write(Operation.payloadFormat)
        w.writeVarint(UInt64(operationCount))
        w.write(contentsOf: payload.bytes)
        payload = ByteWriter(capacity: 0)
        return w.bytes
    }
}
