/// The whole content of a store at one commit: tables, indexes, metadata.
///
/// It is a value: copying it is O(1) because the trees inside share their nodes until one side writes
/// (copy-on-write). Readers keep a copy as their snapshot while the writer changes its own.
struct EngineState: Sendable {
    /// The log sequence number of the last commit this state includes (0 for an empty store).
    var lsn: UInt64 = 0
    var tables: [TableID: TableState] = [:]
    var tableIDs: [String: TableID] = [:]
    var nextTableID: UInt32 = 1
    var metadata = StoreMetadata()

    func tableID(_ name: String) throws -> TableID {
        guard let id = tableIDs[name] else { throw StorageError.noSuchTable(name) }
        return id
    }

    func table(_ name: String) throws -> TableState {
        try table(tableID(name))
    }

    func table(_ id: TableID) throws -> TableState {
        guard let t = tables[id] else { throw StorageError.noSuchTable("\(id)") }
        return t
    }

    /// Applies a recorded operation. Live transactions call this after validating; replay calls it
    /// directly, and a failure there means the log contradicts itself.
    mutating func apply(_ op: Operation) throws {
        switch op {
        case .createTable(let id, let schema):
            if tableIDs[schema.name] != nil { throw StorageError.tableExists(schema.name) }
            if tables[id] != nil { throw StorageError.invalidArgument("table id \(id) is already in use") }
            let table = try TableState(id: id, schema: schema)
            tables[id] = table
            tableIDs[schema.name] = id
            nextTableID = max(nextTableID, id.rawValue + 1)
        case .dropTable(let id):
            let t = try table(id)
            tables[id] = nil
            tableIDs[t.name] = nil
        case .renameTable(let id, let newName):
            let old = try table(id).name
            if tableIDs[newName] != nil { throw StorageError.tableExists(newName) }
            tables[id]!.schema.name = newName
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
                let row = t.indexes.isEmpty ? Row([]) : try RowCodec.decode(bytes, context: "table '\(t.name)' row \(key)")
                try t.insert(row, encoded: bytes, key: key)
            }
        case .update(let id, let key, let bytes):
            try mutate(id) { t in
                let row = t.indexes.isEmpty ? Row([]) : try RowCodec.decode(bytes, context: "table '\(t.name)' row \(key)")
                try t.update(row, encoded: bytes, key: key)
            }
        case .delete(let id, let key):
            try mutate(id) { try $0.delete(key: key) }
        case .setMetadata(let m):
            metadata = m
        }
    }

    /// Mutates a table in place, keeping its trees uniquely referenced so that copy-on-write copies
    /// only what a snapshot still shares.
    mutating func mutate<R>(_ id: TableID, _ body: (inout TableState) throws -> R) throws -> R {
        guard tables[id] != nil else { throw StorageError.noSuchTable("\(id)") }
        return try body(&tables[id]!)
    }
}
