import Foundation
import GranaryStorage

extension EventStoreSchema {
    /// The size of each event file this store exported, recorded in the commit that marks its event
    /// exported: what the self-healing check compares the cloud's listing with. Kept in memory only, the
    /// sizes were lost at every launch, and the first export then read back every event this device
    /// ever exported to learn them again.
    enum OwnFile {
        static let name = "ownFile"
        static let byName = "byName"
        static let fileName = 0, size = 1
        static let schema = TableSchema(name: name, columns: [
            Column("name", .string, nullable: false),
            Column("size", .int, nullable: false),
        ], indexes: [
            IndexDefinition(name: byName, on: "name", unique: true),
        ])
    }
}

extension EventStore {
    /// Marks local events exported and records the sizes of the files they were uploaded as, in one
    /// commit (§12.4: after their upload).
    /// - Throws: `EventStoreError.unknownEvent`, `.wrongStatus` for an event not local and unexported
    ///   (nothing is changed then); `.storage`.
    func markExported(_ ids: [EventID], files: [(name: String, size: Int64)]) throws(EventStoreError) {
        typealias O = EventStoreSchema.OwnFile
        try write("mark events exported") { tx in
            for id in ids { try self.move(id, from: .localUnexported, to: .exported, in: tx) }
            guard !files.isEmpty else { return }
            // Stores made before the table existed get it here.
            if !tx.snapshot.tableNames.contains(O.name) { _ = try tx.createTable(O.schema) }
            for file in files {
                let row = Row([.string(file.name), .int(file.size)])
                if let key = try tx.snapshot.queryKeys(IndexQuery(table: O.name, index: O.byName, equal: [.string(file.name)], limit: 1)).first {
                    try tx.update(row, in: O.name, key: key)
                } else {
                    _ = try tx.insert(row, into: O.name)
                }
            }
        }
    }

    /// The recorded size of every event file this store exported, by name.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func ownFileSizes() throws(EventStoreError) -> [String: Int64] {
        typealias O = EventStoreSchema.OwnFile
        let snapshot = engine.read()
        guard snapshot.tableNames.contains(O.name) else { return [:] }
        let rows: [(key: Int64, row: Row)]
        do { rows = try snapshot.rows(in: O.name) } catch {
            throw .storage(path: path, operation: "read the sizes of exported files", reason: "\(error)")
        }
        var sizes: [String: Int64] = [:]
        for (key, row) in rows {
            let reader = EventStoreRowReader(row: row, table: O.name, key: key, path: path)
            sizes[try reader.string(O.fileName, "name")] = try reader.int(O.size, "size")
        }
        return sizes
    }
}
