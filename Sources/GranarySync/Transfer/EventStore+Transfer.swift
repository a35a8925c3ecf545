import Foundation
import GranaryStorage

extension EventStoreSchema {
    /// One row per cloud file name the downloader has handled (imported, or found to be an event already
    /// held), so that a name is downloaded once (§9 step 5). Damaged files are never recorded: they are
    /// downloaded again at the next merge.
    enum RemoteFile {
        static let name = "remoteFile"
        static let byName = "byName"
        static let fileName = 0, kind = 1, size = 2, seenAt = 3
        static let schema = TableSchema(name: name, columns: [
            Column("name", .string, nullable: false),
            // `EventFile.Kind` of the file, for later slices that prune rows by kind.
            Column("kind", .int, nullable: false),
            Column("size", .int, nullable: false),
            Column("seenAt", .double, nullable: false),
        ], indexes: [
            IndexDefinition(name: byName, on: "name", unique: true),
        ])
    }

    /// One row (key 1): the cloud identity recorded at leech, compared at every merge (§9 step 2).
    enum Cloud {
        static let name = "cloud"
        static let identity = 0, recordedAt = 1
        static let schema = TableSchema(name: name, columns: [
            // The identity's text; null when the backend has none (which is then what must stay true).
            Column("identity", .string),
            Column("recordedAt", .double, nullable: false),
        ])
    }
}

/// A cloud file name handled by the downloader, as kept in `remoteFile`.
struct RemoteFileRecord: Hashable, Sendable {
    var name: String
    var kind: EventFile.Kind
    var size: Int64
}

/// The identity recorded at leech; `identity` is nil when the backend reported none.
struct RecordedCloudIdentity: Hashable, Sendable {
    var identity: CloudIdentity?
}

/// An event as this store keeps it for export: its identity, count and the exact payload bytes fixed when
/// it was committed (I1), so that a re-export writes the very bytes a peer may already have.
struct StoredEventPayload: Hashable, Sendable {
    var id: EventID
    var globalCount: Int64
    var payload: Data
}

extension EventStore {
    /// Every name in `remoteFile`.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func remoteFileNames() throws(EventStoreError) -> Set<String> {
        let rows: [(key: Int64, row: Row)]
        do { rows = try engine.read().rows(in: EventStoreSchema.RemoteFile.name) } catch {
            throw .storage(path: path, operation: "list remote file names", reason: "\(error)")
        }
        var names = Set<String>()
        names.reserveCapacity(rows.count)
        for (key, row) in rows {
            let reader = EventStoreRowReader(row: row, table: EventStoreSchema.RemoteFile.name, key: key, path: path)
            names.insert(try reader.string(EventStoreSchema.RemoteFile.fileName, "name"))
        }
        return names
    }

    /// Stores `events` as downloaded (those not held yet; M6), raises `maxGlobalCount` to the largest
    /// count among them (M2), and records `files` in `remoteFile`, all in one commit. Returns the IDs of
    /// the events that were new.
    ///
    /// An event's row keeps the payload it arrived with when `payloads` has it (a downloaded event is
    /// never exported again, so its bytes need not be this device's encoding), and the events stay in
    /// memory for the merge's readiness check (`events(withStatus:)`): each was decoded once already.
    /// - Throws: `EventStoreError.unencodable`, `.storage`, `.damaged`.
    func importDownloaded(_ events: [Event], payloads: [EventID: Data] = [:], files: [RemoteFileRecord],
                          at date: Date = Date()) throws(EventStoreError) -> [EventID] {
        var rows: [(Event, Row)] = []
        for event in events { rows.append((event, try eventRow(event, status: .downloaded, payload: payloads[event.id]))) }
        let imported = try write("import \(events.count) downloaded events") { tx in
            var state = try Self.state(in: tx.snapshot, path: self.path)
            var imported: [EventID] = []
            for (event, row) in rows where try Self.eventKey(event.id, in: tx.snapshot) == nil {
                _ = try tx.insert(row, into: EventStoreSchema.Event.name)
                try self.noteStored(event, in: tx)
                state.maxGlobalCount = max(state.maxGlobalCount, event.meta.globalCount)
                imported.append(event.id)
            }
            typealias R = EventStoreSchema.RemoteFile
            for file in files {
                let existing = try tx.snapshot.queryKeys(IndexQuery(table: R.name, index: R.byName, equal: [.string(file.name)], limit: 1))
                guard existing.isEmpty else { continue }
                _ = try tx.insert(Row([.string(file.name), .int(Int64(file.kind.rawValue)), .int(file.size),
                                       .double(date.timeIntervalSinceReferenceDate)]), into: R.name)
            }
            if !imported.isEmpty { try self.writeState(state, in: tx) }
            return imported
        }
        let importedIDs = Set(imported)
        recentDownloads.withLock { recent in
            for event in events where importedIDs.contains(event.id) { recent[event.id] = event }
        }
        return imported
    }

    /// Removes `names` from `remoteFile` in one commit (names no longer listed: a file removed after a
    /// rebase is never written again, and if a stale copy reappears it is only downloaded once more).
    /// - Throws: `EventStoreError.storage`.
    func forgetRemoteFiles(_ names: some Sequence<String>) throws(EventStoreError) {
        typealias R = EventStoreSchema.RemoteFile
        try write("forget remote file names") { tx in
            for name in names {
                for key in try tx.snapshot.queryKeys(IndexQuery(table: R.name, index: R.byName, equal: [.string(name)], limit: 1)) {
                    try tx.delete(from: R.name, key: key)
                }
            }
        }
    }

    /// The local events not yet exported, in count order (then store ID, as the index orders them),
    /// with their stored payload bytes.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func unexportedEventPayloads() throws(EventStoreError) -> [StoredEventPayload] {
        typealias E = EventStoreSchema.Event
        let rows: [(key: Int64, row: Row)]
        do {
            rows = try engine.read().query(IndexQuery(table: E.name, index: E.byStatus, equal: [.int(EventStatus.localUnexported.rawValue)]))
        } catch {
            throw .storage(path: path, operation: "list unexported events", reason: "\(error)")
        }
        var result: [StoredEventPayload] = []
        for (key, row) in rows {
            let reader = EventStoreRowReader(row: row, table: E.name, key: key, path: path)
            let storeText = try reader.string(E.storeID, "storeID")
            guard let store = StoreID(canonical: storeText) else { throw reader.damaged("storeID '\(storeText.prefix(64))' is not a store ID") }
            result.append(StoredEventPayload(id: EventID(store: store, revision: try reader.int(E.revision, "revision")),
                                             globalCount: try reader.int(E.globalCount, "globalCount"),
                                             payload: try reader.bytes(E.payload, "payload")))
        }
        return result
    }

    /// The stored payload of event `id` with its status, nil when the store does not hold it.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func storedPayload(of id: EventID) throws(EventStoreError) -> (event: StoredEventPayload, status: EventStatus)? {
        typealias E = EventStoreSchema.Event
        let snapshot = engine.read()
        let found: Int64?, row: Row?
        do {
            found = try Self.eventKey(id, in: snapshot)
            row = try found.flatMap { try snapshot.row(in: E.name, key: $0) }
        } catch {
            throw .storage(path: path, operation: "read event \(id)", reason: "\(error)")
        }
        guard let found, let row else { return nil }
        let reader = EventStoreRowReader(row: row, table: E.name, key: found, path: path)
        let raw = try reader.int(E.status, "status")
        guard let status = EventStatus(rawValue: raw) else { throw reader.damaged("unknown status \(raw)") }
        return (StoredEventPayload(id: id, globalCount: try reader.int(E.globalCount, "globalCount"),
                                   payload: try reader.bytes(E.payload, "payload")), status)
    }

    /// The identity recorded by `recordCloudIdentity(_:)`, nil when none was recorded.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func recordedCloudIdentity() throws(EventStoreError) -> RecordedCloudIdentity? {
        typealias C = EventStoreSchema.Cloud
        let row: Row?
        do { row = try engine.read().row(in: C.name, key: EventStoreSchema.stateKey) } catch {
            throw .storage(path: path, operation: "read the cloud identity", reason: "\(error)")
        }
        guard let row else { return nil }
        let reader = EventStoreRowReader(row: row, table: C.name, key: EventStoreSchema.stateKey, path: path)
        return RecordedCloudIdentity(identity: try reader.optionalString(C.identity, "identity").map(CloudIdentity.init))
    }

    /// Records `identity` as the cloud's, replacing what was recorded (a leech), in one commit.
    /// - Throws: `EventStoreError.storage`.
    func recordCloudIdentity(_ identity: CloudIdentity?, at date: Date = Date()) throws(EventStoreError) {
        let row = Row([identity.map { .string($0.value) } ?? .null, .double(date.timeIntervalSinceReferenceDate)])
        try write("record the cloud identity") { tx in
            try tx.upsert(row, in: EventStoreSchema.Cloud.name, key: EventStoreSchema.stateKey)
        }
    }
}
