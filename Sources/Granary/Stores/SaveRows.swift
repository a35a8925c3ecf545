import Foundation
import GranaryStorage

/// The rows a save writes, as the context wrote them: each inserted and updated object's values
/// encoded for its table, with its row reference, and for an update the row it replaces.
///
/// Encoding is a tenth of a big save and each row's is independent of the others' (it reads the
/// object's values, the store's fixed codecs and the keys the save hands out), so a big save encodes
/// its rows in parts on two threads.
struct SaveRows {
    typealias Insert = (ref: RowReference, table: String, row: Row)
    typealias Update = (ref: RowReference, table: String, row: Row, before: Row)

    var inserts: [Insert] = []
    var updates: [Update] = []
    /// Whether some row links to anything (an insert) or changes its links (an update).
    var linksChange = false

    /// Saves of at least this many rows are encoded in parts at once.
    static let parallelThreshold = 4_000
    /// Rows of a part. Parts, not halves: rows differ in cost (an update reads the row it replaces, an
    /// owner's row lists all its members), and two threads taking parts as they finish stay busy
    /// where one of two halves finished long before the other.
    static let partSize = 1_000

    /// Encodes the rows of `changes`: the inserts under the keys in `ids` (temporary ID → permanent),
    /// the updates one version up from the one they expect, over the stored rows in `before`.
    /// - Throws: The first error in the save's order (an attribute's value of the wrong type, a
    ///   reference to another store).
    static func build(_ changes: StoreChanges, store: PersistentStore, snapshot: Snapshot,
                      ids: [ManagedObjectID: ManagedObjectID], before: [ManagedObjectID: Row]) throws -> SaveRows {
        let total = changes.inserts.count + changes.updates.count
        let work = UncheckedBox((changes, store, snapshot, ids, before))
        guard total >= parallelThreshold else { return try build(work.value, range: 0..<total) }
        let partCount = (total + partSize - 1) / partSize
        let parts = Parts(count: partCount)
        DispatchQueue.concurrentPerform(iterations: partCount) { part in
            let range = part * partSize..<min(total, (part + 1) * partSize)
            let result = Result { try build(work.value, range: range) }
            parts.lock.withLock { parts.results[part] = result }
        }
        // In order: the first part's error is the one a save encoding row after row would meet first.
        var rows = SaveRows()
        rows.inserts.reserveCapacity(changes.inserts.count)
        rows.updates.reserveCapacity(changes.updates.count)
        for result in parts.results {
            let part = try result!.get()
            rows.inserts += part.inserts
            rows.updates += part.updates
            rows.linksChange = rows.linksChange || part.linksChange
        }
        return rows
    }

    /// The parts' outcomes, each written once by the thread that encoded it.
    private final class Parts: @unchecked Sendable {
        let lock = NSLock()
        var results: [Result<SaveRows, any Error>?]
        init(count: Int) { results = Array(repeating: nil, count: count) }
    }

    /// The rows at positions `range` of the save's inserts followed by its updates.
    private static func build(_ work: (StoreChanges, PersistentStore, Snapshot, [ManagedObjectID: ManagedObjectID], [ManagedObjectID: Row]),
                              range: Range<Int>) throws -> SaveRows {
        let (changes, store, snapshot, ids, before) = work
        // Only a temporary ID has a new key to look up: an owner's row lists a thousand members, most of
        // them saved before.
        let resolve: (ManagedObjectID) -> ManagedObjectID = { $0.isTemporaryID ? ids[$0] ?? $0 : $0 }
        var tables = TableLocator(store: store, snapshot: snapshot)
        var rows = SaveRows()
        let insertCount = changes.inserts.count
        let insertRange = range.clamped(to: 0..<insertCount)
        let updateRange = range.clamped(to: insertCount..<(insertCount + changes.updates.count))
        rows.inserts.reserveCapacity(insertRange.count)
        rows.updates.reserveCapacity(updateRange.count)
        for k in insertRange {
            let insert = changes.inserts[k]
            let (table, tableID) = try tables.location(insert.entity)
            let row = try store.row(entity: insert.entity, values: insert.values, version: 1, in: snapshot, resolve: resolve)
            rows.inserts.append((RowReference(table: tableID, key: ids[insert.id]!.primaryKey!), table, row))
            if !rows.linksChange && GraphRepair.hasLinks(row) { rows.linksChange = true }
        }
        for k in updateRange {
            let update = changes.updates[k - insertCount]
            let (table, tableID) = try tables.location(update.entity)
            let row = try store.row(entity: update.entity, values: update.values, version: update.expectedVersion + 1,
                                    in: snapshot, resolve: resolve)
            let previous = before[update.id]!
            rows.updates.append((RowReference(table: tableID, key: update.id.primaryKey!), table, row, previous))
            if !rows.linksChange && GraphRepair.linksDiffer(row, previous) { rows.linksChange = true }
        }
        return rows
    }
}

/// Each entity's table, by name and by ID, looked up once per save (or per half of one).
struct TableLocator {
    let store: PersistentStore
    let snapshot: Snapshot
    private var tables: [EntityDescription: (name: String, id: TableID)] = [:]
    /// Saves are runs of one entity: the last answer is checked first, by identity.
    private var last: (entity: EntityDescription, location: (name: String, id: TableID))?

    init(store: PersistentStore, snapshot: Snapshot) {
        self.store = store
        self.snapshot = snapshot
    }

    mutating func location(_ entity: EntityDescription) throws -> (name: String, id: TableID) {
        if let last, last.entity == entity { return last.location }
        if let known = tables[entity] {
            last = (entity, known)
            return known
        }
        let name = try store.entityMapping(entity.name).tableName
        let found = (name, try store.tableIDs[entity.name] ?? snapshot.tableID(of: name))
        tables[entity] = found
        last = (entity, found)
        return found
    }
}
