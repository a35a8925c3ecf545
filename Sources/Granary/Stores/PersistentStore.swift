import Foundation
import Synchronization

/// One store attached to a coordinator: an engine (in memory or in a directory) holding the tables of
/// the entities its configuration names.
public final class PersistentStore: @unchecked Sendable {
    // @unchecked: all mutable state (`isRemoved`) is guarded by `lock`; the engine is thread-safe.

    /// Where a store keeps its data (Core Data's store types, without SQLite).
    public enum StoreType: String, Sendable, Hashable {
        /// Nothing on disk; for tests, caches and scratch data.
        case inMemory
        /// A `Name.granary` directory with a write-ahead log and snapshots.
        case durable
    }

    /// How the store's engine is opened, and how a store written by another model version is migrated.
    public struct Options: Sendable, Hashable {
        public var durability: Engine.Durability
        public var isReadOnly: Bool
        /// Lightweight migration is on by default, as with Core Data's automatic-migration options.
        public var migration: MigrationOptions
        /// What opening does with a damaged store: throw (the default), or keep the commits before the
        /// damage (see `Engine.Recovery`; what was given up is in the store's `recoveryReport`).
        public var recovery: Engine.Recovery
        /// Whether every save into the store records a transaction in its persistent history, in the
        /// same commit as the save (Core Data's `NSPersistentHistoryTrackingKey`; see
        /// <doc:PersistentHistory>). Off by default: a store opened without it records nothing and pays
        /// nothing, and saves made while it was off are absent from the history.
        public var persistentHistoryTracking: Bool
        public init(durability: Engine.Durability = .full, readOnly: Bool = false, migration: MigrationOptions = MigrationOptions(),
                    recovery: Engine.Recovery = .strict, persistentHistoryTracking: Bool = false) {
            self.durability = durability
            self.isReadOnly = readOnly
            self.migration = migration
            self.recovery = recovery
            self.persistentHistoryTracking = persistentHistoryTracking
        }
    }

    public let type: StoreType
    /// The options the store was opened with, so that code that removes it (a reset, a replacement)
    /// can add it back the same way. A store shared from another coordinator has its opener's.
    public let options: Options
    public let configurationName: String?
    public let url: URL?
    /// The store's UUID: the host part of its objects' URIs.
    public let identifier: UUID
    let engine: Engine
    /// Counts the attached stores that use `engine`, which may belong to several coordinators.
    private let share: EngineShare
    let mapping: StorageMapping
    let model: ManagedObjectModel
    /// Names of the entities routed to this store.
    let entityNames: Set<String>
    /// How to decode each entity's rows, by table name and entity code: built once, used per row.
    let decoders: [String: [EntityCodec]]
    /// Fetch schemas built so far (see `fetchSchema(for:includesSubentities:)`).
    let fetchSchemas = Mutex<[FetchSchemaKey: FetchSchema]>([:])
    /// What adding the store migrated (or recreated), if its model differed.
    public let migrationReport: MigrationReport?
    /// What opening the store's files recovered: a torn tail cut off, or (with
    /// `Options.recovery = .keepConsistentPrefix`) the commits given up to damage.
    public var recoveryReport: RecoveryReport { engine.recoveryReport }
    /// The same, by entity, for encoding.
    let codecs: [EntityDescription: EntityCodec]
    /// The table of each entity's rows, for encoding references (fixed while the store is open).
    private(set) var tableIDs: [String: TableID] = [:]
    /// The hierarchy stored in each table, by table ID, for decoding references.
    private(set) var tablesByID: [TableID: TableMapping] = [:]
    /// Whether saves into this store record persistent history (`Options.persistentHistoryTracking`);
    /// a store shared by several coordinators records for all of them, as its opener asked.
    public let tracksPersistentHistory: Bool
    private let lock = NSLock()
    private var removed = false

    /// - Parameter opened: an engine already open on the store's content (a store copied into memory),
    ///   used instead of opening `url`.
    init(type: StoreType, configurationName: String?, url: URL?, options: Options, model: ManagedObjectModel,
         mapping: StorageMapping, opened: Engine? = nil) throws {
        self.type = type
        self.options = options
        self.configurationName = configurationName
        self.url = url
        self.mapping = mapping
        self.model = model
        self.entityNames = try Self.entityNames(of: model, configuration: configurationName)
        let location: Engine.Location
        switch type {
        case .inMemory: location = .inMemory
        case .durable:
            guard let url else { throw ContextError.noPersistentStore("a durable store needs a URL") }
            location = .directory(url)
        }
        do {
            engine = try opened ?? Engine.open(location, options: .init(durability: options.durability, readOnly: options.isReadOnly,
                                                                       recovery: options.recovery))
            share = EngineShare(engine)
            migrationReport = try Self.migrateIfNeeded(engine, model: model, options: options, name: url?.path ?? "in memory")
            identifier = engine.metadata.storeUUID
            (decoders, codecs) = Self.codecs(model: model, mapping: mapping, store: identifier)
            try Self.prepareTables(engine, schemas: mapping.tableSchemas(forConfiguration: configurationName), model: model,
                                   readOnly: options.isReadOnly)
            tracksPersistentHistory = options.persistentHistoryTracking
            if tracksPersistentHistory && !options.isReadOnly { try HistoryTable.createIfMissing(in: engine) }
        } catch let error as StorageError {
            throw ContextError.storage(error)
        }
        locateTables()
    }

    /// A second attachment of an open store, for another coordinator: same engine, same identifier (so
    /// object IDs are valid in both), its own configuration.
    init(sharing other: PersistentStore, configurationName: String?, model: ManagedObjectModel, mapping: StorageMapping) throws {
        self.type = other.type
        self.options = other.options
        self.configurationName = configurationName
        self.url = other.url
        self.mapping = mapping
        self.model = model
        self.entityNames = try Self.entityNames(of: model, configuration: configurationName)
        self.engine = other.engine
        self.identifier = other.identifier
        (decoders, codecs) = Self.codecs(model: model, mapping: mapping, store: other.identifier)
        self.migrationReport = nil
        self.tracksPersistentHistory = other.tracksPersistentHistory
        try other.checkAttached()
        try other.share.retain(describing: other)
        // Every property is set from here, so a failure below runs deinit, which gives the engine back.
        self.share = other.share
        do {
            try Self.prepareTables(engine, schemas: mapping.tableSchemas(forConfiguration: configurationName), model: model,
                                   readOnly: engine.options.isReadOnly)
        } catch let error as StorageError {
            throw ContextError.storage(error)
        }
        locateTables()
    }

    private static func codecs(model: ManagedObjectModel, mapping: StorageMapping,
                               store: UUID) -> ([String: [EntityCodec]], [EntityDescription: EntityCodec]) {
        var decoders: [String: [EntityCodec]] = [:]
        var codecs: [EntityDescription: EntityCodec] = [:]
        for table in mapping.tables {
            decoders[table.name] = table.entityNames.compactMap { name in
                guard let entity = model.entity(named: name), let entityMapping = mapping.entity(named: name) else { return nil }
                let codec = EntityCodec(entity: entity, mapping: entityMapping, store: store)
                codecs[entity] = codec
                return codec
            }
        }
        return (decoders, codecs)
    }

    /// Notes the table IDs of this store's entities once its tables exist.
    private func locateTables() {
        let snapshot = engine.read()
        for name in entityNames {
            if let table = mapping.entity(named: name)?.tableName, let id = try? snapshot.tableID(of: table) {
                tableIDs[name] = id
                tablesByID[id] = mapping.table(named: table)
            }
        }
    }

    deinit {
        // A store dropped without `remove` still gives its engine back, so the last user closes it.
        if !removed { try? share.release() }
    }

    private static func entityNames(of model: ManagedObjectModel, configuration: String?) throws -> Set<String> {
        guard let entities = model.entities(forConfiguration: configuration) else {
            throw ContextError.noPersistentStore("the model has no configuration named '\(configuration ?? "")'")
        }
        return Set(entities.map(\.name))
    }

    static let modelHashKey = "GranaryModelVersionHash"

    /// Brings a store written by another model to `model` before its tables are checked, as
    /// `options.migration` says.
    private static func migrateIfNeeded(_ engine: Engine, model: ManagedObjectModel, options: Options, name: String) throws -> MigrationReport? {
        let migrator = StoreMigrator(model: model, options: options.migration)
        do {
            if !options.migration.shouldMigrateStoreAutomatically {
                let plan = try migrator.plan(for: engine.metadata, store: name)
                guard plan.isNeeded else { return nil }
                throw MigrationError.incompatibleModel(store: name, differences: plan.changes.flatMap { $0.map(\.description) })
            }
            return try migrator.migrate(engine, store: name)
        } catch let error as MigrationError {
            guard options.migration.destroyAndRecreateOnIncompatibleModel, !options.isReadOnly else { throw error }
            return try migrator.recreate(engine, reason: error.description)
        }
    }

    /// Creates missing tables and records the model's version hash. A table whose schema differs from
    /// the model's is a model mismatch: migration (a later layer) handles it; here it is an error.
    private static func prepareTables(_ engine: Engine, schemas: [TableSchema], model: ManagedObjectModel, readOnly: Bool) throws {
        let snapshot = engine.read()
        for schema in schemas where snapshot.tableNames.contains(schema.name) {
            let existing = try snapshot.schema(of: schema.name)
            if existing != schema {
                throw StorageError.invalidArgument(
                    "the store's table '\(schema.name)' was written with a different model (store model hash \(snapshot.metadata.userInfo[modelHashKey] ?? "unknown"), this model \(model.versionHash)); migrate the store first")
            }
        }
        let missing = schemas.filter { !snapshot.tableNames.contains($0.name) }
        // A store written before stores recorded their model gets the record on its next open, so its
        // next migration can start from it.
        let isRecorded = snapshot.metadata.userInfo[modelHashKey] == model.versionHash
            && snapshot.metadata.userInfo[StoredModel.metadataKey] != nil
        if readOnly || (missing.isEmpty && isRecorded) { return }
        try engine.write { tx in
            for schema in missing { try tx.createTable(schema) }
            var metadata = tx.metadata
            metadata.record(model)
            if let version = model.versionIdentifier { metadata.schemaVersion = version }
            try tx.setMetadata(metadata)
        }
    }

    /// The store's metadata (identity, schema version, user entries).
    public var metadata: StoreMetadata { engine.metadata }

    var isRemoved: Bool { lock.withLock { removed } }

    func markRemoved() throws {
        let wasRemoved = lock.withLock { () -> Bool in
            defer { removed = true }
            return removed
        }
        if !wasRemoved { try share.release() }
    }

    func checkAttached() throws {
        if isRemoved { throw ContextError.noPersistentStore("the store \(url?.path ?? identifier.uuidString) was removed from its coordinator") }
    }
}

/// An open engine shared by the stores attached to it (one per coordinator that uses it): the engine's
/// directory lock admits one opener per process, so two coordinators on one store must share one
/// engine. The last store to go closes it.
final class EngineShare: Sendable {
    let engine: Engine
    private let users = Mutex(1)

    init(_ engine: Engine) { self.engine = engine }

    /// - Throws: `ContextError.noPersistentStore` when every user has gone and the engine is closed.
    func retain(describing store: PersistentStore) throws {
        let isOpen = users.withLock { count -> Bool in
            guard count > 0 else { return false }
            count += 1
            return true
        }
        if !isOpen {
            throw ContextError.noPersistentStore("the store \(store.url?.path ?? store.identifier.uuidString) is closed and cannot be shared")
        }
    }

    /// Closes the engine when the last user goes.
    /// - Throws: `ContextError.storage` when closing fails.
    func release() throws {
        let isLast = users.withLock { count -> Bool in
            count -= 1
            return count == 0
        }
        guard isLast else { return }
        do { try engine.close() } catch let error as StorageError { throw ContextError.storage(error) }
    }
}
