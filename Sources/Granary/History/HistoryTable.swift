import Foundation

/// The reserved table in which a store keeps its persistent history: one row per transaction, under the
/// transaction's number as its key, so the table's next key is the store's history counter (persisted
/// with the table, never lowered by deletes, restored by log replay after a crash).
///
/// Its name starts with `_`, which no entity may use: the model never maps it, migration carries it over
/// as a table it does not know, and `granary info` leaves it out of the entity tables.
enum HistoryTable {
    static let name = "_granary_history"
    static let timestampColumn = 0
    static let authorColumn = 1
    static let contextNameColumn = 2
    static let changesColumn = 3

    static let schema = TableSchema(name: name, columns: [
        Column("timestamp", .date, nullable: false),
        Column("author", .string),
        Column("contextName", .string),
        Column("changes", .bytes, nullable: false),
    ])

    /// Whether a table of a store is internal to Granary rather than an entity's.
    static func isReserved(_ table: String) -> Bool { table.hasPrefix("_granary_") }

    /// Creates the table in a store that has none yet (its first open with tracking on).
    /// - Throws: `StorageError` when the store cannot be written, or holds a table of this name with
    ///   another schema.
    static func createIfMissing(in engine: Engine) throws {
        let snapshot = engine.read()
        if snapshot.tableNames.contains(name) {
            let existing = try snapshot.schema(of: name)
            if existing != schema {
                throw StorageError.invalidArgument("the store's table '\(name)' is not a persistent history table this version of Granary reads")
            }
            return
        }
        try engine.write { tx in try tx.createTable(schema) }
    }

    /// The number of the last transaction the store recorded (0 before the first), or `nil` when the
    /// store has no history table.
    static func lastTransactionNumber(in snapshot: Snapshot) -> Int64? {
        guard snapshot.tableNames.contains(name), let next = try? snapshot.nextKey(in: name) else { return nil }
        return next - 1
    }

    // MARK: Encoding

    /// A transaction's changes as the table stores them (see `HistoryEncoding`): entity names once,
    /// then one entry per change.
    struct StoredChanges: Equatable {
        var entities: [String] = []
        var changes: [StoredChange] = []
    }

    struct StoredChange: Equatable {
        /// Index into `entities`.
        var entity: Int
        /// The object's key.
        var key: Int64
        var kind: PersistentHistoryChange.ChangeType
        /// Updated property names.
        var updated: [String]? = nil
        /// Tombstone values by attribute name, in the storage form of the attribute's column.
        var tombstone: [String: Value]? = nil
    }

    static func row(timestamp: Date, author: String?, contextName: String?, changes: StoredChanges) -> Row {
        Row([.date(timestamp), author.map(Value.string) ?? .null, contextName.map(Value.string) ?? .null,
             .bytes(HistoryEncoding.encode(changes))])
    }

    // MARK: Decoding

    /// The transaction a row of the table records.
    /// - Throws: `PersistentHistoryError.unreadableHistory` naming the store and the transaction when the
    ///   row is not one this table writes.
    static func transaction(from row: Row, key: Int64, store: PersistentStore) throws -> PersistentHistoryTransaction {
        let token = PersistentHistoryToken(storeIdentifier: store.identifier, transactionNumber: key)
        func unreadable(_ reason: String) -> PersistentHistoryError {
            .unreadableHistory(store: store.url?.path ?? store.identifier.uuidString, transactionNumber: key, reason: reason)
        }
        guard case .date(let timestamp) = row[timestampColumn] else { throw unreadable("the timestamp is missing") }
        guard case .bytes(let bytes) = row[changesColumn] else { throw unreadable("the changes are missing") }
        let stored: StoredChanges
        do { stored = try HistoryEncoding.decode(bytes) } catch { throw unreadable(error.description) }
        var changes: [PersistentHistoryChange] = []
        changes.reserveCapacity(stored.changes.count)
        for (position, change) in stored.changes.enumerated() {
            let entityName = stored.entities[change.entity]
            let id = ManagedObjectID(entityName: entityName, store: store.identifier, key: change.key)
            var tombstone: [String: any Sendable]?
            if let values = change.tombstone {
                var decoded: [String: any Sendable] = [:]
                let entity = store.model.entity(named: entityName)
                for (name, value) in values {
                    // The attribute's own Swift form (an Int16, a URL); the raw storage form if the model
                    // no longer has the attribute.
                    if let attribute = entity?.attributesByName[name], let swift = try? attribute.swiftValue(from: value) {
                        decoded[name] = swift
                    } else {
                        decoded[name] = value
                    }
                }
                tombstone = decoded
            }
            changes.append(PersistentHistoryChange(changeID: position, changedObjectID: id, changeType: change.kind,
                                                   updatedProperties: change.updated.map(Set.init), tombstone: tombstone,
                                                   transactionToken: token))
        }
        var author: String?
        if case .string(let s) = row[authorColumn] { author = s }
        var contextName: String?
        if case .string(let s) = row[contextNameColumn] { contextName = s }
        return PersistentHistoryTransaction(token: token, timestamp: timestamp, storeID: store.identifier, contextName: contextName,
                                            author: author, changes: changes)
    }
}
