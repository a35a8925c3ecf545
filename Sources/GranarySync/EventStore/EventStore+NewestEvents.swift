import Foundation
import GranaryStorage

extension EventStoreSchema {
    /// Per store, its newest event stored here: the position, vector and time a rebase reads each
    /// store's published past and activity from (`RebaseCutoff`).
    ///
    /// A table of its own, written in the commit that stores the event, because finding it in the event
    /// table means reading every row, payloads and all — tens of megabytes once a store has synced a
    /// large import, on every merge that saw new files.
    enum NewestEvent {
        static let name = "newestEvent"
        static let byStore = "byStore"
        static let storeID = 0, revision = 1, meta = 2, timestamp = 3
        static let schema = TableSchema(name: name, columns: [
            Column("storeID", .string, nullable: false),
            Column("revision", .int, nullable: false),
            // The event's `EventMeta` in `LedgerBinaryCoding`'s form.
            Column("meta", .bytes, nullable: false),
            Column("timestamp", .double, nullable: false),
        ], indexes: [
            IndexDefinition(name: byStore, on: "storeID", unique: true),
        ])
    }
}

extension EventStore {
    /// For each store, its newest event known here (any status) and when it was made.
    ///
    /// Event stores made before the table existed get it here, filled from one scan of the event table.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func newestEventPerStore() throws(EventStoreError) -> [StoreID: (meta: EventMeta, timestamp: Date)] {
        typealias N = EventStoreSchema.NewestEvent
        if !engine.read().tableNames.contains(N.name) {
            try write("index each store's newest event") { tx in
                guard !tx.snapshot.tableNames.contains(N.name) else { return }
                _ = try tx.createTable(N.schema)
                for event in try self.scanNewestEvents(in: tx.snapshot) { try self.noteStored(event, in: tx) }
            }
        }
        let rows: [(key: Int64, row: Row)]
        do { rows = try engine.read().rows(in: N.name) } catch {
            throw .storage(path: path, operation: "read each store's newest event", reason: "\(error)")
        }
        var result: [StoreID: (meta: EventMeta, timestamp: Date)] = [:]
        for (key, row) in rows {
            let reader = EventStoreRowReader(row: row, table: N.name, key: key, path: path)
            let bytes = try reader.bytes(N.meta, "meta")
            let meta: EventMeta
            do { meta = try LedgerBinaryCoding.meta(bytes) } catch { throw reader.damaged("meta does not decode \(error)") }
            result[meta.id.store] = (meta, Date(timeIntervalSinceReferenceDate: try reader.double(N.timestamp, "timestamp")))
        }
        return result
    }

    /// Records `event`, whose row `tx` has just inserted, as its store's newest when it is newer than
    /// the one recorded. Nothing while the table does not exist: whoever creates it scans every event.
    func noteStored(_ event: Event, in tx: WriteTransaction) throws {
        typealias N = EventStoreSchema.NewestEvent
        guard tx.snapshot.tableNames.contains(N.name) else { return }
        let store = Value.string(event.id.store.description)
        let row = Row([store, .int(event.id.revision), .bytes(LedgerBinaryCoding.encode(event.meta)),
                       .double(event.timestamp.timeIntervalSinceReferenceDate)])
        if let (key, existing) = try tx.snapshot.query(IndexQuery(table: N.name, index: N.byStore, equal: [store], limit: 1)).first {
            guard case let .int(revision) = existing[N.revision], revision < event.id.revision else { return }
            try tx.update(row, in: N.name, key: key)
        } else {
            _ = try tx.insert(row, into: N.name)
        }
    }

    /// Each store's newest event, from every row of the event table.
    private func scanNewestEvents(in snapshot: Snapshot) throws -> [Event] {
        typealias E = EventStoreSchema.Event
        let path = directory.path
        var newest: [StoreID: (revision: Int64, row: Row, key: Int64)] = [:]
        try snapshot.forEachRow(in: E.name) { key, row in
            let reader = EventStoreRowReader(row: row, table: E.name, key: key, path: path)
            let text = try reader.string(E.storeID, "storeID")
            guard let store = StoreID(canonical: text) else { throw reader.damaged("storeID '\(text.prefix(64))' is not a store ID") }
            let revision = try reader.int(E.revision, "revision")
            if revision > newest[store]?.revision ?? 0 { newest[store] = (revision, row, key) }
            return true
        }
        return try newest.values.map { found in
            try EventStoreRowReader(row: found.row, table: E.name, key: found.key, path: path).json(Event.self, E.payload, "payload")
        }
    }
}
