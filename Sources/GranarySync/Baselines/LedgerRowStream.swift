import Foundation
import GranaryStorage

/// The stored ledger read one object at a time, so that a baseline of a large ledger is written with
/// one object and one part in memory rather than the whole ledger (§13 "Streaming").
enum LedgerRowStream {
    typealias Objects = EventStoreSchema.Object

    /// Calls `body` with every ledger object in `snapshot`, in object-row order, each whole (registers and
    /// members read through their indexes).
    /// - Throws: `EventStoreError.damaged` for an unreadable row; `StorageError` from the engine; what
    ///   `body` throws.
    static func forEachObject(in snapshot: Snapshot, path: String, _ body: (LedgerObject) throws -> Void) throws {
        try snapshot.forEachRow(in: Objects.name) { rowKey, row in
            let reader = EventStoreRowReader(row: row, table: Objects.name, key: rowKey, path: path)
            let key = ObjectKey(try reader.string(Objects.entity, "entity"), try reader.string(Objects.globalID, "gid"))
            guard let object = try LedgerRows.object(key, row: row, rowKey: rowKey, in: snapshot, path: path) else { return true }
            try body(object)
            return true
        }
    }
}
