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

    /// The layout of `StoredChanges` this version writes and reads; a row of another layout is reported
    /// as unreadable rather than misread.
    static let formatVersion = 1

    /// A transaction's changes as the table stores them: entity names once, then one entry per change.
    /// JSON, with one-letter keys in the entries: a transaction of a large batch holds one per row.
    struct StoredChanges: Codable {
        var format = HistoryTable.formatVersion
        var entities: [String] = []
        var changes: [StoredChange] = []
    }

    struct StoredChange: Codable {
        /// Index into `entities`.
        var e: Int
        /// The object's key.
        var k: Int64
        var t: PersistentHistoryChange.ChangeType
        /// Updated property names.
        var u: [String]?
        /// Tombstone values, by attribute name.
        var s: [String: StoredValue]?
    }

    /// A tombstone value in a form JSON keeps exactly.
    enum StoredValue: Codable, Equatable {
        case bool(Bool)
        case int(Int64)
        case double(Double)
        case string(String)
        case bytes(Data)
        case date(Double)
        case uuid(UUID)

        init?(_ value: Value) {
            switch value {
            case .bool(let b): self = .bool(b)
            case .int(let i): self = .int(i)
            case .double(let d): self = .double(d)
            case .string(let s): self = .string(s)
            case .bytes(let b): self = .bytes(Data(b))
            case .date(let d): self = .date(d.timeIntervalSinceReferenceDate)
            case .uuid(let u): self = .uuid(u)
            case .null, .reference, .references: return nil
            }
        }

        var value: Value {
            switch self {
            case .bool(let b): return .bool(b)
            case .int(let i): return .int(i)
            case .double(let d): return .double(d)
            case .string(let s): return .string(s)
            case .bytes(let b): return .bytes([UInt8](b))
            case .date(let d): return .date(Date(timeIntervalSinceReferenceDate: d))
            case .uuid(let u): return .uuid(u)
            }
        }
    }

    static func row(timestamp: Date, author: String?, contextName: String?, changes: StoredChanges) throws -> Row {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let bytes = try encoder.encode(changes)
        return Row([.date(timestamp), author.map(Value.string) ?? .null, contextName.map(Value.string) ?? .null, .bytes([UInt8](bytes))])
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
        do { stored = try JSONDecoder().decode(StoredChanges.self, from: Data(bytes)) } catch {
            throw unreadable("the changes do not decode (\(error))")
        }
        guard stored.format == formatVersion else {
            throw unreadable("the changes are in format \(stored.format); this version of Granary reads format \(formatVersion)")
        }
        var changes: [PersistentHistoryChange] = []
        changes.reserveCapacity(stored.changes.count)
        for (position, change) in stored.changes.enumerated() {
            guard stored.entities.indices.contains(change.e) else { throw unreadable("change \(position) names entity \(change.e) of \(stored.entities.count)") }
            let entityName = stored.entities[change.e]
            let id = ManagedObjectID(entityName: entityName, store: store.identifier, key: change.k)
            var tombstone: [String: any Sendable]?
            if let values = change.s {
                var decoded: [String: any Sendable] = [:]
                let entity = store.model.entity(named: entityName)
                for (name, value) in values {
                    // The attribute's own Swift form (an Int16, a URL); the raw storage form if the model
                    // no longer has the attribute.
                    if let attribute = entity?.attributesByName[name], let swift = try? attribute.swiftValue(from: value.value) {
                        decoded[name] = swift
                    } else {
                        decoded[name] = value.value
                    }
                }
                tombstone = decoded
            }
            changes.append(PersistentHistoryChange(changeID: position, changedObjectID: id, changeType: change.t,
                                                   updatedProperties: change.u.map(Set.init), tombstone: tombstone,
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
