import GranaryStorage

/// The tables of the event store (§3.1 of the plan), schema version 1.
///
/// Slice 4 keeps what the store needs so far: the `state` row without the identity, store UUID and
/// model hash columns (later slices append them; rows written before read them as null), `event`, and
/// the ledger in `object`, `register` and `member` (`LedgerRows`). `register` has no `targetGID`
/// column yet: the ledger keeps a fused key's state under the key each event named (M22), so nothing
/// rewrites registers by target, and the index is added with the slice that needs it. `dataFile`,
/// `remoteFile` and `pendingMerge` come with the merge pipeline.
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
        static let entity = 0, globalID = 1, localKey = 2, incarnations = 3, fuses = 4
        static let schema = TableSchema(name: name, columns: [
            Column("entity", .string, nullable: false),
            Column("gid", .string, nullable: false),
            // The primary key of the object in the app's store; null until the merge or capture maps it.
            Column("localKey", .int),
            // The key's incarnations (`LedgerBinaryCoding`); null for a key that is mapped but not in the ledger.
            Column("incarnations", .bytes),
            // The fuses joining the key to others (M22), in `LedgerBinaryCoding`'s form.
            Column("fuses", .bytes),
        ], indexes: [
            IndexDefinition(name: byKey, on: "entity", "gid", unique: true),
            IndexDefinition(name: byLocalKey, on: "entity", "localKey", unique: true),
        ])
    }

    /// One row per attribute or canonical to-one of a key: its register's candidates.
    enum Register {
        static let name = "register"
        static let byProperty = "byProperty"
        static let entity = 0, globalID = 1, isToOne = 2, property = 3, candidates = 4
        static let schema = TableSchema(name: name, columns: [
            Column("entity", .string, nullable: false),
            Column("gid", .string, nullable: false),
            // Attributes and to-ones are separate maps in the ledger, so the kind is part of the identity.
            Column("isToOne", .bool, nullable: false),
            Column("property", .string, nullable: false),
            Column("candidates", .bytes, nullable: false),
        ], indexes: [
            IndexDefinition(name: byProperty, on: "entity", "gid", "isToOne", "property", unique: true),
        ])
    }

    /// One row per member of a canonical to-many of a key: the adds no remove cancelled.
    enum Member {
        static let name = "member"
        static let byMember = "byMember", byMemberGID = "byMemberGID"
        static let entity = 0, globalID = 1, relationship = 2, memberEntity = 3, memberGID = 4, adds = 5
        static let schema = TableSchema(name: name, columns: [
            Column("entity", .string, nullable: false),
            Column("gid", .string, nullable: false),
            Column("relationship", .string, nullable: false),
            Column("memberEntity", .string, nullable: false),
            Column("memberGID", .string, nullable: false),
            Column("adds", .bytes, nullable: false),
        ], indexes: [
            IndexDefinition(name: byMember, on: "entity", "gid", "relationship", "memberGID", "memberEntity", unique: true),
            // For the fuse handling of later slices: every owner naming a member.
            IndexDefinition(name: byMemberGID, on: "memberGID"),
        ])
    }

    static let tables = [State.schema, Event.schema, Object.schema, Register.schema, Member.schema, RemoteFile.schema, Cloud.schema,
                         PendingMergeTable.schema, BaselineTable.schema, NewestEvent.schema, DataFileTable.schema, OwnFile.schema]
}
