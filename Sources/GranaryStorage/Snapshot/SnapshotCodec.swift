import Foundation

/// Turns an engine state into snapshot records and back.
///
/// Records: one `store` record (metadata, next table id), then per table a `table` record (id, next
/// key, schema), its rows in key order in `rows` batches, and each index's entries in key order in
/// `index` batches. Indexes are persisted rather than rebuilt, so loading is a linear bulk build with no
/// sorting; the cost is snapshot size, which the benchmark reports. Batches are kept near 64 KiB so that
/// records stay well inside one compressed block.
enum SnapshotCodec {
    enum RecordType: UInt8 { case store = 1, table = 2, rows = 3, index = 4 }
    /// The version of `IndexKey`'s byte encoding. Persisted index entries are only loaded when the
    /// snapshot says it wrote them with this version; otherwise they are rebuilt from the rows (indexes
    /// are derived data), so a change of encoding can never be misread as index contents.
    static let indexKeyEncoding: UInt64 = 1
    static let batchBytes = 64 << 10

    static func write(_ state: EngineState, to writer: SnapshotWriter) throws {
        var w = ByteWriter()
        w.write(RecordType.store.rawValue)
        w.writeVarint(UInt64(state.nextTableID))
        w.writeLengthPrefixed(Operation.json(state.metadata))
        w.writeVarint(indexKeyEncoding)
        try writer.append(record: w.bytes)

        for table in state.orderedTables {
            w = ByteWriter()
            w.write(RecordType.table.rawValue)
            w.writeVarint(UInt64(table.id.rawValue))
            w.writeSignedVarint(table.nextKey)
            w.writeLengthPrefixed(Operation.json(table.schema))
            try writer.append(record: w.bytes)

            try writeBatches(type: .rows, table: table.id, ordinal: nil, tree: table.rows, to: writer) { k, v, w in
                w.writeSignedVarint(IndexKey.primaryKey(from: k))
                w.writeLengthPrefixed(v)
            }
            for (ordinal, index) in table.indexes.enumerated() {
                try writeBatches(type: .index, table: table.id, ordinal: ordinal, tree: index.entries, to: writer) { k, _, w in
                    w.writeLengthPrefixed(k)
                }
            }
        }
    }

    private static func writeBatches(
        type: RecordType, table: TableID, ordinal: Int?, tree: ByteTree, to writer: SnapshotWriter,
        entry: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, inout ByteWriter) -> Void
    ) throws {
        var body = ByteWriter(capacity: batchBytes + 1024)
        var count = 0
        func flush() throws {
            guard count > 0 else { return }
            var w = ByteWriter(capacity: body.count + 16)
            w.write(type.rawValue)
            w.writeVarint(UInt64(table.rawValue))
            if let ordinal { w.writeVarint(UInt64(ordinal)) }
            w.writeVarint(UInt64(count))
            w.write(contentsOf: body.bytes)
            try writer.append(record: w.bytes)
            body = ByteWriter(capacity: batchBytes + 1024)
            count = 0
        }
        var failure: Error?
        tree.scan { k, v in
            entry(k, v, &body)
            count += 1
            if body.count >= batchBytes {
                do { try flush() } catch {
                    failure = error
                    return false
                }
            }
            return true
        }
        if let failure { throw failure }
        try flush()
    }

    /// Loads a snapshot file into a state.
    /// - Throws: `StorageError.corruption` naming the file and offset for any damage.
    static func load(path: String, rebuildIndexes: Bool = false) throws -> EngineState {
        try load(SnapshotContents.load(path: path), rebuildIndexes: rebuildIndexes)
    }

    /// Loads a snapshot already read into memory into a state; see `load(path:rebuildIndexes:)`.
    /// - Throws: as `load(path:rebuildIndexes:)`.
    static func load(_ contents: SnapshotContents, rebuildIndexes: Bool = false) throws -> EngineState {
        var state = EngineState()
        let name = (contents.path as NSString).lastPathComponent
        var sawStore = false
        var indexesAreCurrent = false
        // The table whose records are being read; tables arrive one after the other.
        var current: TableLoader?

        func finishCurrent() throws {
            guard let c = current else { return }
            current = nil
            var indexes: [IndexState] = []
            for (i, definition) in c.schema.indexes.enumerated() {
                indexes.append(IndexState(definition: definition, columnPositions: try TableState.positions(of: definition, in: c.schema),
                                          entries: c.indexes[i].finish()))
            }
            var table = TableState(id: c.id, schema: c.schema, rows: c.rows.finish(), indexes: indexes, nextKey: c.nextKey)
            if !indexesAreCurrent { try table.rebuildIndexes() }
            state.tables[c.id] = TableBox(table)
            state.tableIDs[c.schema.name] = c.id
        }

        let header = try SnapshotReader.read(contents) { record in
            var r = ByteReader(record, context: name)
            let typeByte = try r.readByte()
            guard let type = RecordType(rawValue: typeByte) else { throw r.corruption("unknown snapshot record type \(typeByte)") }
            switch type {
            case .store:
                let next = try r.readVarint()
                guard next <= UInt64(UInt32.max) else { throw r.corruption("next table id out of range") }
                state.nextTableID = UInt32(next)
                state.metadata = try Operation.unjson(StoreMetadata.self, &r)
                indexesAreCurrent = try !r.isAtEnd && r.readVarint() == indexKeyEncoding && !rebuildIndexes
                sawStore = true
            case .table:
                try finishCurrent()
                let id = try readTableID(&r)
                let nextKey = try r.readSignedVarint()
                let schema = try Operation.unjson(TableSchema.self, &r)
                current = TableLoader(id: id, nextKey: nextKey, schema: schema)
            case .rows:
                let id = try readTableID(&r)
                guard current?.id == id else { throw r.corruption("rows for table \(id) outside its table record") }
                let count = try r.readVarint()
                for _ in 0..<count {
                    let key = try r.readSignedVarint()
                    let row = try r.readLengthPrefixed()
                    try IndexKey.primaryKey(key).withUnsafeBytes { k in
                        do { try current!.rows.builder!.append(key: k, value: row) } catch { throw r.corruption("row keys out of order in table \(id)") }
                    }
                }
            case .index:
                guard indexesAreCurrent else {
                    r.offset = r.bytes.count
                    break
                }
                let id = try readTableID(&r)
                let ordinal = Int(try r.readVarint())
                guard current?.id == id, ordinal < current!.indexes.count else {
                    throw r.corruption("index entries for table \(id) index #\(ordinal) outside their table record")
                }
                let count = try r.readVarint()
                let empty = UnsafeRawBufferPointer(start: nil, count: 0)
                for _ in 0..<count {
                    let key = try r.readLengthPrefixed()
                    do { try current!.indexes[ordinal].builder!.append(key: key, value: empty) } catch {
                        throw r.corruption("index entries out of order in table \(id) index #\(ordinal)")
                    }
                }
            }
            if !r.isAtEnd { throw r.corruption("\(r.remaining) unexpected bytes at the end of a snapshot record") }
        }
        try finishCurrent()
        if !sawStore { throw StorageError.corruption(file: name, offset: 0, reason: "snapshot has no store record") }
        state.lsn = header.lsn
        return state
    }

    /// A bulk builder in a box: builders are non-copyable, and a table under load needs several.
    final class BuilderBox {
        var builder: ByteTree.Builder? = ByteTree.Builder()
        func finish() -> ByteTree { builder.take()!.finish() }
    }

    final class TableLoader {
        let id: TableID
        let nextKey: Int64
        let schema: TableSchema
        let rows = BuilderBox()
        let indexes: [BuilderBox]
        init(id: TableID, nextKey: Int64, schema: TableSchema) {
            self.id = id
            self.nextKey = nextKey
            self.schema = schema
            self.indexes = schema.indexes.map { _ in BuilderBox() }
        }
    }

    private static func readTableID(_ r: inout ByteReader) throws -> TableID {
        let raw = try r.readVarint()
        guard raw <= UInt64(UInt32.max) else { throw r.corruption("table id \(raw) out of range") }
        return TableID(rawValue: UInt32(raw))
    }
}
