import Foundation
import GranaryStorage

extension EventStoreSchema {
    /// At most one row: the merge whose store save may or may not have committed (§3.1, §12.3).
    enum PendingMergeTable {
        static let name = "pendingMerge"
        static let byMergeID = "byMergeID"
        static let mergeID = 0, tokenBefore = 1, record = 2
        static let schema = TableSchema(name: name, columns: [
            Column("mergeID", .string, nullable: false),
            // The JSON of the store's history token before the save; null when the store had none.
            Column("tokenBefore", .bytes),
            // The JSON of the whole `PendingMerge`.
            Column("record", .bytes, nullable: false),
        ], indexes: [
            IndexDefinition(name: byMergeID, on: "mergeID", unique: true),
        ])
    }
}

extension EventStore {
    /// Commits phase one of a merge: the pending row and `state.pendingMergeID`, in one commit.
    /// - Throws: `EventStoreError.damaged` when another merge is already pending (recovery must resolve
    ///   it first); `.unencodable`, `.storage`.
    func recordPendingMerge(_ pending: PendingMerge) throws(EventStoreError) {
        let record = try encodeRecord(pending)
        try write("record pending merge \(pending.mergeID)") { tx in
            var state = try Self.state(in: tx.snapshot, path: self.directory.path)
            if let other = state.pendingMergeID {
                throw EventStoreError.damaged(path: self.directory.path, table: EventStoreSchema.State.name, key: EventStoreSchema.stateKey,
                                              reason: "merge \(other) is still pending while merge \(pending.mergeID) begins")
            }
            if !tx.snapshot.tableNames.contains(EventStoreSchema.PendingMergeTable.name) {
                _ = try tx.createTable(EventStoreSchema.PendingMergeTable.schema)
            }
            _ = try tx.insert([.string(pending.mergeID), pending.tokenBefore.map { .bytes(Array($0)) } ?? .null, .bytes(record)],
                              into: EventStoreSchema.PendingMergeTable.name)
            state.pendingMergeID = pending.mergeID
            try self.writeState(state, in: tx)
        }
    }

    /// The pending merge `state.pendingMergeID` names, nil when none is pending.
    /// - Throws: `EventStoreError.damaged` when the state names a merge whose row is missing or
    ///   unreadable; `.storage`.
    func pendingMerge() throws(EventStoreError) -> PendingMerge? {
        let snapshot = engine.read()
        let state = try Self.state(in: snapshot, path: directory.path)
        guard let mergeID = state.pendingMergeID else { return nil }
        typealias T = EventStoreSchema.PendingMergeTable
        let rows: [(key: Int64, row: Row)]
        do {
            rows = snapshot.tableNames.contains(T.name)
                ? try snapshot.query(IndexQuery(table: T.name, index: T.byMergeID, equal: [.string(mergeID)], limit: 1)) : []
        } catch {
            throw .storage(path: directory.path, operation: "read pending merge \(mergeID)", reason: "\(error)")
        }
        guard let (key, row) = rows.first else {
            throw .damaged(path: directory.path, table: T.name, key: 0, reason: "the state names pending merge \(mergeID), which has no row")
        }
        let reader = EventStoreRowReader(row: row, table: T.name, key: key, path: directory.path)
        let pending = try reader.json(PendingMerge.self, T.record, "record")
        guard pending.mergeID == mergeID else { throw reader.damaged("the record of merge \(mergeID) names merge \(pending.mergeID)") }
        return pending
    }

    /// Forgets pending merge `mergeID` (its save did not commit, or failed): the row and the state's
    /// mention of it, in one commit. Nothing else was written by phase one, so nothing else is undone.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func discardPendingMerge(_ mergeID: String) throws(EventStoreError) {
        try write("discard pending merge \(mergeID)") { tx in
            var state = try Self.state(in: tx.snapshot, path: self.directory.path)
            try self.deletePendingRow(mergeID, in: tx)
            if state.pendingMergeID == mergeID {
                state.pendingMergeID = nil
                try self.writeState(state, in: tx)
            }
        }
    }

    /// Finalize (§10.4 step 6), one commit: the local events become unexported event rows with the
    /// counters moved past them, the integrated events are marked, the ledger and ID map take the merge's
    /// rows, and the pending row (if phase one wrote one) goes.
    /// - Throws: `EventStoreError.staleLocalEvent` when the counters moved since the local events were
    ///   made; `.unknownEvent`, `.wrongStatus` for an integrated event not downloaded; `.unencodable`,
    ///   `.storage`, `.damaged`. Nothing is written then.
    func finalizeMerge(_ pending: PendingMerge) throws(EventStoreError) {
        var eventRows: [(Event, Row)] = []
        for event in pending.localEvents { eventRows.append((event, try eventRow(event, status: .localUnexported))) }
        let step = EventStoreStep(integrated: pending.integrated, ledgerObjects: pending.ledgerObjects,
                                  localKeys: Dictionary(pending.mapped.map { ($0.key, $0.localKey) }, uniquingKeysWith: { $1 }),
                                  historyToken: pending.historyToken, leechState: pending.leechState,
                                  joinedBaselines: pending.joinedBaselines ?? [])
        try write("finalize merge \(pending.mergeID)") { tx in
            var state = try Self.state(in: tx.snapshot, path: self.directory.path)
            // The downloaded events first: the local events' vectors already cover them.
            for (event, row) in eventRows {
                guard event.id.store == state.storeID, event.id.revision == state.nextRevision,
                      event.meta.globalCount > state.maxGlobalCount else {
                    throw EventStoreError.staleLocalEvent(path: self.directory.path, id: event.id, nextRevision: state.nextRevision)
                }
                _ = try tx.insert(row, into: EventStoreSchema.Event.name)
                try self.noteStored(event, in: tx)
                state.nextRevision += 1
                state.maxGlobalCount = event.meta.globalCount
                state.integrated[state.storeID] = event.id.revision
            }
            for key in pending.unmapped.sorted() {
                guard try LedgerRows.objectRowKey(key, in: tx.snapshot) != nil else { continue }
                try LedgerRows.upsertObjectRow(key, in: tx) { $0[EventStoreSchema.Object.localKey] = .null }
            }
            try self.deletePendingRow(pending.mergeID, in: tx)
            if state.pendingMergeID == pending.mergeID { state.pendingMergeID = nil }
            try self.apply(step, to: &state, in: tx)
        }
    }

    /// Every key the ID map holds a local key for, by entity and local key: what the merge reads the
    /// app's rows through.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func idMap() throws(EventStoreError) -> [ObjectKey: Int64] {
        typealias O = EventStoreSchema.Object
        var map: [ObjectKey: Int64] = [:]
        do {
            try engine.read().forEachRow(in: O.name) { rowKey, row in
                let reader = EventStoreRowReader(row: row, table: O.name, key: rowKey, path: self.directory.path)
                if let localKey = try reader.optionalInt(O.localKey, "localKey") {
                    map[ObjectKey(try reader.string(O.entity, "entity"), try reader.string(O.globalID, "gid"))] = localKey
                }
                return true
            }
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw .storage(path: directory.path, operation: "read the ID map", reason: "\(error)")
        }
        return map
    }

    private func deletePendingRow(_ mergeID: String, in tx: WriteTransaction) throws {
        typealias T = EventStoreSchema.PendingMergeTable
        guard tx.snapshot.tableNames.contains(T.name) else { return }
        for key in try tx.snapshot.queryKeys(IndexQuery(table: T.name, index: T.byMergeID, equal: [.string(mergeID)])) {
            try tx.delete(from: T.name, key: key)
        }
    }

    private func encodeRecord(_ pending: PendingMerge) throws(EventStoreError) -> [UInt8] {
        do { return Array(try EventPayloadCoding.encode(pending)) } catch {
            throw .unencodable(path: directory.path, what: "pending merge \(pending.mergeID)", reason: "\(error)")
        }
    }
}
