import Foundation
import GranaryStorage

/// What this store knows of a baseline in the cloud, kept in the event store's `baseline` table.
///
/// Codable, so that a merge's pending record (§12.3) can carry the baselines its finalize will record.
struct BaselineRecord: Hashable, Sendable, Codable {
    /// How the store came to know the baseline; a higher role replaces a lower one.
    enum Role: Int64, Hashable, Sendable, Comparable, Codable {
        /// Read its header and found it covered by what was integrated already.
        case seen = 0
        /// Joined into the ledger.
        case joined = 1
        /// Written by this store.
        case written = 2

        static func < (lhs: Role, rhs: Role) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    var summary: BaselineSummary
    var parts: Int
    /// The bytes of its files this store wrote or downloaded (only the first part's for one it merely
    /// saw covered).
    var bytes: Int64
    var role: Role
}

/// The `baseline` table: one row per baseline this store has read, joined or written, by file stem.
enum BaselineTable {
    static let name = "baseline"
    static let byStem = "byStem"
    static let stem = 0, summary = 1, parts = 2, bytes = 3, role = 4
    static let schema = TableSchema(name: name, columns: [
        Column("stem", .string, nullable: false),
        // JSON of the `BaselineSummary`.
        Column("summary", .bytes, nullable: false),
        Column("parts", .int, nullable: false),
        Column("bytes", .int, nullable: false),
        Column("role", .int, nullable: false),
    ], indexes: [
        IndexDefinition(name: byStem, on: "stem", unique: true),
    ])
}

extension EventStore {
    /// Every baseline recorded, by stem.
    /// - Throws: `EventStoreError.storage`, `.damaged` for an unreadable row.
    func baselineRecords() throws(EventStoreError) -> [String: BaselineRecord] {
        var records: [String: BaselineRecord] = [:]
        do {
            try engine.read().forEachRow(in: BaselineTable.name) { key, row in
                let record = try Self.baselineRecord(row, key: key, path: self.directory.path)
                records[record.summary.stem] = record
                return true
            }
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw .storage(path: directory.path, operation: "list baselines", reason: "\(error)")
        }
        return records
    }

    /// Records baselines only read (role `seen`) in one commit: knowing their vectors lets a later
    /// rebase remove them once dominated, and lets the next merge skip them without a download.
    /// - Throws: `EventStoreError.unencodable`, `.storage`, `.damaged`.
    func recordBaselines(_ records: [BaselineRecord]) throws(EventStoreError) {
        guard !records.isEmpty else { return }
        try writeBaselines("record baselines") { tx in
            for record in records { try self.upsert(record, in: tx) }
        }
    }

    /// Rebase step 2 (§12.7), in one commit: records `record` as written here, makes it the store's
    /// baseline (`state.baselineID`), and marks the exported and integrated events `cutoff` covers as
    /// covered, so that nothing uploads them again once step 3 has removed them from the cloud.
    /// - Throws: `EventStoreError.unencodable`, `.storage`, `.damaged`.
    func commitRebase(_ record: BaselineRecord, cutoff: RevisionVector) throws(EventStoreError) {
        try writeBaselines("commit rebase \(record.summary.stem)") { tx in
            try self.upsert(record, in: tx)
            var state = try Self.state(in: tx.snapshot, path: self.directory.path)
            state.baselineID = record.summary.stem
            try self.markCovered(cutoff, in: tx)
            try tx.update(try Self.row(of: state, path: self.directory.path), in: EventStoreSchema.State.name, key: EventStoreSchema.stateKey)
        }
    }

    /// The largest global count of the events this store has integrated (its own included) and of the
    /// baselines it joined or wrote, in `snapshot`: the count a baseline of its ledger gets (M32).
    /// - Throws: `EventStoreError.damaged`; `StorageError` from the engine.
    func integratedGlobalCount(in snapshot: Snapshot) throws -> Int64 {
        var count: Int64 = 0
        let path = directory.path
        try snapshot.forEachRow(in: BaselineTable.name) { key, row in
            let record = try Self.baselineRecord(row, key: key, path: path)
            if record.role >= .joined { count = max(count, record.summary.globalCount) }
            return true
        }
        try snapshot.forEachRow(in: EventStoreSchema.Event.name) { key, row in
            let reader = EventStoreRowReader(row: row, table: EventStoreSchema.Event.name, key: key, path: path)
            if try reader.int(EventStoreSchema.Event.status, "status") != EventStatus.downloaded.rawValue {
                count = max(count, try reader.int(EventStoreSchema.Event.globalCount, "globalCount"))
            }
            return true
        }
        return count
    }

    /// Rebase and baseline joins inside a merge's commit: records the joined baselines, raises the
    /// integrated vector and the global count to theirs (M2, M32), and moves the downloaded events they
    /// now cover to integrated (their changes are in the joined ledger). Called by `commit(_:)`.
    func applyBaselines(_ step: EventStoreStep, to state: inout EventStoreState, in tx: WriteTransaction) throws {
        guard !step.joinedBaselines.isEmpty else { return }
        for record in step.joinedBaselines {
            try upsert(record, in: tx)
            state.integrated = state.integrated.joined(with: record.summary.vector)
            state.maxGlobalCount = max(state.maxGlobalCount, record.summary.globalCount)
        }
        if let newest = step.joinedBaselines.max(by: { ($0.summary.globalCount, $0.summary.id.uuidString) < ($1.summary.globalCount, $1.summary.id.uuidString) }) {
            state.baselineID = newest.summary.stem
        }
        typealias E = EventStoreSchema.Event
        let rows = try tx.snapshot.query(IndexQuery(table: E.name, index: E.byStatus, equal: [.int(EventStatus.downloaded.rawValue)]))
        for (key, row) in rows {
            let reader = EventStoreRowReader(row: row, table: E.name, key: key, path: directory.path)
            let text = try reader.string(E.storeID, "storeID")
            guard let store = StoreID(canonical: text) else { throw reader.damaged("storeID '\(text.prefix(64))' is not a store ID") }
            guard state.integrated[store] >= (try reader.int(E.revision, "revision")) else { continue }
            var updated = row
            updated.values[E.status] = .int(EventStatus.integrated.rawValue)
            try tx.update(updated, in: E.name, key: key)
        }
    }

    // MARK: Rows

    private func markCovered(_ cutoff: RevisionVector, in tx: WriteTransaction) throws {
        typealias E = EventStoreSchema.Event
        for status in [EventStatus.exported, .integrated] {
            let rows = try tx.snapshot.query(IndexQuery(table: E.name, index: E.byStatus, equal: [.int(status.rawValue)]))
            for (key, row) in rows {
                let reader = EventStoreRowReader(row: row, table: E.name, key: key, path: directory.path)
                let text = try reader.string(E.storeID, "storeID")
                guard let store = StoreID(canonical: text) else { throw reader.damaged("storeID '\(text.prefix(64))' is not a store ID") }
                guard cutoff[store] >= (try reader.int(E.revision, "revision")) else { continue }
                var updated = row
                updated.values[E.status] = .int(EventStatus.covered.rawValue)
                try tx.update(updated, in: E.name, key: key)
            }
        }
    }

    private func upsert(_ record: BaselineRecord, in tx: WriteTransaction) throws {
        let stem = record.summary.stem
        let existing = try tx.snapshot.query(IndexQuery(table: BaselineTable.name, index: BaselineTable.byStem,
                                                        equal: [.string(stem)], limit: 1)).first
        if let existing {
            let old = try Self.baselineRecord(existing.row, key: existing.key, path: directory.path)
            guard record.role > old.role else { return }
            try tx.update(try baselineRow(record), in: BaselineTable.name, key: existing.key)
        } else {
            _ = try tx.insert(try baselineRow(record), into: BaselineTable.name)
        }
    }

    private func baselineRow(_ record: BaselineRecord) throws(EventStoreError) -> Row {
        let summary: Data
        do { summary = try EventPayloadCoding.encode(record.summary) } catch {
            throw .unencodable(path: directory.path, what: "baseline \(record.summary.stem)", reason: "\(error)")
        }
        return Row([.string(record.summary.stem), .bytes(Array(summary)), .int(Int64(record.parts)), .int(record.bytes),
                    .int(record.role.rawValue)])
    }

    private static func baselineRecord(_ row: Row, key: Int64, path: String) throws(EventStoreError) -> BaselineRecord {
        let reader = EventStoreRowReader(row: row, table: BaselineTable.name, key: key, path: path)
        let summary = try reader.json(BaselineSummary.self, BaselineTable.summary, "summary")
        let rawRole = try reader.int(BaselineTable.role, "role")
        guard let role = BaselineRecord.Role(rawValue: rawRole) else { throw reader.damaged("unknown baseline role \(rawRole)") }
        let parts = try reader.int(BaselineTable.parts, "parts")
        guard parts >= 1, parts <= Int64(Int32.max) else { throw reader.damaged("\(parts) baseline parts") }
        return BaselineRecord(summary: summary, parts: Int(parts), bytes: try reader.int(BaselineTable.bytes, "bytes"), role: role)
    }

    private func writeBaselines(_ operation: String, _ body: (WriteTransaction) throws -> Void) throws(EventStoreError) {
        do {
            try engine.write(body)
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw .storage(path: directory.path, operation: operation, reason: "\(error)")
        }
    }
}
