/// The whole content of a store at one commit: tables, indexes, metadata.
///
/// It is a value: copying it is O(1) because the trees inside share their nodes until one side writes
/// (copy-on-write). Readers keep a copy as their snapshot while the writer changes its own.
struct EngineState: Sendable {
    /// The log sequence number of the last commit this state includes (0 for an empty store).
    var lsn: UInt64 = 0
    /// Tables sit in boxes so that reaching one costs a single retain rather than a copy of all its
    /// fields; `mutate` copies a box first when a snapshot still shares it.
    var tables: [TableID: TableBox] = [:]
    var tableIDs: [String: TableID] = [:]
    var nextTableID: UInt32 = 1
    var metadata = StoreMetadata()

    func tableID(_ name: String) throws -> TableID {
        guard let id = tableIDs[name] else { throw StorageError.noSuchTable(name) }
        return id
    }

    func table(_ name: String) throws -> TableBox {
        guard let id = tableIDs[name], let box = tables[id] else { throw StorageError.noSuchTable(name) }
        return box
    }

    func table(_ id: TableID) throws -> TableBox {
        guard let box = tables[id] else { throw StorageError.noSuchTable("\(id)") }
        return box
    }

    /// All tables in creation order.
    var orderedTables: [TableState] { tables.values.map(\.table).sorted { $0.id < $1.id } }

    /// Applies a recorded operation. Live transactions call this after validating; replay calls it
    /// directly, and a failure there means the log contradicts itself.
    mutating func apply(_ op: Operation) throws {
        switch op {
        case .createTable(let id, let schema):
            if tableIDs[schema.name] != nil { throw StorageError.tableExists(schema.name) }
            if tables[id] != nil { throw StorageError.invalidArgument("table id \(id) is already in use") }
            tables[id] = TableBox(try TableState(id: id, schema: schema))
            tableIDs[schema.name] = id
            nextTableID = max(nextTableID, id.rawValue + 1)
        case .dropTable(let id):
            let name = try table(id).table.name
            tables[id] = nil
            tableIDs[name] = nil
        case .renameTable(let id, let newName):
            let old = try table(id).table.name
            if tableIDs[newName] != nil { throw StorageError.tableExists(newName) }
            try mutate(id) { $0.schema.name = newName }
            tableIDs[old] = nil
            tableIDs[newName] = id
        case .addColumn(let id, let column):
            try mutate(id) { try $0.addColumn(column) }
        case .createIndex(let id, let definition):
            try mutate(id) { try $0.addIndex(definition) }
        case .dropIndex(let id, let name):
            try mutate(id) { try $0.removeIndex(named: name) }
        case .insert(let id, let key, let bytes):
            try mutate(id) { t in
                let row = t.indexes.isEmpty ? Row([]) : try RowCodec.decode(bytes, table: t.name, key: key)
                try t.insert(row, encoded: bytes, key: key)
            }
        case .update(let id, let key, let bytes):
            try mutate(id) { t in
                let row = t.indexes.isEmpty ? Row([]) : try RowCodec.decode(bytes, table: t.name, key: key)
                try t.update(row, encoded: bytes, key: key)
            }
        case .delete(let id, let key):
            try mutate(id) { try $0.delete(key: key) }
        case .setMetadata(let m):
            metadata = m
        case .reserveKeys(let id, let next):
            try mutate(id) { $0.nextKey = max($0.nextKey, next) }
        }
    }

    /// Mutates a table in place, keeping its trees uniquely referenced so that copy-on-write copies
    /// only what a snapshot still shares.
    mutating func mutate<R>(_ id: TableID, _ body: (inout TableState) throws -> R) throws -> R {
        guard tables[id] != nil else { throw StorageError.noSuchTable("\(id)") }
        if !isKnownUniquelyReferenced(&tables[id]!) { tables[id] = TableBox(tables[id]!.table) }
        return try body(&tables[id]!.table)
    }
}

/// A table in the engine state; see `EngineState.tables`.
final class TableBox: @unchecked Sendable {
    // @unchecked: a box is changed only through `EngineState.mutate`, and only while uniquely referenced,
    // so no snapshot can see it change. Unchecked exclusivity for the same reason: the only writer holds
    // the engine's write lock, and without it every read copied the whole table struct out of the box.
    @exclusivity(unchecked) var table: TableState
    init(_ table: TableState) { self.table = table }
}
