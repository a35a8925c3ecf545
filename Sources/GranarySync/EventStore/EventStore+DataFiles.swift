import Foundation
import GranaryStorage

/// The `dataFile` table: the bytes of every large value this store holds (M15), its own and those it
/// downloaded, by data file name. Events and ledger registers hold only the names.
enum DataFileTable {
    static let name = "dataFile"
    static let byName = "byName"
    static let fileName = 0, isOwn = 1, isExported = 2, fileSize = 3, bytes = 4
    static let schema = TableSchema(name: name, columns: [
        Column("name", .string, nullable: false),
        // Written by this store: uploaded by it, and removed from the cloud by it once unreferenced.
        Column("isOwn", .bool, nullable: false),
        // For own files: uploaded (the export commits this after the upload, before any event naming it).
        Column("isExported", .bool, nullable: false),
        // The size of the cloud file (framed): a listing at another size is a damaged copy to replace.
        Column("fileSize", .int, nullable: false),
        // Last, so that listing the files (each export checks its own against the listing) stops before the bytes.
        Column("bytes", .bytes, nullable: false),
    ], indexes: [
        IndexDefinition(name: byName, on: "name", unique: true),
    ])
}

/// What the event store knows of one data file, without its bytes.
struct DataFileEntry: Hashable, Sendable {
    var name: CloudFileName
    var isOwn: Bool
    var isExported: Bool
    /// The size of its cloud file, framed.
    var fileSize: Int64
}

extension EventStore {
    /// Gives an event store made before the `dataFile` table existed an empty one (it held every value
    /// inline, so there is nothing to fill it with).
    /// - Throws: `EventStoreError.storage`.
    func addDataFileTableIfMissing() throws(EventStoreError) {
        guard !engine.read().tableNames.contains(DataFileTable.name) else { return }
        try write("add the data file table") { tx in
            guard !tx.snapshot.tableNames.contains(DataFileTable.name) else { return }
            _ = try tx.createTable(DataFileTable.schema)
        }
    }

    /// Every data file held, without the bytes.
    /// - Throws: `EventStoreError.storage`, `.damaged` for an unreadable row.
    func dataFileEntries() throws(EventStoreError) -> [CloudFileName: DataFileEntry] {
        var entries: [CloudFileName: DataFileEntry] = [:]
        do {
            try engine.read().forEachEncodedRow(in: DataFileTable.name) { encoded in
                let entry = try Self.dataFileEntry(encoded, path: self.path)
                entries[entry.name] = entry
                return true
            }
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw .storage(path: path, operation: "list data files", reason: "\(error)")
        }
        return entries
    }

    /// Those of `names` the store holds, by index lookups: a merge asks about the few files its events
    /// name, not about every file held.
    /// - Throws: `EventStoreError.storage`.
    func heldDataFiles(among names: Set<CloudFileName>) throws(EventStoreError) -> Set<CloudFileName> {
        guard !names.isEmpty else { return [] }
        let snapshot = engine.read()
        var held = Set<CloudFileName>()
        do {
            for name in names where try !snapshot.queryKeys(IndexQuery(table: DataFileTable.name, index: DataFileTable.byName,
                                                                          equal: [.string(name.fileName)], limit: 1)).isEmpty {
                held.insert(name)
            }
        } catch {
            throw .storage(path: path, operation: "look up data files", reason: "\(error)")
        }
        return held
    }

    /// The bytes of data file `name`, nil when the store does not hold it.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func dataFileBytes(_ name: CloudFileName) throws(EventStoreError) -> Data? {
        try dataFileBytes(name, in: engine.read())
    }

    private func dataFileBytes(_ name: CloudFileName, in snapshot: Snapshot) throws(EventStoreError) -> Data? {
        let found: (key: Int64, row: Row)?
        do {
            found = try snapshot.query(IndexQuery(table: DataFileTable.name, index: DataFileTable.byName,
                                                  equal: [.string(name.fileName)], limit: 1)).first
        } catch {
            throw .storage(path: path, operation: "read data file \(name)", reason: "\(error)")
        }
        guard let found else { return nil }
        return try EventStoreRowReader(row: found.row, table: DataFileTable.name, key: found.key, path: path)
            .bytes(DataFileTable.bytes, "bytes")
    }

    /// `dataFileBytes(_:)` with the error a merge reports.
    /// - Throws: `SyncError.eventStore`.
    func syncDataFileBytes(_ name: CloudFileName) throws(SyncError) -> Data? {
        do { return try dataFileBytes(name) } catch { throw SyncError(error) }
    }

    /// Stores `files` (those not held yet) in one commit: downloaded files, or own files written ahead of
    /// the event naming them (an unreferenced own file left by a kill is removed by the next clean-up).
    /// - Throws: `EventStoreError.storage`.
    func storeDataFiles(_ files: [DataFileRecord]) throws(EventStoreError) {
        guard !files.isEmpty else { return }
        try write("store \(files.count) data files") { tx in try self.writeDataFiles(files, in: tx) }
    }

    /// Inserts the files of `files` not held yet inside `tx`; a file is own when this store wrote it.
    func writeDataFiles(_ files: [DataFileRecord], in tx: WriteTransaction) throws {
        guard !files.isEmpty else { return }
        let own = try Self.state(in: tx.snapshot, path: path).storeID
        for file in files {
            let text = file.name.fileName
            let existing = try tx.snapshot.queryKeys(IndexQuery(table: DataFileTable.name, index: DataFileTable.byName,
                                                                equal: [.string(text)], limit: 1))
            guard existing.isEmpty else { continue }
            let fileSize = Int64(LargeValues.fileBytes(of: file).count)
            _ = try tx.insert(Row([.string(text), .bool(file.name.writer == own), .bool(false), .int(fileSize), .bytes(Array(file.bytes))]),
                              into: DataFileTable.name)
        }
    }

    /// The own data files not uploaded yet, with their bytes, by name.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func unexportedDataFiles() throws(EventStoreError) -> [DataFileRecord] {
        try dataFiles { $0.isOwn && !$0.isExported }
    }

    /// The held data files of `names`, with their bytes, by index lookups (an export asks for the few
    /// files due, not for every file held).
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func dataFiles(named names: Set<CloudFileName>) throws(EventStoreError) -> [DataFileRecord] {
        let snapshot = engine.read()
        var files: [DataFileRecord] = []
        for name in names.sorted(by: { $0.fileName < $1.fileName }) {
            if let bytes = try dataFileBytes(name, in: snapshot) { files.append(DataFileRecord(name: name, bytes: bytes)) }
        }
        return files
    }

    private func dataFiles(where include: (DataFileEntry) -> Bool) throws(EventStoreError) -> [DataFileRecord] {
        var files: [DataFileRecord] = []
        do {
            try engine.read().forEachEncodedRow(in: DataFileTable.name) { encoded in
                let entry = try Self.dataFileEntry(encoded, path: self.path)
                // Only the files asked for are read whole.
                if include(entry) {
                    let bytes = try EventStoreRowReader(row: try encoded.decode(), table: DataFileTable.name, key: encoded.key, path: self.path)
                        .bytes(DataFileTable.bytes, "bytes")
                    files.append(DataFileRecord(name: entry.name, bytes: bytes))
                }
                return true
            }
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw .storage(path: path, operation: "read data files", reason: "\(error)")
        }
        return files.sorted { $0.name.fileName < $1.name.fileName }
    }

    /// Marks own data files uploaded, in one commit.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func markDataFilesExported(_ names: some Sequence<CloudFileName>) throws(EventStoreError) {
        try updateDataFiles(names, "mark data files exported") { row, key, tx in
            var row = row
            row.values[DataFileTable.isExported] = .bool(true)
            try tx.update(row, in: DataFileTable.name, key: key)
        }
    }

    /// Drops the data files of `names` from the store, in one commit.
    /// - Throws: `EventStoreError.storage`.
    func removeDataFiles(_ names: some Sequence<CloudFileName>) throws(EventStoreError) {
        try updateDataFiles(names, "remove data files") { _, key, tx in try tx.delete(from: DataFileTable.name, key: key) }
    }

    private func updateDataFiles(_ names: some Sequence<CloudFileName>, _ operation: String,
                                 _ body: (Row, Int64, WriteTransaction) throws -> Void) throws(EventStoreError) {
        try write(operation) { tx in
            for name in names {
                let rows = try tx.snapshot.query(IndexQuery(table: DataFileTable.name, index: DataFileTable.byName,
                                                            equal: [.string(name.fileName)], limit: 1))
                for (key, row) in rows { try body(row, key, tx) }
            }
        }
    }

    /// The data files still needed: those a register of the ledger or an event not covered by a
    /// baseline (any other status) refers to. A covered event's files are the baseline's business: its
    /// ledger is this store's, whose registers are counted.
    ///
    /// Events `baselineVector` covers count as covered too (except local ones not yet exported): that
    /// vector is a baseline in the cloud, which every device that lacks one of those events joins
    /// instead of integrating it.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func referencedDataFiles(exceptEventsCoveredBy baselineVector: RevisionVector = RevisionVector()) throws(EventStoreError) -> Set<CloudFileName> {
        var names = Set<CloudFileName>()
        for object in try loadLedger().objects.values { names.formUnion(LargeValues.references(in: object)) }
        for status in [EventStatus.localUnexported, .exported, .downloaded, .integrated] {
            for event in try events(withStatus: status)
            where status == .localUnexported || baselineVector[event.id.store] < event.id.revision {
                names.formUnion(LargeValues.references(in: event.changes))
            }
        }
        return names
    }

    /// The entry of a stored row, read from its leading columns: the bytes stay unread.
    private static func dataFileEntry(_ encoded: EncodedRow, path: String) throws -> DataFileEntry {
        var values = try encoded.values()
        var row = Row([])
        while row.count <= DataFileTable.fileSize, let value = try values.next() { row.values.append(value) }
        let reader = EventStoreRowReader(row: row, table: DataFileTable.name, key: encoded.key, path: path)
        let text = try reader.string(DataFileTable.fileName, "name")
        guard let name = try? CloudFileName.parse(text), case .data = name else {
            throw reader.damaged("'\(text.prefix(80))' is not the name of a data file")
        }
        return DataFileEntry(name: name, isOwn: try reader.bool(DataFileTable.isOwn, "isOwn"),
                             isExported: try reader.bool(DataFileTable.isExported, "isExported"),
                             fileSize: try reader.int(DataFileTable.fileSize, "fileSize"))
    }
}
