import Foundation
import GranaryStorage
import Synchronization

/// This store's events, counters and ledger, kept in a GranaryStorage engine directory
/// (`events.granary`, durability `.full`) so that each capture and merge step is one atomic, durable
/// commit (§12).
///
/// The store owns its directory's lock while open: a second open of the same directory, in this process
/// or another, fails with `EventStoreError.storage`, which is what keeps one ensemble per store.
final class EventStore: Sendable {
    let directory: URL
    // Internal rather than private: extensions in other files (Transfer/, Merge/, Baselines/) keep tables of
    // their own.
    let engine: Engine
    var path: String { directory.path }
    /// The version hash of the model this device's events are made with, stamped on every local event
    /// as it is recorded (M26): a device that does not know the hash lets the event wait.
    let localModelHash = Mutex<String?>(nil)
    /// Events stored by the last downloads and not yet read back: the readiness check that follows a
    /// download takes them from here instead of decoding their payloads a second time. Emptied by every
    /// read of the downloaded events, so it holds one merge's downloads at most.
    let recentDownloads = Mutex<[EventID: Event]>([:])
    private init(directory: URL, engine: Engine) {
        self.directory = directory
        self.engine = engine
    }

    /// Opens the event store in `directory`, creating it with `storeID` (a random one when `nil`) when the
    /// directory holds no store yet.
    /// - Throws: `EventStoreError.storage` when the engine cannot open the directory (held by another
    ///   open, damaged files, I/O); `.newerVersion` for a store of a later schema; `.notAnEventStore` for
    ///   another kind of engine store; `.damaged` when the state row is missing or unreadable.
    static func open(at directory: URL, creatingWith storeID: StoreID? = nil) throws(EventStoreError) -> EventStore {
        let path = directory.path
        let engine: Engine
        do {
            engine = try Engine.open(.directory(directory), options: Engine.Options(durability: .full))
        } catch {
            throw .storage(path: path, operation: "open", reason: "\(error)")
        }
        let store = EventStore(directory: directory, engine: engine)
        let snapshot = engine.read()
        if snapshot.metadata.schemaVersion == nil && snapshot.tableNames.isEmpty {
            try store.create(storeID: storeID ?? .random())
        } else {
            try checkVersion(snapshot.metadata.schemaVersion, path: path)
            _ = try store.state()
            try store.addDataFileTableIfMissing()
        }
        return store
    }

    private static func checkVersion(_ text: String?, path: String) throws(EventStoreError) {
        guard let text, text.hasPrefix(EventStoreSchema.versionPrefix),
              let version = Int(text.dropFirst(EventStoreSchema.versionPrefix.count)), version >= 1 else {
            throw .notAnEventStore(path: path, found: text)
        }
        guard version <= EventStoreSchema.version else {
            throw .newerVersion(path: path, found: version, supported: EventStoreSchema.version)
        }
    }

    /// Tables, state row and version in one commit, so a kill during creation leaves an empty directory
    /// that the next open creates again.
    private func create(storeID: StoreID) throws(EventStoreError) {
        let state = EventStoreState(storeID: storeID)
        let stateRow = try Self.row(of: state, path: path)
        try write("create") { tx in
            for table in EventStoreSchema.tables { _ = try tx.createTable(table) }
            try tx.insert(stateRow, into: EventStoreSchema.State.name, key: EventStoreSchema.stateKey)
            var metadata = tx.metadata
            metadata.schemaVersion = EventStoreSchema.versionText
            try tx.setMetadata(metadata)
        }
    }

    /// Closes the engine and releases the directory's lock.
    /// - Throws: `EventStoreError.storage` when the final sync fails.
    func close() throws(EventStoreError) {
        do { try engine.close() } catch { throw .storage(path: path, operation: "close", reason: "\(error)") }
    }

    /// Writes the whole state to a snapshot file now (tests use it to damage a snapshot).
    /// - Throws: `EventStoreError.storage`.
    func checkpoint() throws(EventStoreError) {
        do { try engine.checkpoint() } catch { throw .storage(path: path, operation: "checkpoint", reason: "\(error)") }
    }

    // MARK: State

    /// The state row as last committed.
    /// - Throws: `EventStoreError.damaged` when it is missing or unreadable.
    func state() throws(EventStoreError) -> EventStoreState {
        try Self.state(in: engine.read(), path: path)
    }

    /// Sets the leech state in its own commit.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func setLeechState(_ leechState: LeechState) throws(EventStoreError) {
        try commit(EventStoreStep(leechState: leechState))
    }

    // MARK: Events

    /// The identity, position and vector the next local event must have: the next revision, a global
    /// count above every event known (M2), and the integrated vector as its past.
    /// - Throws: `EventStoreError.damaged` for an unreadable state row.
    func nextLocalMeta() throws(EventStoreError) -> EventMeta {
        let state = try state()
        return EventMeta(id: EventID(store: state.storeID, revision: state.nextRevision),
                         globalCount: state.maxGlobalCount + 1, vector: state.integrated)
    }

    /// Records `event`, made from `nextLocalMeta()`, as a local unexported event together with `step`
    /// (the ledger changes it made, the history token it captured up to) in one commit (§12.2).
    /// - Throws: `EventStoreError.staleLocalEvent` when the counters moved since `event` was made;
    ///   `.unencodable`, `.storage`, `.damaged`, and what `commit(_:)` throws for `step`.
    func recordLocalEvent(_ event: Event, with step: EventStoreStep = EventStoreStep()) throws(EventStoreError) {
        let row = try eventRow(event, status: .localUnexported)
        try write("record local event \(event.id)") { tx in
            var state = try Self.state(in: tx.snapshot, path: self.path)
            guard event.id.store == state.storeID, event.id.revision == state.nextRevision,
                  event.meta.globalCount > state.maxGlobalCount else {
                throw EventStoreError.staleLocalEvent(path: self.path, id: event.id, nextRevision: state.nextRevision)
            }
            _ = try tx.insert(row, into: EventStoreSchema.Event.name)
            state.nextRevision += 1
            state.maxGlobalCount = event.meta.globalCount
            state.integrated[state.storeID] = event.id.revision
            try self.noteStored(event, in: tx)
            try self.apply(step, to: &state, in: tx)
        }
    }

    /// Makes, records and returns a local event of `changes` with no other step: for callers that keep
    /// no ledger (tests, tools).
    /// - Throws: what `recordLocalEvent(_:with:)` throws.
    @discardableResult
    func addLocalEvent(_ changes: [ObjectChange], timestamp: Date = Date()) throws(EventStoreError) -> Event {
        let event = Event(meta: try nextLocalMeta(), timestamp: timestamp, changes: changes)
        try recordLocalEvent(event)
        return event
    }

    /// Stores a downloaded event as downloaded, raising `maxGlobalCount` to its count (M2). Returns
    /// `false`, changing nothing, when an event of that ID is already stored (M6).
    /// - Throws: `EventStoreError.unencodable`, `.storage`, `.damaged`.
    @discardableResult
    func importEvent(_ event: Event) throws(EventStoreError) -> Bool {
        let row = try eventRow(event, status: .downloaded)
        return try write("import event \(event.id)") { tx in
            guard try Self.eventKey(event.id, in: tx.snapshot) == nil else { return false }
            var state = try Self.state(in: tx.snapshot, path: self.path)
            _ = try tx.insert(row, into: EventStoreSchema.Event.name)
            try self.noteStored(event, in: tx)
            state.maxGlobalCount = max(state.maxGlobalCount, event.meta.globalCount)
            try self.writeState(state, in: tx)
            return true
        }
    }

    /// The events of `status`, in position order (M1).
    /// - Throws: `EventStoreError.storage`, `.damaged` for an unreadable row.
    func events(withStatus status: EventStatus) throws(EventStoreError) -> [Event] {
        let rows: [(key: Int64, row: Row)]
        do {
            rows = try engine.read().query(IndexQuery(table: EventStoreSchema.Event.name, index: EventStoreSchema.Event.byStatus,
                                                      equal: [.int(status.rawValue)]))
        } catch {
            throw .storage(path: path, operation: "list \(status) events", reason: "\(error)")
        }
        var recent: [EventID: Event] = [:]
        if status == .downloaded { recentDownloads.withLock { swap(&recent, &$0) } }
        var events: [Event] = []
        for (key, row) in rows {
            let reader = EventStoreRowReader(row: row, table: EventStoreSchema.Event.name, key: key, path: path)
            if !recent.isEmpty, let store = try StoreID(canonical: reader.string(EventStoreSchema.Event.storeID, "storeID")),
               let event = recent[EventID(store: store, revision: try reader.int(EventStoreSchema.Event.revision, "revision"))] {
                events.append(event)
            } else {
                events.append(try reader.json(Event.self, EventStoreSchema.Event.payload, "payload"))
            }
        }
        return events
    }

    /// The status of event `id`, `nil` when it is not stored.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func status(of id: EventID) throws(EventStoreError) -> EventStatus? {
        let snapshot = engine.read()
        let found: Int64?, row: Row?
        do {
            found = try Self.eventKey(id, in: snapshot)
            row = try found.flatMap { try snapshot.row(in: EventStoreSchema.Event.name, key: $0) }
        } catch {
            throw .storage(path: path, operation: "find event \(id)", reason: "\(error)")
        }
        guard let found, let row else { return nil }
        return try Self.status(EventStoreRowReader(row: row, table: EventStoreSchema.Event.name, key: found, path: path))
    }

    /// Marks local events exported, all in one commit (§12.4: after their upload).
    /// - Throws: `EventStoreError.unknownEvent`, `.wrongStatus` for an event not local and unexported
    ///   (nothing is changed then); `.storage`.
    func markExported(_ ids: [EventID]) throws(EventStoreError) {
        try markExported(ids, files: [])
    }

    /// Writes `step` in one commit: the merge's finalize (§12.3).
    /// - Throws: `EventStoreError.unknownEvent`, `.wrongStatus` for an integrated event that is not
    ///   downloaded (nothing is changed then); `.unencodable`, `.storage`, `.damaged`.
    func commit(_ step: EventStoreStep) throws(EventStoreError) {
        try write("commit a merge step") { tx in
            var state = try Self.state(in: tx.snapshot, path: self.path)
            try self.apply(step, to: &state, in: tx)
        }
    }

    // MARK: Ledger and ID map

    /// The ledger as last committed.
    /// - Throws: `EventStoreError.storage`, `.damaged` for an unreadable ledger row.
    func loadLedger() throws(EventStoreError) -> Ledger {
        do {
            return try LedgerRows.load(from: engine.read(), path: path)
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw .storage(path: path, operation: "load the ledger", reason: "\(error)")
        }
    }

    /// The ledger objects of `keys` as last committed; keys not in the ledger are left out.
    /// - Throws: `EventStoreError.storage`, `.damaged` for an unreadable ledger row.
    func ledgerObjects(_ keys: some Sequence<ObjectKey>) throws(EventStoreError) -> [LedgerObject] {
        do {
            return try LedgerRows.load(keys, from: engine.read(), path: path)
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw .storage(path: path, operation: "load ledger objects", reason: "\(error)")
        }
    }

    /// The keys whose canonical to-many `relationship` holds `member` in the ledger.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func ledgerOwners(of member: ObjectKey, in relationship: String) throws(EventStoreError) -> [ObjectKey] {
        do {
            return try LedgerRows.owners(of: member, in: relationship, snapshot: engine.read(), path: path)
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw .storage(path: path, operation: "find the owners of \(member)", reason: "\(error)")
        }
    }

    /// Replaces the stored ledger by `ledger` in one commit; ID map entries stay.
    /// - Throws: `EventStoreError.unencodable`, `.storage`, `.damaged`.
    func saveLedger(_ ledger: Ledger) throws(EventStoreError) {
        try write("save the ledger") { tx in
            for key in try LedgerRows.keys(in: tx.snapshot, path: self.path) where ledger.object(key) == nil {
                try LedgerRows.remove(key, in: tx)
            }
            for object in ledger.objects.values.sorted(by: { $0.key < $1.key }) {
                try LedgerRows.write(object, in: tx, path: self.path)
            }
        }
    }

    /// The primary key in the app's store that `key` is mapped to.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func localKey(for key: ObjectKey) throws(EventStoreError) -> Int64? {
        let snapshot = engine.read()
        let found: Int64?, row: Row?
        do {
            found = try LedgerRows.objectRowKey(key, in: snapshot)
            row = try found.flatMap { try snapshot.row(in: EventStoreSchema.Object.name, key: $0) }
        } catch {
            throw .storage(path: path, operation: "find the local key of \(key)", reason: "\(error)")
        }
        guard let found, let row else { return nil }
        return try EventStoreRowReader(row: row, table: EventStoreSchema.Object.name, key: found, path: path)
            .optionalInt(EventStoreSchema.Object.localKey, "localKey")
    }

    /// The key mapped to primary key `localKey` of `entity` in the app's store.
    /// - Throws: `EventStoreError.storage`, `.damaged`.
    func objectKey(entity: String, localKey: Int64) throws(EventStoreError) -> ObjectKey? {
        let snapshot = engine.read()
        let rows: [(key: Int64, row: Row)]
        do {
            rows = try snapshot.query(IndexQuery(table: EventStoreSchema.Object.name, index: EventStoreSchema.Object.byLocalKey,
                                                 equal: [.string(entity), .int(localKey)], limit: 1))
        } catch {
            throw .storage(path: path, operation: "find \(entity) with local key \(localKey)", reason: "\(error)")
        }
        guard let (key, row) = rows.first else { return nil }
        let reader = EventStoreRowReader(row: row, table: EventStoreSchema.Object.name, key: key, path: path)
        return ObjectKey(try reader.string(EventStoreSchema.Object.entity, "entity"),
                         try reader.string(EventStoreSchema.Object.globalID, "gid"))
    }

    // MARK: Writing

    func write<R>(_ operation: String, _ body: (WriteTransaction) throws -> R) throws(EventStoreError) -> R {
        do {
            return try engine.write(body)
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw .storage(path: path, operation: operation, reason: "\(error)")
        }
    }

    /// Writes `step` and the state row inside `tx`; `state` may already hold the caller's changes.
    func apply(_ step: EventStoreStep, to state: inout EventStoreState, in tx: WriteTransaction) throws {
        for id in step.integrated {
            try move(id, from: .downloaded, to: .integrated, in: tx)
            state.integrated[id.store] = max(state.integrated[id.store], id.revision)
        }
        for object in step.ledgerObjects.sorted(by: { $0.key < $1.key }) {
            try LedgerRows.write(object, in: tx, path: path)
        }
        // Sorted, so that a unique violation (two keys given one local key) is reported the same way each run.
        for (key, localKey) in step.localKeys.sorted(by: { $0.key < $1.key }) {
            try LedgerRows.upsertObjectRow(key, in: tx) { $0[EventStoreSchema.Object.localKey] = .int(localKey) }
        }
        try writeDataFiles(step.dataFiles, in: tx)
        if let token = step.historyToken { state.historyToken = token }
        if let leechState = step.leechState { state.leechState = leechState }
        try applyBaselines(step, to: &state, in: tx)
        try writeState(state, in: tx)
    }

    func move(_ id: EventID, from old: EventStatus, to new: EventStatus, in tx: WriteTransaction) throws {
        let table = EventStoreSchema.Event.name
        guard let key = try Self.eventKey(id, in: tx.snapshot), var row = try tx.row(in: table, key: key) else {
            throw EventStoreError.unknownEvent(path: path, id: id)
        }
        let found = try Self.status(EventStoreRowReader(row: row, table: table, key: key, path: path))
        guard found == old else { throw EventStoreError.wrongStatus(path: path, id: id, found: found, expected: old) }
        row.values[EventStoreSchema.Event.status] = .int(new.rawValue)
        try tx.update(row, in: table, key: key)
    }

    func writeState(_ state: EventStoreState, in tx: WriteTransaction) throws {
        try tx.update(try Self.row(of: state, path: path), in: EventStoreSchema.State.name, key: EventStoreSchema.stateKey)
    }

    /// The row of `event`; `payload`, when given, is the event's JSON as it arrived (not re-encoded).
    func eventRow(_ event: Event, status: EventStatus, payload given: Data? = nil) throws(EventStoreError) -> Row {
        var event = event
        if status == .localUnexported && event.modelHash == nil { event.modelHash = localModelHash.withLock { $0 } }
        let payload: Data
        if let given {
            payload = given
        } else {
            do { payload = try EventPayloadCoding.encode(event) } catch {
                throw .unencodable(path: path, what: "event \(event.id)", reason: "\(error)")
            }
        }
        return Row([.string(event.id.store.description), .int(event.id.revision), .int(event.meta.globalCount),
                    .int(status.rawValue), .double(event.timestamp.timeIntervalSinceReferenceDate), .bytes(Array(payload))])
    }

    // MARK: Rows

    static func eventKey(_ id: EventID, in snapshot: Snapshot) throws -> Int64? {
        try snapshot.queryKeys(IndexQuery(table: EventStoreSchema.Event.name, index: EventStoreSchema.Event.byID,
                                          equal: [.string(id.store.description), .int(id.revision)], limit: 1)).first
    }

    private static func status(_ reader: EventStoreRowReader) throws(EventStoreError) -> EventStatus {
        let raw = try reader.int(EventStoreSchema.Event.status, "status")
        guard let status = EventStatus(rawValue: raw) else { throw reader.damaged("unknown status \(raw)") }
        return status
    }

    static func state(in snapshot: Snapshot, path: String) throws(EventStoreError) -> EventStoreState {
        typealias S = EventStoreSchema.State
        let row: Row?
        do { row = try snapshot.row(in: S.name, key: EventStoreSchema.stateKey) } catch {
            throw .damaged(path: path, table: S.name, key: EventStoreSchema.stateKey, reason: "\(error)")
        }
        let reader = EventStoreRowReader(row: row ?? [], table: S.name, key: EventStoreSchema.stateKey, path: path)
        guard row != nil else { throw reader.damaged("the state row is missing") }
        let storeText = try reader.string(S.storeID, "storeID")
        guard let storeID = StoreID(canonical: storeText) else { throw reader.damaged("storeID '\(storeText.prefix(64))' is not a store ID") }
        var state = EventStoreState(storeID: storeID)
        let leech = try reader.int(S.leechState, "leechState")
        guard let leechState = LeechState(rawValue: leech) else { throw reader.damaged("unknown leechState \(leech)") }
        state.leechState = leechState
        state.historyToken = try reader.optionalBytes(S.historyToken, "historyToken")
        state.nextRevision = try reader.int(S.nextRevision, "nextRevision")
        state.maxGlobalCount = try reader.int(S.maxGlobalCount, "maxGlobalCount")
        state.integrated = try reader.json(RevisionVector.self, S.integrated, "integrated")
        state.baselineID = try reader.optionalString(S.baselineID, "baselineID")
        state.pendingMergeID = try reader.optionalString(S.pendingMergeID, "pendingMergeID")
        guard state.nextRevision >= 1, state.maxGlobalCount >= 0 else {
            throw reader.damaged("counters nextRevision \(state.nextRevision), maxGlobalCount \(state.maxGlobalCount)")
        }
        return state
    }

    static func row(of state: EventStoreState, path: String) throws(EventStoreError) -> Row {
        let integrated: Data
        do { integrated = try EventPayloadCoding.encode(state.integrated) } catch {
            throw .unencodable(path: path, what: "the integrated vector", reason: "\(error)")
        }
        return Row([.string(state.storeID.description), .int(state.leechState.rawValue),
                    state.historyToken.map { .bytes(Array($0)) } ?? .null, .int(state.nextRevision),
                    .int(state.maxGlobalCount), .bytes(Array(integrated)),
                    state.baselineID.map { .string($0) } ?? .null, state.pendingMergeID.map { .string($0) } ?? .null])
    }
}
