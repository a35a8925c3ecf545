/// What one commit changed: its log sequence number and, per table, the keys inserted, updated and
/// deleted.
///
/// The Core Data layer turns these into did-save notifications and merges into other contexts, so a
/// key appears in at most one list: a row inserted and then updated in one transaction is "inserted",
/// a row inserted and then deleted does not appear at all.
public struct ChangeSummary: Sendable, Hashable {
    public var lsn: UInt64
    /// Keyed by table name.
    public var tables: [String: TableChanges]
    /// Tables created, dropped, renamed or altered by this commit.
    public var schemaChangedTables: Set<String>
    public var metadataChanged: Bool

    public init(lsn: UInt64, tables: [String: TableChanges] = [:], schemaChangedTables: Set<String> = [], metadataChanged: Bool = false) {
        self.lsn = lsn
        self.tables = tables
        self.schemaChangedTables = schemaChangedTables
        self.metadataChanged = metadataChanged
    }

    public var isEmpty: Bool { tables.isEmpty && schemaChangedTables.isEmpty && !metadataChanged }
}

/// The keys of one table that a commit inserted, updated and deleted, each sorted ascending.
public struct TableChanges: Sendable, Hashable {
    public var inserted: [Int64]
    public var updated: [Int64]
    public var deleted: [Int64]

    public init(inserted: [Int64] = [], updated: [Int64] = [], deleted: [Int64] = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }
}

/// Folds the individual writes of a transaction into per-key outcomes.
struct ChangeTracker {
    enum Kind { case inserted, updated, deleted }
    private(set) var rows: [TableID: [Int64: Kind]] = [:]
    var schemaChanged: Set<TableID> = []
    var droppedTableNames: Set<String> = []
    var metadataChanged = false

    var isEmpty: Bool { rows.isEmpty && schemaChanged.isEmpty && droppedTableNames.isEmpty && !metadataChanged }

    mutating func inserted(_ table: TableID, _ key: Int64) {
        rows[table, default: [:]][key] = rows[table]?[key] == .deleted ? .updated : .inserted
    }

    mutating func updated(_ table: TableID, _ key: Int64) {
        if rows[table]?[key] != .inserted { rows[table, default: [:]][key] = .updated }
    }

    mutating func deleted(_ table: TableID, _ key: Int64) {
        if rows[table]?[key] == .inserted {
            rows[table]![key] = nil
        } else {
            rows[table, default: [:]][key] = .deleted
        }
    }

    mutating func droppedTable(_ id: TableID, name: String) {
        rows[id] = nil
        schemaChanged.remove(id)
        droppedTableNames.insert(name)
    }

    func summary(lsn: UInt64, names: (TableID) -> String?) -> ChangeSummary {
        var result = ChangeSummary(lsn: lsn, metadataChanged: metadataChanged)
        for (table, keys) in rows where !keys.isEmpty {
            guard let name = names(table) else { continue }
            var changes = TableChanges()
            for (key, kind) in keys {
                switch kind {
                case .inserted: changes.inserted.append(key)
                case .updated: changes.updated.append(key)
                case .deleted: changes.deleted.append(key)
                }
            }
            changes.inserted.sort()
            changes.updated.sort()
            changes.deleted.sort()
            result.tables[name] = changes
        }
        result.schemaChangedTables = Set(schemaChanged.compactMap(names)).union(droppedTableNames)
        return result
    }
}
