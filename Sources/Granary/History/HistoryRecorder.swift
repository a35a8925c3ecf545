import Foundation

/// Writes a store's persistent history: inside a save's (or batch request's) write transaction, after
/// its rows, it records one transaction describing them, so the engine commits both at once and no crash
/// can separate a change from its record.
///
/// It reads what the transaction changed from the engine itself (the keys written, the rows before and
/// after), not from the saving context, so the other ends of relationships a save finished, cascaded
/// deletes and batch requests are recorded like any other change.
struct HistoryRecorder {
    /// Who is writing: the saving context's name and author, bound for the duration of its save or
    /// batch request (a task-local, so the coordinator's save path needs no extra parameter).
    struct Origin: Sendable {
        var author: String?
        var contextName: String?
    }

    @TaskLocal static var origin = Origin()

    /// Runs `body` (a save or batch request of `context`) with the context's name and author as the
    /// origin of what it records. A context with neither binds nothing, so its saves pay nothing.
    static func bindingOrigin<R>(of context: ManagedObjectContext, _ body: () throws -> R) rethrows -> R {
        let (author, name) = (context.transactionAuthor, context.name)
        if author == nil && name == nil { return try body() }
        return try $origin.withValue(Origin(author: author, contextName: name), operation: body)
    }

    let store: PersistentStore
    /// The store as the transaction found it: the rows before the save.
    let before: Snapshot

    /// A recorder for a write transaction that has not written yet, or `nil` when the store records no
    /// history (and then the save pays nothing).
    static func start(_ store: PersistentStore, in tx: WriteTransaction) -> HistoryRecorder? {
        guard store.tracksPersistentHistory else { return nil }
        // The transaction's starting state is the engine's head, which the engine holds anyway: keeping it
        // copies nothing and makes no later write copy more.
        return HistoryRecorder(store: store, before: tx.snapshot)
    }

    /// Records what `tx` changed in the store's entity tables so far as one transaction (nothing if it
    /// changed no object).
    /// - Throws: `StorageError` from reading the rows or writing the record (the whole save then fails).
    func record(in tx: WriteTransaction) throws {
        let summary = tx.changesSoFar
        var stored = HistoryTable.StoredChanges()
        var entityIndexes: [String: Int] = [:]
        func entityIndex(_ name: String) -> Int {
            if let known = entityIndexes[name] { return known }
            stored.entities.append(name)
            entityIndexes[name] = stored.entities.count - 1
            return stored.entities.count - 1
        }
        do {
            let after = tx.snapshot
            for table in summary.tables.keys.sorted() where !HistoryTable.isReserved(table) {
                guard let codecs = store.decoders[table], let changes = summary.tables[table] else { continue }
                func codec(of row: Row) -> EntityCodec? {
                    guard case .int(let code) = row[StorageMapping.entityColumn], code >= 0, code < codecs.count else { return nil }
                    return codecs[Int(code)]
                }
                var entries: [(key: Int64, change: HistoryTable.StoredChange)] = []
                for key in changes.inserted {
                    guard let row = try after.row(in: table, key: key), let codec = codec(of: row) else { continue }
                    entries.append((key, .init(entity: entityIndex(codec.entity.name), key: key, kind: .insert)))
                }
                for key in changes.updated {
                    guard let row = try after.row(in: table, key: key), let codec = codec(of: row) else { continue }
                    let previous = try before.row(in: table, key: key)
                    let names = Self.updatedNames(codec, previous, row)
                    // A row rewritten with the same values (only its version moved) changed nothing to report.
                    if names.isEmpty { continue }
                    entries.append((key, .init(entity: entityIndex(codec.entity.name), key: key, kind: .update, updated: names)))
                }
                for key in changes.deleted {
                    guard let row = try before.row(in: table, key: key), let codec = codec(of: row) else { continue }
                    entries.append((key, .init(entity: entityIndex(codec.entity.name), key: key, kind: .delete, tombstone: Self.tombstone(codec, row))))
                }
                entries.sort { $0.key < $1.key }
                stored.changes += entries.map(\.change)
            }
        }
        guard !stored.changes.isEmpty else { return }
        let origin = Self.origin
        try tx.insert(HistoryTable.row(timestamp: Date(), author: origin.author, contextName: origin.contextName, changes: stored),
                      into: HistoryTable.name)
    }

    /// The names of the stored properties whose values differ between two versions of a row (all of them
    /// when there was no earlier row, a key deleted and inserted again in one transaction). Hidden
    /// inverses of one-sided relationships are the store's bookkeeping, not the app's properties: an
    /// object whose only change is there changed nothing the app can see.
    private static func updatedNames(_ codec: EntityCodec, _ before: Row?, _ after: Row) -> [String] {
        var names: [String] = []
        for step in codec.steps where before?[step.column] != after[step.column] {
            switch codec.layout.kinds[step.index] {
            case .toOne(let r) where r.isHiddenInverse, .toMany(let r) where r.isHiddenInverse: continue
            default: names.append(codec.layout.names[step.index])
            }
        }
        return names
    }

    /// The values of a deleted row's attributes that the model asks to keep.
    private static func tombstone(_ codec: EntityCodec, _ row: Row) -> [String: Value]? {
        var kept: [String: Value] = [:]
        var asked = false
        for step in codec.steps {
            guard case .attribute(let attribute) = codec.layout.kinds[step.index], attribute.preservesValueInHistoryOnDeletion else { continue }
            asked = true
            let value = row[step.column]
            if !value.isNull { kept[attribute.name] = value }
        }
        return asked ? kept : nil
    }
}
