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
///
/// Writes are only appended while the transaction runs (a bulk insert must not pay for a hash lookup
/// per row) and folded once, at commit.
struct ChangeTracker {
    enum Kind { case inserted, updated, deleted }
    private(set) var rows: [TableID: [(key: Int64, kind: Kind)]] = [:]
    var schemaChanged: Set<TableID> = []
    var droppedTableNames: Set<String> = []
    var metadataChanged = false

    var isEmpty: Bool { rows.isEmpty && schemaChanged.isEmpty && droppedTableNames.isEmpty && !metadataChanged }

    mutating func inserted(_ table: TableID, _ key: Int64) { rows[table, default: []].append((key, .inserted)) }
    mutating func updated(_ table: TableID, _ key: Int64) { rows[table, default: []].append((key, .updated)) }
    mutating func deleted(_ table: TableID, _ key: Int64) { rows[table, default: []].append((key, .deleted)) }

    /// The net outcome of a key's writes, in order, or `nil` when they cancel out.
    private static func fold(_ writes: ArraySlice<(key: Int64, kind: Kind)>) -> Kind? {
        var outcome: Kind?
        for write in writes {
            switch (outcome, write.kind) {
            case (nil, let kind): outcome = kind
            case (.deleted?, .inserted): outcome = .updated
            case (.inserted?, .updated): outcome = .inserted
            case (.inserted?, .deleted): outcome = nil
            case (_, let kind): outcome = kind
            }
        }
        return outcome
    }

    mutating func droppedTable(_ id: TableID, name: String) {
        rows[id] = nil
        schemaChanged.remove(id)
        droppedTableNames.insert(name)
    }

    func summary(lsn: UInt64, names: (TableID) -> String?) -> ChangeSummary {
        var result = ChangeSummary(lsn: lsn, metadataChanged: metadataChanged)
        for (table, writes) in rows where !writes.isEmpty {
            guard let name = names(table) else { continue }
            // A stable sort groups each key's writes and keeps them in the order they were made.
            var sorted = writes
            if !sorted.isEmpty && !zip(sorted, sorted.dropFirst()).allSatisfy({ $0.key < $1.key }) {
                sorted = writes.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }.map(\.element)
            }
            var changes = TableChanges()
            var start = 0
            while start < sorted.count {
                var end = start + 1
                while end < sorted.count && sorted[end].key == sorted[start].key { end += 1 }
                switch Self.fold(sorted[start..<end]) {
                case .inserted?: changes.inserted.append(sorted[start].key)
                case .updated?: changes.updated.append(sorted[start].key)
                case .deleted?: changes.deleted.append(sorted[start].key)
                case nil: break
                }
                start = end
            }
            if changes != TableChanges() { result.tables[name] = changes }
        }
        result.schemaChangedTables = Set(schemaChanged.compactMap(names)).union(droppedTableNames)
        return result
    }
}
