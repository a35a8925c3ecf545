/// A consistent, read-only view of a store as of one commit.
///
/// Taking a snapshot is O(1) and never blocks the writer; the snapshot keeps seeing the same data for
/// as long as it lives, however many commits happen after it. It is a value and `Sendable`, so it can be
/// handed to another thread or task. Hold it only as long as you need it: it keeps old versions of
/// changed tree nodes alive.
public struct Snapshot: Sendable {
    let state: EngineState

    init(state: EngineState) { self.state = state }

    /// The log sequence number of the last commit this snapshot includes.
    public var lsn: UInt64 { state.lsn }
    public var metadata: StoreMetadata { state.metadata }
    /// Table names in creation order.
    public var tableNames: [String] { state.orderedTables.map(\.name) }

    /// - Throws: `StorageError.noSuchTable`.
    public func schema(of table: String) throws -> TableSchema { try state.table(table).table.schema }
    /// - Throws: `StorageError.noSuchTable`.
    public func tableID(of table: String) throws -> TableID { try state.tableID(table) }
    /// The name of the table with this ID, or `nil` if it does not exist (any more).
    public func tableName(for id: TableID) -> String? { state.tables[id]?.table.name }

    /// - Throws: `StorageError.noSuchTable`.
    public func count(in table: String) throws -> Int { try state.table(table).table.rows.count }

    /// The key the next `insert(_:into:)` without a key would use.
    /// - Throws: `StorageError.noSuchTable`.
    public func nextKey(in table: String) throws -> Int64 { try state.table(table).table.nextKey }

    /// The row with this primary key, or `nil`.
    /// - Throws: `StorageError.noSuchTable`; `.corruption` if the stored row cannot be decoded.
    public func row(in table: String, key: Int64) throws -> Row? { try state.table(table).table.row(forKey: key) }

    /// One table's rows, for many lookups by key (faults of a relationship): found by name once, not
    /// for each lookup.
    /// - Throws: `StorageError.noSuchTable`.
    public func keyedRows(of table: String) throws -> KeyedRows {
        let t = try state.table(table).table
        return KeyedRows(rows: t.rows, name: t.name)
    }

    /// A table's rows as of the snapshot, looked up by primary key (see `keyedRows(of:)`).
    public struct KeyedRows: Sendable {
        let rows: ByteTree
        public let name: String

        /// Calls `body` with each key's position in `keys` and its row still encoded (`nil` when there
        /// is none), in the order of `keys`. Faster than a lookup per key when the rows are scattered
        /// over a large table: the lookups' cache misses overlap (`ByteTree.withValues`).
        /// - Throws: what `body` throws.
        public func withRows(forKeys keys: [Int64], _ body: (_ index: Int, _ row: EncodedRow?) throws -> Void) rethrows {
            try TableState.rows(forKeys: keys, in: rows, table: name, body)
        }
    }

    /// - Throws: `StorageError.noSuchTable`.
    public func contains(in table: String, key: Int64) throws -> Bool { try state.table(table).table.containsRow(key) }

    /// Visits rows in key order (or reverse), starting at `start` if given; return `false` to stop.
    /// - Throws: `StorageError.noSuchTable`, `.corruption`, or what `body` throws.
    public func forEachRow(in table: String, from start: Int64? = nil, reverse: Bool = false,
                           _ body: (_ key: Int64, _ row: Row) throws -> Bool) throws {
        try forEachEncodedRow(in: table, from: start, reverse: reverse) { try body($0.key, try $0.decode()) }
    }

    /// `forEachRow` with the rows still encoded: for a caller that turns rows into its own values and
    /// has no use for a `Row` array per row.
    /// - Throws: `StorageError.noSuchTable`, or what `body` throws.
    public func forEachEncodedRow(in table: String, from start: Int64? = nil, reverse: Bool = false,
                                  _ body: (EncodedRow) throws -> Bool) throws {
        let t = try state.table(table).table
        let name = t.name
        let bound = start.map { ByteTree.Bound(key: IndexKey.primaryKey($0), isInclusive: true) }
        try t.rows.scan(from: reverse ? nil : bound, to: reverse ? bound : nil, reverse: reverse) { k, v in
            try body(EncodedRow(bytes: v, table: name, key: IndexKey.primaryKey(from: k)))
        }
    }

    /// All rows of a table in key order. For large tables prefer `forEachRow`, which does not
    /// materialise them all.
    /// - Throws: `StorageError.noSuchTable`, `.corruption`.
    public func rows(in table: String) throws -> [(key: Int64, row: Row)] {
        var result: [(key: Int64, row: Row)] = []
        result.reserveCapacity(try count(in: table))
        try forEachRow(in: table) { result.append(($0, $1)); return true }
        return result
    }

    /// Rows matching an index query, in index order.
    /// - Throws: `StorageError.noSuchTable`, `.noSuchIndex`, `.invalidArgument` for a malformed query.
    public func query(_ q: IndexQuery) throws -> [(key: Int64, row: Row)] {
        var result: [(key: Int64, row: Row)] = []
        try query(q) { row in result.append((row.key, try row.decode())) }
        return result
    }

    /// Calls `body` with the rows matching an index query, in index order, still encoded.
    ///
    /// The index is read first and the rows are then looked up together (`ByteTree.withValues`): an
    /// index scan's rows are scattered over the table, and looked up one by one each would wait for
    /// its own cache misses.
    /// - Throws: as `query(_:)`, or what `body` throws.
    public func query(_ q: IndexQuery, _ body: (EncodedRow) throws -> Void) throws {
        // The table's rows taken out once: a closure that reaches the table (through its box, or even
        // as a captured local) copies the whole table struct for every row.
        let table = try state.table(q.table).table
        let rows = table.rows
        let (tableName, indexName) = (table.name, q.index)
        var keys: [Int64] = []
        keys.reserveCapacity(min(q.limit ?? 16, 1024))
        try scan(q, in: table) { keys.append($0) }
        try TableState.rows(forKeys: keys, in: rows, table: tableName) { i, row in
            guard let row else {
                throw StorageError.corruption(file: "index '\(indexName)'", offset: 0, reason: "entry for missing row \(keys[i]) in table '\(tableName)'")
            }
            try body(row)
        }
    }

    /// Primary keys matching an index query, in index order, without decoding rows.
    /// - Throws: as `query(_:)`.
    public func queryKeys(_ q: IndexQuery) throws -> [Int64] {
        var keys: [Int64] = []
        try scan(q, in: try state.table(q.table).table) { keys.append($0) }
        return keys
    }

    /// For each tuple of `values`, the primary key of the first entry of `index` (in index order) whose
    /// leading columns hold exactly those values, or `nil` when no row does.
    ///
    /// Use it for many equality lookups in one index, such as a batch upsert finding which of its
    /// objects a unique index already holds: the table and index are found once, each probe's key is
    /// encoded once and seeks straight to its first entry, and the probes run in key order, so that
    /// neighbouring probes find their tree path still in cache. Each result is what
    /// `queryKeys(IndexQuery(table:index:equal:)).first` returns.
    /// - Throws: `StorageError.noSuchTable`, `.noSuchIndex`; `.invalidArgument` for a tuple with more
    ///   values than the index has columns, or a value an index cannot hold (to-many references).
    public func firstKeys(in table: String, index name: String, equalTo values: [[Value]]) throws -> [Int64?] {
        let t = try state.table(table).table
        guard let index = t.indexes.first(where: { $0.definition.name == name }) else {
            throw StorageError.noSuchIndex(table: table, index: name)
        }
        let columns = index.definition.columns
        var prefixes: [[UInt8]] = []
        prefixes.reserveCapacity(values.count)
        for tuple in values {
            if tuple.count > columns.count {
                throw StorageError.invalidArgument(
                    "query on index '\(name)' of table '\(table)' constrains \(tuple.count) columns but the index has \(columns.count)")
            }
            var prefix: [UInt8] = []
            prefix.reserveCapacity(24 * tuple.count)
            for (i, value) in tuple.enumerated() { try IndexKey.append(value, descending: columns[i].isDescending, to: &prefix) }
            prefixes.append(prefix)
        }
        var order = Array(prefixes.indices)
        order.sort { prefixes[$0].lexicographicallyPrecedes(prefixes[$1]) }
        var keys = [Int64?](repeating: nil, count: values.count)
        let entries = index.entries
        for i in order {
            let prefix = prefixes[i]
            var found: Int64?
            // The first entry at or after the prefix is the first with it, if any has it.
            entries.scan(from: prefix.isEmpty ? nil : .inclusive(prefix)) { k, _ in
                if k.count >= prefix.count && k.prefix(prefix.count).elementsEqual(prefix) {
                    found = IndexKey.primaryKey(from: k)
                }
                return false
            }
            keys[i] = found
        }
        return keys
    }

    /// The number of index entries a query matches (offset and limit applied).
    /// - Throws: as `query(_:)`.
    public func count(_ q: IndexQuery) throws -> Int {
        var n = 0
        try scan(q, in: try state.table(q.table).table) { _ in n += 1 }
        return n
    }

    private func scan(_ q: IndexQuery, in table: TableState, _ visit: (Int64) throws -> Void) throws {
        guard let index = table.indexes.first(where: { $0.definition.name == q.index }) else {
            throw StorageError.noSuchIndex(table: q.table, index: q.index)
        }
        let offset = q.offset
        let limit = q.limit ?? .max
        if offset < 0 || limit < 0 {
            throw StorageError.invalidArgument("query on index '\(q.index)' has a negative offset or limit")
        }
        if limit == 0 { return }
        let (lower, upper) = try q.bounds(in: index, table: q.table)
        var skipped = 0
        var taken = 0
        try index.entries.scan(from: lower, to: upper, reverse: q.reverse) { k, _ in
            if skipped < offset {
                skipped += 1
                return true
            }
            try visit(IndexKey.primaryKey(from: k))
            taken += 1
            return taken < limit
        }
    }

    /// Bytes of memory the table's rows and its indexes occupy, for capacity planning and the benchmark.
    /// - Throws: `StorageError.noSuchTable`.
    public func memoryFootprint(of table: String) throws -> (rows: Int, indexes: Int) {
        let t = try state.table(table).table
        return (t.rows.memoryFootprint, t.indexes.reduce(0) { $0 + $1.entries.memoryFootprint })
    }
}
