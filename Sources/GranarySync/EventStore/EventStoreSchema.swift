import GranaryStorage

/// The tables of the event store (§3.1 of the plan), schema version 1.
///
/// Slice 4 keeps only what the store needs so far: the `state` row without the identity, store UUID and
/// model hash columns (later slices append them; rows written before read them as null), `event`, and
/// `object`. The ledger is kept one JSON document per key in `object.ledger` instead of the plan's
/// `register` and `member` tables: the ledger's values are already `Codable` through
/// `EventPayloadCoding`, and splitting them into rows pays only once the merge reads them per property
/// (the fuse rewrite of §6), which no slice does yet.
enum EventStoreSchema {
    /// The version written in the engine's metadata. A store of a higher version is refused rather than
    /// misread.
    static let version = 1
    /// The prefix of `StoreMetadata.schemaVersion` in an event store, so that a directory of some other
    /// engine store is recognised as not being one.
    static let versionPrefix = "granary.sync.events."

    static var versionText: String { versionPrefix + String(version) }

    /// The key of the one `state` row.
    static let stateKey: Int64 = 1

    enum State {
        static let name = "state"
        static let storeID = 0, leechState = 1, historyToken = 2, nextRevision = 3, maxGlobalCount = 4,
                   integrated = 5, baselineID = 6, pendingMergeID = 7
        static let schema = TableSchema(name: name, columns: [
            Column("storeID", .string, nullable: false),
            Column("leechState", .int, nullable: false),
            Column("historyToken", .bytes),
            Column("nextRevision", .int, nullable: false),
            Column("maxGlobalCount", .int, nullable: false),
            Column("integrated", .bytes, nullable: false),
            Column("baselineID", .string),
            Column("pendingMergeID", .string),
        ])
    }

    enum Event {
        static let name = "event"
        static let byID = "byID", byStatus = "byStatus"
        static let storeID = 0, revision = 1, globalCount = 2, status = 3, timestamp = 4, payload = 5
        static let schema = TableSchema(name: name, columns: [
            Column("storeID", .string, nullable: false),
            Column("revision", .int, nullable: false),
            Column("globalCount", .int, nullable: false),
            Column("status", .int, nullable: false),
            Column("timestamp", .double, nullable: false),
            // The canonical JSON of the whole `Event` (EventPayloadCoding): fixed when the row is
            // written, so an export after a crash sends the same bytes (I1).
            Column("payload", .bytes, nullable: false),
        ], indexes: [
            IndexDefinition(name: byID, on: "storeID", "revision", unique: true),
            // Status, then the position (M1): the store ID text orders as `StoreID` does, by its bytes.
            IndexDefinition(name: byStatus, on: "status", "globalCount", "storeID"),
        ])
    }

    enum Object {
        static let name = "object"
        static let byKey = "byKey", byLocalKey = "byLocalKey"
        static let entity = 0, globalID = 1, localKey = 2, ledger = 3
        static let schema = TableSchema(name: name, columns: [
            Column("entity", .string, nullable: false),
            Column("gid", .string, nullable: false),
            // The primary key of the object in the app's store; null until the merge or capture maps it.
            Column("localKey", .int),
            // The JSON of the key's `LedgerObject`; null for a key that is mapped but not yet integrated.
            Column("ledger", .bytes),
        ], indexes: [
            IndexDefinition(name: byKey, on: "entity", "gid", unique: true),
            IndexDefinition(name: byLocalKey, on: "entity", "localKey", unique: true),
        ])
    }

    static let tables = [State.schema, Event.schema, Object.schema]
}
