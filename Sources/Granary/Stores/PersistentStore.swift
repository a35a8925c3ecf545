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

    /// How the store's engine is opened.
    public struct Options: Sendable, Hashable {
        public var durability: Engine.Durability
        public var isReadOnly: Bool
        public init(durability: Engine.Durability = .full, readOnly: Bool = false) {
            self.durability = durability
            self.isReadOnly = readOnly
        }
    }

    public let type: StoreType
    public let configurationName: String?
    public let url: URL?
    /// The store's UUID: the host part of its objects' URIs.
    public let identifier: UUID
    let engine: Engine
    let mapping: StorageMapping
    let model: ManagedObjectModel
    /// Names of the entities routed to this store.
    let entityNames: Set<String>
    /// How to decode each entity's rows, by table name and entity code: built once, used per row.
    let decoders: [String: [EntityCodec]]
    /// Fetch schemas built so far (see `fetchSchema(for:includesSubentities:)`).
    let fetchSchemas = Mutex<[FetchSchemaKey: FetchSchema]>([:])
    /// The same, by entity, for encoding.
    let codecs: [EntityDescription: EntityCodec]
    /// The table of each entity's rows, for encoding references (fixed while the store is open).
    private(set) var tableIDs: [String: TableID] = [:]
    /// The hierarchy stored in each table, by table ID, for decoding references.
    private(set) var tablesByID: [TableID: TableMapping] = [:]
    private let lock = NSLock()
    private var removed = false

    init(type: StoreType, configurationName: String?, url: URL?, options: Options, model: ManagedObjectModel,
         mapping: StorageMapping) throws {
        self.type = type
        self.configurationName = configurationName
        self.url = url
        self.mapping = mapping
        self.model = model
        guard let entities = model.entities(forConfiguration: configurationName) else {
            throw ContextError.noPersistentStore("the model has no configuration named '\(configurationName ?? "")'")
        }
        self.entityNames = Set(entities.map(\.name))
        var decoders: [String: [EntityCodec]] = [:]
        var codecs: [EntityDescription: EntityCodec] = [:]
        for table in mapping.tables {
            decoders[table.name] = table.entityNames.compactMap { name in
                guard let entity = model.entity(named: name), let entityMapping = mapping.entity(named: name) else { return nil }
                let codec = EntityCodec(entity: entity, mapping: entityMapping)
                codecs[entity] = codec
                return codec
            }
        }
        self.decoders = decoders
        self.codecs = codecs
        let location: Engine.Location
        switch type {
        case .inMemory: location = .inMemory
        case .durable:
            guard let url else { throw ContextError.noPersistentStore("a durable store needs a URL") }
            location = .directory(url)
        }
        do {
            engine = try Engine.open(location, options: .init(durability: options.durability, readOnly: options.isReadOnly))
            identifier = engine.metadata.storeUUID
            try Self.prepareTables(engine, schemas: mapping.tableSchemas(forConfiguration: configurationName), model: model,
                                   readOnly: options.isReadOnly)
            let snapshot = engine.read()
            for entity in entities {
                if let table = mapping.entity(named: entity.name)?.tableName, let id = try? snapshot.tableID(of: table) {
                    tableIDs[entity.name] = id
                    tablesByID[id] = mapping.table(named: table)
                }
            }
        } catch let error as StorageError {
            throw ContextError.storage(error)
        }
    }

    static let modelHashKey = "GranaryModelVersionHash"

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
        if readOnly || (missing.isEmpty && snapshot.metadata.userInfo[modelHashKey] == model.versionHash) { return }
        try engine.write { tx in
            for schema in missing { try tx.createTable(schema) }
            var metadata = tx.metadata
            metadata.userInfo[modelHashKey] = model.versionHash
            if let version = model.versionIdentifier { metadata.schemaVersion = version }
            try tx.setMetadata(metadata)
        }
    }

    /// The store's metadata (identity, schema version, user entries).
    public var metadata: StoreMetadata { engine.metadata }

    var isRemoved: Bool { lock.withLock { removed } }

    func markRemoved() throws {
        lock.withLock { removed = true }
        try engine.close()
    }

    func checkAttached() throws {
        if isRemoved { throw ContextError.noPersistentStore("the store \(url?.path ?? identifier.uuidString) was removed from its coordinator") }
    }
}
