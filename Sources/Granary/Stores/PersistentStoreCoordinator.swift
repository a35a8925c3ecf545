import Foundation

/// Connects a model to the stores that hold its objects, and routes each entity to its store.
///
/// A coordinator is thread-safe; contexts on any queue share one. Entities go to the first attached
/// store whose configuration contains them (a store added with no configuration takes every entity).
///
/// **Saves across stores.** A save that touches several stores takes every involved store's write lock
/// (in a fixed order, so concurrent saves cannot deadlock), checks every conflict and constraint in all
/// of them, and only then commits each store. Each store's part is atomic; if the commit of one store
/// fails on I/O after another committed, the first keeps its part. There is no two-phase commit across
/// store files.
public final class PersistentStoreCoordinator: @unchecked Sendable {
    // @unchecked: `stores` and `statistics` are guarded by `lock`.

    public let managedObjectModel: ManagedObjectModel
    let mapping: StorageMapping
    private let lock = NSLock()
    private var stores: [PersistentStore] = []
    private var statisticsStorage = FetchStatistics()
    let didSaveFeed = SaveFeed()
    /// Records kept for contexts with a nonzero staleness interval; empty otherwise.
    let rowCache = RowCache()
    /// Where `perform(_:)` and `performAndWait(_:)` run their blocks.
    let workQueue = DispatchQueue(label: "granary.coordinator")
    static let workQueueKey = DispatchSpecificKey<ObjectIdentifier>()
    /// Held by a context from its first attempt to write until its save is written, conflict
    /// resolution included, so that saves through this coordinator take turns: a context that resolved
    /// its conflicts is not overtaken again before it writes (Core Data holds its coordinator's lock the
    /// same way). Reads do not take it.
    private let saveLock = NSLock()

    public init(managedObjectModel: ManagedObjectModel) {
        self.managedObjectModel = managedObjectModel
        self.mapping = StorageMapping(model: managedObjectModel)
        workQueue.setSpecific(key: Self.workQueueKey, value: ObjectIdentifier(self))
    }

    /// The attached stores, in the order they were added.
    public var persistentStores: [PersistentStore] { lock.withLock { stores } }

    /// Attaches a store. Durable stores are created if missing.
    /// - Throws: `ContextError.noPersistentStore` for an unknown configuration or a durable store without
    ///   a URL; `.storage(...)` when the engine cannot open it (locked, damaged, written by another model).
    @discardableResult
    public func addPersistentStore(type: PersistentStore.StoreType, configuration: String? = nil, at url: URL? = nil,
                                   options: PersistentStore.Options = .init()) throws -> PersistentStore {
        let store = try PersistentStore(type: type, configurationName: configuration, url: url, options: options,
                                        model: managedObjectModel, mapping: mapping)
        lock.withLock { stores.append(store) }
        return store
    }

    /// Attaches a store that another coordinator already has open, sharing its open engine: the way to
    /// put two coordinators on one store in one process (a second `addPersistentStore(type:at:)` on the
    /// same directory fails, the directory being locked by the first). Both coordinators see each other's
    /// saves as soon as they commit, object IDs are valid in both, and optimistic locking works across
    /// them. The files close when the last coordinator sharing them removes its store.
    /// - Parameters:
    ///   - store: A store attached to another coordinator.
    ///   - configuration: This coordinator's configuration for it; `nil` routes every entity to it.
    /// - Throws: `ContextError.noPersistentStore` when `store` was removed, is already attached to this
    ///   coordinator, or the model has no such configuration; `.storage(...)` when this model's tables
    ///   differ from the store's.
    @discardableResult
    public func addPersistentStore(sharing store: PersistentStore, configuration: String? = nil) throws -> PersistentStore {
        if persistentStores.contains(where: { $0.identifier == store.identifier }) {
            throw ContextError.noPersistentStore("the store \(store.url?.path ?? store.identifier.uuidString) is already attached to this coordinator")
        }
        let shared = try PersistentStore(sharing: store, configurationName: configuration, model: managedObjectModel, mapping: mapping)
        lock.withLock { stores.append(shared) }
        return shared
    }

    /// Explains why no attached store holds an entity or an object, in place of the coordinator's own
    /// generic error.
    ///
    /// A layer that attaches and detaches stores (a container) knows what the coordinator cannot: that
    /// the stack has not started yet, or which configuration was detached from which location. It is
    /// called with the entity's name and, for an object, its ID; return `nil` to keep the coordinator's
    /// error. The error returned is what fetches and saves throw.
    public var missingStoreDiagnosis: (@Sendable (_ entityName: String, _ objectID: ManagedObjectID?) -> (any Error)?)? {
        get { lock.withLock { diagnosis } }
        set { lock.withLock { diagnosis = newValue } }
    }
    private var diagnosis: (@Sendable (String, ManagedObjectID?) -> (any Error)?)?

    /// Detaches a store and closes its files (unless another coordinator shares them). Contexts using
    /// its objects get errors from then on.
    /// - Throws: `ContextError.storage` if closing fails.
    public func remove(_ store: PersistentStore) throws {
        lock.withLock { stores.removeAll { $0 === store } }
        rowCache.forgetAll()
        do { try store.markRemoved() } catch let error as StorageError { throw ContextError.storage(error) }
    }

    /// Puts `copy` where `store` was in the attached stores (so entities keep routing to it) and
    /// detaches `store`.
    /// - Throws: `ContextError.storage` if closing `store` fails (the copy is attached either way).
    func replace(_ store: PersistentStore, with copy: PersistentStore) throws {
        lock.withLock {
            if let i = stores.firstIndex(where: { $0 === store }) { stores[i] = copy } else { stores.append(copy) }
        }
        rowCache.forgetAll()
        do { try store.markRemoved() } catch let error as StorageError { throw ContextError.storage(error) }
    }

    /// The attached store at `url`, if any.
    public func persistentStore(for url: URL) -> PersistentStore? {
        persistentStores.first { $0.url?.standardizedFileURL == url.standardizedFileURL }
    }

    /// Replaces a store's user metadata entries (Core Data's `setMetadata(_:for:)`).
    /// - Throws: `ContextError.storage` if the store cannot be written.
    public func setMetadata(_ userInfo: [String: String], for store: PersistentStore) throws {
        do {
            try store.engine.write { tx in
                var metadata = tx.metadata
                // The model's entries are the store's own; user entries cannot replace them.
                let kept = StoreMetadata.modelKeys.map { ($0, metadata.userInfo[$0]) }
                metadata.userInfo = userInfo
                for (key, value) in kept { metadata.userInfo[key] = value }
                try tx.setMetadata(metadata)
            }
        } catch let error as StorageError { throw ContextError.storage(error) }
    }

    /// Sets (or, with nil, removes) one user metadata entry of a store, leaving the others as they are,
    /// in one commit: for bookkeeping that must not race with other code's entries (a read, then
    /// `setMetadata(_:for:)`, could drop an entry written in between).
    /// - Throws: `ContextError.storage` if the store cannot be written.
    public func setMetadataValue(_ value: String?, forKey key: String, for store: PersistentStore) throws {
        precondition(!StoreMetadata.modelKeys.contains(key), "\(key) is the store's own metadata entry")
        do {
            try store.engine.write { tx in
                var metadata = tx.metadata
                metadata.userInfo[key] = value
                try tx.setMetadata(metadata)
            }
        } catch let error as StorageError { throw ContextError.storage(error) }
    }

    /// How fetches through this coordinator were answered so far.
    public var fetchStatistics: FetchStatistics { lock.withLock { statisticsStorage } }

    func record(_ body: (inout FetchStatistics) throws -> Void) rethrows {
        var local = FetchStatistics()
        try body(&local)
        lock.withLock {
            statisticsStorage.fullScans += local.fullScans
            statisticsStorage.indexScans += local.indexScans
            statisticsStorage.rowsExamined += local.rowsExamined
            if let plan = local.lastFetchPlan { statisticsStorage.lastFetchPlan = plan }
        }
    }

    func store(forEntity name: String) throws -> PersistentStore {
        let attached = persistentStores
        guard let store = attached.first(where: { $0.entityNames.contains(name) }) else {
            if let error = missingStoreDiagnosis?(name, nil) { throw error }
            throw ContextError.noPersistentStore(attached.isEmpty ? "the coordinator has no store attached"
                                                 : "no attached store's configuration holds entity '\(name)'")
        }
        return store
    }

    func store(for id: ManagedObjectID) throws -> PersistentStore {
        guard let uuid = id.persistentStoreIdentifier else { return try store(forEntity: id.entityName) }
        guard let store = persistentStores.first(where: { $0.identifier == uuid }) else {
            if let error = missingStoreDiagnosis?(id.entityName, id) { throw error }
            throw ContextError.noPersistentStore("the store \(uuid) of \(id) is not attached (it was removed)")
        }
        return store
    }

    func record(for id: ManagedObjectID) throws -> ObjectRecord? {
        try store(for: id).record(for: id)
    }

    /// The version of an object's row in its store now, or `nil` when the row is gone.
    func rowVersion(of id: ManagedObjectID) throws -> Int64? {
        try store(for: id).rowVersion(of: id)
    }

    /// The current records of several objects of one store, read from one snapshot (nil for a row
    /// that is gone), in the order of `ids`.
    func records(for ids: [ManagedObjectID]) throws -> [ObjectRecord?] {
        guard let first = ids.first else { return [] }
        return try store(for: first).records(for: ids)
    }

    /// Runs a fetch on every store that holds the entity (or its sub-entities) and concatenates.
    func fetch(_ fetch: StoreFetch) throws -> [ObjectRecord] {
        var records: [ObjectRecord] = []
        try record { stats in
            for store in try stores(for: fetch.entity) {
                let fetched = try store.fetch(fetch, statistics: &stats)
                // Adopting the first store's array: appending to an empty one copies every record.
                if records.isEmpty { records = fetched } else { records += fetched }
            }
        }
        return records
    }

    func count(_ fetch: StoreFetch) throws -> Int {
        var total = 0
        try record { stats in
            for store in try stores(for: fetch.entity) { total += try store.count(fetch, statistics: &stats) }
        }
        return total
    }

    /// Runs a grouped or aggregate fetch on the store that holds the entity.
    func aggregate(_ fetch: StoreFetch, _ query: AggregateQuery) throws -> [[String: Any]] {
        var results: [[String: Any]] = []
        try record { stats in results = try store(forEntity: fetch.entity.name).aggregate(fetch, query, statistics: &stats) }
        return results
    }

    func plan(_ fetch: StoreFetch) throws -> FetchPlan {
        try store(forEntity: fetch.entity.name).plan(fetch)
    }

    /// Every attached store whose configuration holds the entity: usually one, several when objects
    /// were assigned to stores sharing an entity (`ManagedObjectContext.assign(_:to:)`).
    private func stores(for entity: EntityDescription) throws -> [PersistentStore] {
        let primary = try store(forEntity: entity.name)
        let others = persistentStores.filter { $0 !== primary && $0.entityNames.contains(entity.name) }
        return [primary] + others
    }

    /// Whether more than one attached store holds the entity: their answers are then concatenated, so
    /// sorting and windows are applied after, in memory.
    func spansSeveralStores(_ entity: EntityDescription) -> Bool {
        persistentStores.count { $0.entityNames.contains(entity.name) } > 1
    }

    // MARK: Saving

    func whileSaving<T>(_ body: () throws -> T) rethrows -> T {
        saveLock.lock()
        defer { saveLock.unlock() }
        return try body()
    }

    /// Writes a context's changes. Inserted objects get permanent IDs (returned as a mapping); rows the
    /// store wrote differently from the context, or wrote for it, come back as records (see `SaveOutcome`).
    /// - Throws: `ConflictsFound` when optimistic locking fails (nothing is written); `ContextError`
    ///   for constraint violations and store errors.
    func save(_ changes: StoreChanges) throws -> SaveOutcome {
        var byStore: [ObjectIdentifier: (store: PersistentStore, changes: StoreChanges)] = [:]
        // Saves are runs of one entity: the store of the last temporary ID's entity is kept.
        var lastEntity: (name: String, key: ObjectIdentifier)?
        func bucket(_ id: ManagedObjectID) throws -> ObjectIdentifier {
            if id.isTemporaryID, let lastEntity, lastEntity.name == id.entityName { return lastEntity.key }
            let store = try id.isTemporaryID ? self.store(forEntity: id.entityName) : self.store(for: id)
            let key = ObjectIdentifier(store)
            if byStore[key] == nil { byStore[key] = (store, StoreChanges()) }
            if id.isTemporaryID { lastEntity = (id.entityName, key) }
            return key
        }
        for insert in changes.inserts { byStore[try bucket(insert.id)]!.changes.inserts.append(insert) }
        for update in changes.updates { byStore[try bucket(update.id)]!.changes.updates.append(update) }
        for delete in changes.deletes { byStore[try bucket(delete.id)]!.changes.deletes.append(delete) }
        let work = byStore.values.sorted { $0.store.identifier.uuidString < $1.store.identifier.uuidString }
        for item in work { try item.store.checkAttached() }

        var outcome = SaveOutcome()
        // Nest the write transactions: each store applies (and checks) its changes, then the next store
        // does, and only when all have passed do they commit, innermost first.
        func writeStores(_ index: Int) throws {
            guard index < work.count else { return }
            let (store, storeChanges) = work[index]
            do {
                try store.engine.write { tx in
                    let history = HistoryRecorder.start(store, in: tx)
                    try Self.apply(storeChanges, to: store, in: tx, outcome: &outcome)
                    try history?.record(in: tx)
                    try writeStores(index + 1)
                }
            } catch let error as StorageError {
                throw Self.translate(error, store: store)
            }
        }
        try writeStores(0)
        if !rowCache.isEmpty {
            rowCache.forget(changes.updates.lazy.map(\.id))
            rowCache.forget(changes.deletes.lazy.map(\.id))
        }
        BackgroundRelease.release((byStore, work), count: changes.inserts.count + changes.updates.count)
        return outcome
    }

    /// One row a save writes.
    private struct RowWrite {
        var row: Row
        /// By identifier: a name is looked up by the engine on every write.
        var table: TableID
        var key: Int64
        var isInsert: Bool

        func write(in tx: WriteTransaction) throws {
            if isInsert { try tx.insert(row, into: table, key: key) } else { try tx.update(row, in: table, key: key) }
        }
    }

    /// Writes rows in rounds, a write that breaks a unique index waiting for the others: the save's end
    /// state passed the uniqueness check, but the engine checks each write as it comes, so a row taking
    /// the value another row of the save gives up (a chain of renames, an insert of a renamed object's
    /// old value) must come after it. A round that writes nothing leaves a cycle (two rows swapping
    /// values): one of its rows is taken out and written back last, under its own key, which the engine
    /// reports as the update it is. Only inserts left blocked fail, with the first violation.
    private static func writeInRounds(_ writes: [RowWrite], in tx: WriteTransaction) throws {
        var pending = writes
        while !pending.isEmpty {
            var deferred: [RowWrite] = []
            var first: StorageError?
            for w in pending {
                do {
                    try w.write(in: tx)
                } catch let error as StorageError {
                    guard case .uniqueViolation = error else { throw error }
                    deferred.append(w)
                    first = first ?? error
                }
            }
            if deferred.count == pending.count, let first {
                guard let cycle = deferred.firstIndex(where: { !$0.isInsert }) else { throw first }
                try tx.delete(from: deferred[cycle].table, key: deferred[cycle].key)
                deferred[cycle].isInsert = true
                deferred.append(deferred.remove(at: cycle))
            }
            pending = deferred
        }
    }

    static func translate(_ error: StorageError, store: PersistentStore) -> Error {
        if case .uniqueViolation(let table, let index, let value) = error {
            let entity = store.mapping.table(named: table)?.entityNames.first ?? table
            let properties = store.mapping.table(named: table)?.schema.indexes.first { $0.name == index }?.columns.map(\.name) ?? [index]
            return ContextError.constraintViolation(entity: entity, properties: properties, value: value)
        }
        return ContextError.storage(error)
    }

    /// Throws the uniqueness conflicts of the rows a save writes, if there are any; for a big save,
    /// returns the check for the caller to run if a write fails (see `DeferredUniquenessCheck`), having
    /// done nothing else: listing a big save's rows for the check was itself a visible cost.
    private static func checkUniqueness(_ changes: StoreChanges, inserts: [(ref: RowReference, table: String, row: Row)],
                                        updates: [(ref: RowReference, table: String, row: Row, before: Row)],
                                        store: PersistentStore, snapshot: Snapshot) throws -> DeferredUniquenessCheck? {
        // Most models have no uniqueness constraint: then nothing here may cost a pass over the rows.
        guard store.mapping.tables.contains(where: { $0.schema.indexes.contains(where: \.isUnique) }) else { return nil }
        let check = {
            try uniquenessConflicts(changes, inserts: inserts, updates: updates, store: store, snapshot: snapshot)
        }
        if inserts.count + updates.count >= DeferredUniquenessCheck.threshold { return DeferredUniquenessCheck(run: check) }
        try check()
        return nil
    }

    /// Throws `ConstraintConflictsFound` with every uniqueness conflict of the rows a save writes.
    private static func uniquenessConflicts(_ changes: StoreChanges, inserts: [(ref: RowReference, table: String, row: Row)],
                                            updates: [(ref: RowReference, table: String, row: Row, before: Row)],
                                            store: PersistentStore, snapshot: Snapshot) throws {
        var constrained: [String: Bool] = [:]
        func isConstrained(_ table: String) -> Bool {
            if let known = constrained[table] { return known }
            let answer = store.mapping.table(named: table)?.schema.indexes.contains(where: \.isUnique) ?? false
            constrained[table] = answer
            return answer
        }
        var written: [UniquenessCheck.Written] = []
        // By index: zipping would copy every row (and retain its values) before the table is checked.
        for k in inserts.indices where isConstrained(inserts[k].table) {
            let p = inserts[k]
            written.append(.init(id: changes.inserts[k].id, table: p.table, key: p.ref.key, row: p.row, before: nil))
        }
        for k in updates.indices where isConstrained(updates[k].table) {
            let p = updates[k]
            written.append(.init(id: changes.updates[k].id, table: p.table, key: p.ref.key, row: p.row, before: p.before))
        }
        guard !written.isEmpty else { return }
        var removed: [String: Set<Int64>] = [:]
        for delete in changes.deletes {
            guard let key = delete.id.primaryKey, let table = try? store.entityMapping(delete.entity.name).tableName,
                isConstrained(table) else { continue }
            removed[table, default: []].insert(key)
        }
        let found = try UniquenessCheck(store: store, snapshot: snapshot, model: store.model).conflicts(written, removed: removed)
        if !found.isEmpty { throw ConstraintConflictsFound(conflicts: found) }
    }

    /// Whether every reference in `inserts` names a row the save inserts: a key among `newKeys`, the
    /// keys the save handed out in each table. Anything else is an existing row (or a row that is not
    /// there), which the graph pass must see.
    private static func linksOnlyRowsItInserts(_ inserts: [(ref: RowReference, table: String, row: Row)],
                                               newKeys: [TableID: Range<Int64>]) -> Bool {
        var last: (table: TableID, keys: Range<Int64>)?
        func isNew(_ ref: RowReference) -> Bool {
            if let last, last.table == ref.table { return last.keys.contains(ref.key) }
            guard let keys = newKeys[ref.table] else { return false }
            last = (ref.table, keys)
            return keys.contains(ref.key)
        }
        for p in inserts {
            for value in p.row.values {
                switch value {
                case .reference(let ref):
                    if !isNew(ref) { return false }
                case .references(let refs):
                    for ref in refs where !isNew(ref) { return false }
                default:
                    continue
                }
            }
        }
        return true
    }

    private static func apply(_ changes: StoreChanges, to store: PersistentStore, in tx: WriteTransaction,
                              outcome: inout SaveOutcome) throws {
        let snapshot = tx.snapshot
        var tables = TableLocator(store: store, snapshot: snapshot)
        func location(_ entity: EntityDescription) throws -> (name: String, id: TableID) { try tables.location(entity) }
        // Optimistic locking: every updated or deleted row must still be at the version the context read.
        var conflicts: [MergeConflict] = []
        var storeRecords: [ManagedObjectID: ObjectRecord] = [:]
        var before: [ManagedObjectID: Row] = [:]
        before.reserveCapacity(changes.updates.count + changes.deletes.count)
        func check(_ id: ManagedObjectID, _ entity: EntityDescription, expected: Int64) throws {
            guard let key = id.primaryKey else { return }
            let (table, tableID) = try location(entity)
            let row = try snapshot.row(in: table, key: key)
            var current: Int64?
            if let row, case .int(let v) = row[StorageMapping.versionColumn] { current = v }
            if current != expected {
                conflicts.append(MergeConflict(objectID: id, expectedVersion: expected, storeVersion: current))
                if let row, let mapping = store.tableMapping(for: tableID, in: snapshot) {
                    storeRecords[id] = try store.record(from: row, key: key, table: mapping, snapshot: snapshot)
                }
            } else if let row {
                before[id] = row
            }
        }
        for u in changes.updates { try check(u.id, u.entity, expected: u.expectedVersion) }
        for d in changes.deletes { try check(d.id, d.entity, expected: d.expectedVersion) }
        if !conflicts.isEmpty { throw ConflictsFound(conflicts: conflicts, storeRecords: storeRecords) }

        // Permanent keys for inserted objects first, so rows can reference each other. Each table's
        // new rows take the keys from its next key on, in order: the keys handed out so far.
        var newKeys: [TableID: Range<Int64>] = [:]
        outcome.ids.reserveCapacity(changes.inserts.count)
        // Inserts come in runs of one table: the run's keys are counted here and filed when it ends.
        var run: (table: TableID, keys: Range<Int64>)?
        var scope: (entity: EntityDescription, scope: ManagedObjectID.Scope)?
        for insert in changes.inserts {
            if insert.id.primaryKey != nil && insert.id.persistentStoreIdentifier == store.identifier {
                // Obtained with obtainPermanentIDs: its key is reserved, and the object keeps its ID.
                outcome.ids[insert.id] = insert.id
                continue
            }
            let (table, tableID) = try location(insert.entity)
            if run?.table != tableID {
                if let run { newKeys[run.table] = run.keys }
                let keys = try newKeys[tableID] ?? { let first = try snapshot.nextKey(in: table); return first..<first }()
                run = (tableID, keys)
            }
            let key = run!.keys.upperBound
            run!.keys = run!.keys.lowerBound..<key + 1
            if scope?.entity != insert.entity { scope = (insert.entity, store.idScope(for: insert.entity)) }
            outcome.ids[insert.id] = ManagedObjectID(scope: scope!.scope, key: key)
        }
        if let run { newKeys[run.table] = run.keys }
        // The rows as the context wrote them.
        let rows = try SaveRows.build(changes, store: store, snapshot: snapshot, ids: outcome.ids, before: before)
        let inserts = rows.inserts, updates = rows.updates
        var linksChange = rows.linksChange || !changes.deletes.isEmpty
        // A big save's uniqueness check runs only if a write fails, and then before that failure is
        // thrown, so the save fails exactly as it would have with the check first.
        let deferredCheck = try checkUniqueness(changes, inserts: inserts, updates: updates, store: store, snapshot: snapshot)
        func writeRows() throws {
            if linksChange && changes.updates.isEmpty && changes.deletes.isEmpty,
                Self.linksOnlyRowsItInserts(inserts, newKeys: newKeys)
            {
                // New rows linked to new rows only: both ends come from the one context, which keeps
                // inverses in step as it sets them, and no other save can have changed a row that did not
                // exist. The graph pass would find nothing to finish (it was a quarter of a big insert).
                linksChange = false
            }
            // With unique indexes, the order of writes matters (see `writeInRounds`); without, the save's own.
            let hasUniqueIndexes = store.mapping.tables.contains { $0.schema.indexes.contains(where: \.isUnique) }
            guard linksChange else {
                // No relationship set, changed or deleted: nothing to finish at the other ends.
                try writeContextRows(hasUniqueIndexes: hasUniqueIndexes)
                return
            }

            // Then the links finished against the store's current rows.
            var graph = GraphRepair(store: store, snapshot: snapshot, capacity: inserts.count + updates.count)
            for p in inserts { try graph.addInsert(p.row, ref: p.ref) }
            for p in updates { try graph.addUpdate(p.row, before: p.before, ref: p.ref) }
            if changes.deletes.isEmpty && inserts.count + updates.count >= PendingGraphRepair.threshold {
                try writeBesideRepair(PendingGraphRepair(graph), hasUniqueIndexes: hasUniqueIndexes)
                return
            }
            for delete in changes.deletes {
                guard let row = before[delete.id] else { continue }
                try graph.addDelete(before: row, ref: RowReference(table: try location(delete.entity).id, key: delete.id.primaryKey!))
            }
            try graph.run()

            // Deleted rows go first: a row the save inserts or updates may take a unique value that a row it
            // deletes still holds (the uniqueness check already counted that row as gone), and the engine's
            // unique index checks each write as it comes.
            for ref in graph.deleted {
                guard let table = snapshot.tableName(for: ref.table) else { continue }
                try tx.delete(from: table, key: ref.key)
            }
            var touched: [(RowReference, TableMapping)] = []
            var deferredUpdates: [RowWrite] = [], deferredInserts: [RowWrite] = []
            func write(_ w: RowWrite) throws {
                if !hasUniqueIndexes {
                    try w.write(in: tx)
                } else if w.isInsert {
                    deferredInserts.append(w)
                } else {
                    deferredUpdates.append(w)
                }
            }
            for (k, entry) in graph.entries.enumerated() where !entry.isRemoved {
                if entry.origin == .repaired && !entry.touched { continue }
                guard let w = rowWrite(of: entry, at: k) else { continue }
                try write(w)
                if entry.touched { touched.append((entry.ref, try graph.tableMapping(entry.ref.table))) }
            }
            try writeInRounds(deferredUpdates, in: tx)
            try writeInRounds(deferredInserts, in: tx)
            for (ref, entityName) in graph.cascaded {
                outcome.cascadedDeletes.append(ManagedObjectID(entityName: entityName, store: store.identifier, key: ref.key))
            }
            try recordTouched(touched)
        }
        /// What the store holds now for rows that differ from what the context wrote (or did not write).
        func recordTouched(_ touched: [(RowReference, TableMapping)]) throws {
            guard !touched.isEmpty else { return }
            let after = tx.snapshot
            for (ref, table) in touched {
                guard let row = try after.row(in: table.name, key: ref.key) else { continue }
                let record = try store.record(from: row, key: ref.key, table: table, snapshot: after)
                outcome.touched[record.id] = record
            }
        }
        /// The save's rows as the context wrote them. With unique indexes, updates go first and each set
        /// in rounds (see `writeInRounds`); without, the save's own order.
        func writeContextRows(hasUniqueIndexes: Bool) throws {
            if hasUniqueIndexes {
                try writeInRounds(updates.map { RowWrite(row: $0.row, table: $0.ref.table, key: $0.ref.key, isInsert: false) }, in: tx)
                try writeInRounds(inserts.map { RowWrite(row: $0.row, table: $0.ref.table, key: $0.ref.key, isInsert: true) }, in: tx)
                return
            }
            for p in inserts { try tx.insert(p.row, into: p.ref.table, key: p.ref.key) }
            for p in updates { try tx.update(p.row, in: p.ref.table, key: p.ref.key) }
        }
        /// The write of one row of the graph pass's working set, which holds the save's rows first, in the
        /// order they were added (inserts, then updates), then the rows the pass loaded. A loaded row the
        /// pass changed gets the next row version; nil for one without a version.
        func rowWrite(of entry: GraphRepair.Entry, at k: Int) -> RowWrite? {
            switch entry.origin {
            case .inserted:
                let p = inserts[k]
                assert(p.ref == entry.ref, "the graph pass reordered the save's rows")
                return RowWrite(row: entry.row, table: p.ref.table, key: p.ref.key, isInsert: true)
            case .updated:
                let p = updates[k - inserts.count]
                assert(p.ref == entry.ref, "the graph pass reordered the save's rows")
                return RowWrite(row: entry.row, table: p.ref.table, key: p.ref.key, isInsert: false)
            case .repaired:
                var row = entry.row
                guard case .int(let version) = row[StorageMapping.versionColumn] else { return nil }
                row[StorageMapping.versionColumn] = .int(version + 1)
                return RowWrite(row: row, table: entry.ref.table, key: entry.ref.key, isInsert: false)
            }
        }
        /// A big save that deletes nothing: its rows are written as the context wrote them while the graph
        /// pass runs on another thread (see `PendingGraphRepair`); then what the pass changed is written.
        func writeBesideRepair(_ pending: PendingGraphRepair, hasUniqueIndexes: Bool) throws {
            do {
                try writeContextRows(hasUniqueIndexes: hasUniqueIndexes)
            } catch {
                // The pass reads only the snapshot; it is left to end on its own.
                _ = try? pending.finish()
                throw error
            }
            var graph = try pending.finish()
            var touched: [(RowReference, TableMapping)] = []
            var rewrites: [RowWrite] = []
            for (k, entry) in graph.entries.enumerated() where entry.touched {
                // Every row is in the store by now: what the pass changed is an update of it.
                guard var w = rowWrite(of: entry, at: k) else { continue }
                w.isInsert = false
                rewrites.append(w)
                touched.append((entry.ref, try graph.tableMapping(entry.ref.table)))
            }
            // Updates only: without unique indexes, one round in the given order.
            try writeInRounds(rewrites, in: tx)
            try recordTouched(touched)
            BackgroundRelease.release(graph, count: graph.entries.count)
        }
        do {
            try writeRows()
        } catch {
            try deferredCheck?.run()
            throw error
        }
        BackgroundRelease.release((rows, before), count: inserts.count + updates.count)
    }
}

/// What a save wrote, for the saving context to bring its objects in line.
struct SaveOutcome {
    /// Permanent IDs of inserted objects, by temporary ID.
    var ids: [ManagedObjectID: ManagedObjectID] = [:]
    /// Rows whose stored values differ from what the context wrote, or that it did not write at all:
    /// the other ends of relationships finished by `GraphRepair`.
    var touched: [ManagedObjectID: ObjectRecord] = [:]
    /// Objects deleted by a cascade over relationships the context did not know of.
    var cascadedDeletes: [ManagedObjectID] = []
}
