import Foundation

/// Keeps both ends of every relationship in agreement when a save is written, measured against the
/// store's rows as they are at that moment rather than against the saving context's view.
///
/// Why at the store: a context only knows the objects it loaded, as they were when it loaded them.
/// Another context may have moved an employee to a new manager, added a badge to an employee this
/// context deletes, or deleted the department this context links to. Optimistic locking catches
/// conflicts on the rows a save writes, but not on the rows at the *other* end of its relationships.
/// Left alone, such saves store one-sided links (an employee in two managers' `reports`) or
/// references to rows that no longer exist. Inside the write transaction the store sees every row as
/// it is, so it finishes each link here:
///
/// - a relationship set or changed by the save makes the other end point back (for a to-one inverse,
///   the object leaves its previous owner's relationship);
/// - a relationship cleared by the save clears the other end;
/// - a reference to a row that is gone (deleted by another save, or in this one) is dropped;
/// - a deleted row's delete rules run against its current relationships: nullify (and no action)
///   clear the other ends, cascade deletes them as well, deny fails the save if anything is left.
///
/// Rows the save did not write but this pass changes get a new row version, so contexts holding them
/// see a conflict on their next save and merge. The saving context is given these rows back
/// (`touched`, `cascaded`) to bring its objects up to date.
struct GraphRepair {
    enum Origin { case inserted, updated, repaired }

    struct Entry {
        let ref: RowReference
        var row: Row
        let origin: Origin
        /// The row before this save (nil for inserts).
        let before: Row?
        /// Changed by this pass (not only by the context).
        var touched = false
        /// Taken out of the working set by a cascade.
        var isRemoved = false
    }

    let store: PersistentStore
    let snapshot: Snapshot
    /// The working set, in the order rows joined it; `slots` finds a row's place. Each link looks its
    /// target up once and then works by position: looking the row up again for each step (load, inverse
    /// column, current value, membership) was most of a big save's graph pass.
    private(set) var entries: [Entry] = []
    private var slots: RowReferenceMap
    /// Rows the save deletes, the context's and the cascaded ones.
    private(set) var deleted: Set<RowReference> = []
    /// Rows deleted by a cascade the context did not ask for, with their entities.
    private(set) var cascaded: [(ref: RowReference, entityName: String)] = []
    /// Each deleted row as its delete rules see it: as stored, for a row the context deleted (the context
    /// sends no values; `isStillLinked` accounts for what the save changed at the other ends), and as
    /// this save leaves it, for a row the pass cascades to.
    private var deletedRows: [RowReference: (row: Row, table: TableMapping)] = [:]
    /// Members of to-many columns as sets, built on first use: membership tests on big relationships.
    /// `memberSlots` finds a column's set in `memberSets`.
    private var memberSets: [RowReferenceSet] = []
    private var memberSlots = RowReferenceMap()
    private var entityCache: [EntityKey: (mapping: EntityMapping, relationships: [(Int, RelationshipDescription)])] = [:]
    private var tableMappings: [TableID: TableMapping] = [:]
    private var lastTable: (id: TableID, mapping: TableMapping)?

    private var inverseCache: [InverseKey: InverseColumn?] = [:]
    /// The last answer of `inverseColumn`: a save's links come in runs of one relationship, and the
    /// cache's key hashes a name.
    private var lastInverse: (key: InverseKey, found: InverseColumn?)?

    private struct InverseKey: Hashable {
        var entity: EntityKey
        var inverseName: String
    }

    private struct EntityKey: Hashable {
        var table: TableID
        var code: Int64
    }

    /// - Parameter capacity: the rows the save writes, so that the working set is not rehashed as it fills.
    init(store: PersistentStore, snapshot: Snapshot, capacity: Int = 0) {
        self.store = store
        self.snapshot = snapshot
        entries.reserveCapacity(capacity)
        slots = RowReferenceMap(capacity: capacity)
    }

    // MARK: Input

    mutating func addInsert(_ row: Row, ref: RowReference) throws {
        _ = try tableMapping(ref.table)
        add(Entry(ref: ref, row: row, origin: .inserted, before: nil))
    }

    mutating func addUpdate(_ row: Row, before: Row, ref: RowReference) throws {
        _ = try tableMapping(ref.table)
        add(Entry(ref: ref, row: row, origin: .updated, before: before))
    }

    private mutating func add(_ entry: Entry) {
        if let slot = slots[entry.ref] {
            entries[slot] = entry
        } else {
            slots[entry.ref] = entries.count
            entries.append(entry)
        }
    }

    mutating func addDelete(before: Row, ref: RowReference) throws {
        deleted.insert(ref)
        deletedRows[ref] = (before, try tableMapping(ref.table))
    }

    // MARK: Running

    /// Applies the delete rules of every deleted row, then finishes every link the save made or broke.
    /// - Throws: `ContextError.deleteDenied` when a deny rule still has objects at its other end.
    mutating func run() throws {
        var queue = Array(deleted)
        // Deny rules are judged once every cascade has run, as a context judges them at save: a member
        // found now may be deleted by a cascade still to come (a chain that loops back to it).
        var denials: [(target: RowReference, entity: String, relationship: String, object: String)] = []
        while let ref = queue.popLast() {
            guard let (row, table) = deletedRows[ref] else { continue }
            for (column, relationship) in relationshipColumns(of: row, in: ref.table) {
                for target in Self.references(in: row[column]) where !deleted.contains(target) {
                    // The rules apply to the members the deleted row still has once this save's own
                    // edits count: an object the save moved to another owner is no longer its member.
                    guard let slot = try load(target), isStillLinked(slot, to: ref, through: relationship) else { continue }
                    switch relationship.deleteRule {
                    case .nullify, .noAction:
                        try unlink(ref, relationship, from: target)
                    case .cascade:
                        try unlink(ref, relationship, from: target)
                        let entry = entries[slot]
                        entries[slot].isRemoved = true
                        slots[target] = nil
                        deleted.insert(target)
                        // Its own rules apply to its relationships as this save leaves them: a row the
                        // save wrote may hold members the save gave it, which its stored row lacks.
                        let entryTable = try tableMapping(target.table)
                        deletedRows[target] = (entry.row, entryTable)
                        let name = entityMapping(of: entry.row, in: target.table)?.entityName ?? entryTable.name
                        cascaded.append((target, name))
                        queue.append(target)
                    case .deny:
                        let entity = entityMapping(of: row, in: ref.table)?.entityName ?? table.name
                        denials.append((target, entity, relationship.name, "\(table.name)/\(ref.key)"))
                    }
                }
            }
        }
        if let denial = denials.first(where: { !deleted.contains($0.target) }) {
            throw ContextError.deleteDenied(entity: denial.entity, relationship: denial.relationship, object: denial.object, count: 1)
        }
        // In key order, so that the pass (and which of two rival links stands) does not depend on the
        // order the context listed its objects in.
        let written = entries.indices.filter { entries[$0].origin != .repaired && !entries[$0].isRemoved }
            .sorted { entries[$0].ref < entries[$1].ref }
        for slot in written {
            let entry = entries[slot]
            if entry.isRemoved { continue }
            let ref = entry.ref
            for (column, relationship) in relationshipColumns(of: entry.row, in: ref.table) {
                // A to-one on both sides (one reference or none): compared without making a list of each,
                // which cost two allocations per written row.
                if let after = Self.toOneReference(entry.row[column]), let before = Self.toOneReference(entry.before?[column] ?? .null) {
                    if after == before { continue }
                    if let target = after { try link(ref, relationship, column: column, to: target) }
                    if let target = before { try unlink(ref, relationship, from: target) }
                    continue
                }
                let before = entry.before.map { Self.references(in: $0[column]) } ?? []
                let after = Self.references(in: entry.row[column])
                if before == after { continue }
                // An inserted row links everything it holds: no sets to build (two per row, most of
                // them of one reference, were a tenth of a big insert's save).
                if before.isEmpty {
                    for target in after { try link(ref, relationship, column: column, to: target) }
                    continue
                }
                // Short lists (a to-one's one reference) are compared by scanning; long ones by sets.
                if before.count <= 8 && after.count <= 8 {
                    for target in after where !before.contains(target) { try link(ref, relationship, column: column, to: target) }
                    for target in before where !after.contains(target) { try unlink(ref, relationship, from: target) }
                    continue
                }
                let beforeSet = RowReferenceSet(before)
                let afterSet = RowReferenceSet(after)
                for target in after where !beforeSet.contains(target) { try link(ref, relationship, column: column, to: target) }
                for target in before where !afterSet.contains(target) { try unlink(ref, relationship, from: target) }
            }
        }
    }

    // MARK: Links

    /// Makes `target` point back at `source` through the inverse of `relationship`, or drops `target`
    /// from `source` when it no longer exists.
    private mutating func link(_ source: RowReference, _ relationship: RelationshipDescription, column: Int, to target: RowReference) throws {
        guard deleted.isEmpty || !deleted.contains(target), let slot = try load(target) else {
            if let sourceSlot = slots[source] { remove(target, from: sourceSlot, column: column) }
            return
        }
        guard let inverse = inverseColumn(of: relationship, at: slot) else { return }
        let inverseColumn = inverse.column
        if inverse.isToMany {
            if !contains(source, at: slot, column: inverseColumn) { append(source, to: slot, column: inverseColumn) }
            return
        }
        guard case .reference(let previous) = entries[slot].row[inverseColumn] else {
            set(.reference(source), at: slot, column: inverseColumn)
            return
        }
        if previous == source { return }
        if changedBySave(slot, column: inverseColumn) {
            // The target itself was pointed elsewhere by this save: that explicit choice stands.
            if let sourceSlot = slots[source] { remove(target, from: sourceSlot, column: column) }
            return
        }
        set(.reference(source), at: slot, column: inverseColumn)
        // A to-one inverse: the target leaves its previous owner.
        if !deleted.contains(previous), let ownerSlot = try load(previous), let ownerColumn = self.column(named: relationship.name, at: ownerSlot) {
            remove(target, from: ownerSlot, column: ownerColumn)
        }
    }

    /// Makes `target` stop pointing at `source` through the inverse of `relationship`.
    private mutating func unlink(_ source: RowReference, _ relationship: RelationshipDescription, from target: RowReference) throws {
        guard deleted.isEmpty || !deleted.contains(target), let slot = try load(target),
            let inverse = inverseColumn(of: relationship, at: slot)
        else { return }
        let inverseColumn = inverse.column
        if inverse.isToMany {
            remove(source, from: slot, column: inverseColumn)
        } else if case .reference(let current) = entries[slot].row[inverseColumn], current == source,
            !changedBySave(slot, column: inverseColumn)
        {
            set(.null, at: slot, column: inverseColumn)
        }
    }

    /// Whether `target`, found in a deleted row's `relationship` as the store last saved it, still
    /// points back at that row after this save's edits. A save that moves an object out of a to-many
    /// (sets its to-one elsewhere, or takes it out of the set) and deletes the old owner records the move
    /// on the moved object's row; the old owner's row still lists it. Core Data applies the delete rule to
    /// the relationship as the context left it, so the moved object is not cascaded, nullified or counted
    /// against a deny rule.
    private mutating func isStillLinked(_ slot: Int, to deletedRow: RowReference, through relationship: RelationshipDescription) -> Bool {
        guard let inverse = inverseColumn(of: relationship, at: slot),
            changedBySave(slot, column: inverse.column)
        else { return true }
        return Self.references(in: entries[slot].row[inverse.column]).contains(deletedRow)
    }

    private func changedBySave(_ slot: Int, column: Int) -> Bool {
        let entry = entries[slot]
        guard entry.origin != .repaired else { return false }
        guard let before = entry.before else { return true }
        return before[column] != entry.row[column]
    }

    // MARK: Rows

    /// Brings a row into the working set and gives its place; nil when it does not exist.
    private mutating func load(_ ref: RowReference) throws -> Int? {
        if let slot = slots[ref] { return slot }
        guard let table = try? tableMapping(ref.table), let row = try snapshot.row(in: table.name, key: ref.key) else {
            return nil
        }
        slots[ref] = entries.count
        entries.append(Entry(ref: ref, row: row, origin: .repaired, before: row))
        return entries.count - 1
    }

    private mutating func set(_ value: Value, at slot: Int, column: Int) {
        entries[slot].row[column] = value
        entries[slot].touched = true
    }

    private mutating func remove(_ member: RowReference, from slot: Int, column: Int) {
        switch entries[slot].row[column] {
        case .reference(let current) where current == member:
            set(.null, at: slot, column: column)
        case .references:
            guard contains(member, at: slot, column: column) else { return }
            // Taken out of the row first, so that the list is edited in place rather than copied.
            guard case .references(var list) = entries[slot].row[column] else { return }
            entries[slot].row[column] = .null
            list.removeAll { $0 == member }
            set(.references(list), at: slot, column: column)
            if let k = memberSlots[RowReferenceMap.key(entries[slot].ref, column: column)] { memberSets[k].remove(member) }
        default:
            break
        }
    }

    private mutating func append(_ member: RowReference, to slot: Int, column: Int) {
        var list = Self.references(in: entries[slot].row[column])
        entries[slot].row[column] = .null
        list.append(member)
        set(.references(list), at: slot, column: column)
        if let k = memberSlots[RowReferenceMap.key(entries[slot].ref, column: column)] { memberSets[k].insert(member) }
    }

    private mutating func contains(_ member: RowReference, at slot: Int, column: Int) -> Bool {
        let key = RowReferenceMap.key(entries[slot].ref, column: column)
        if let k = memberSlots[key] { return memberSets[k].contains(member) }
        let list = Self.references(in: entries[slot].row[column])
        // Short lists are scanned; long ones get a set, kept up to date by `append` and `remove`.
        if list.count < 16 { return list.contains(member) }
        let members = RowReferenceSet(list)
        memberSlots[key] = memberSets.count
        memberSets.append(members)
        return members.contains(member)
    }

    /// Whether a new row links to anything: if no row of a save does, and it deletes nothing, there is
    /// nothing to finish.
    static func hasLinks(_ row: Row) -> Bool {
        row.values.contains { value in
            switch value {
            case .reference: return true
            case .references(let refs): return !refs.isEmpty
            default: return false
            }
        }
    }

    /// Whether an updated row's relationships differ from the row it replaces.
    static func linksDiffer(_ row: Row, _ before: Row) -> Bool {
        for (new, old) in zip(row.values, before.values) {
            switch (new, old) {
            case (.reference, _), (.references, _), (_, .reference), (_, .references):
                if new != old { return true }
            default:
                continue
            }
        }
        return row.values.count != before.values.count
    }

    /// A column value as a to-one's target: the reference, or none for anything but references (what
    /// `references(in:)` reads as an empty list); nil for a list of references.
    private static func toOneReference(_ value: Value) -> RowReference?? {
        switch value {
        case .reference(let ref): return .some(ref)
        case .references: return nil
        default: return .some(nil)
        }
    }

    static func references(in value: Value) -> [RowReference] {
        switch value {
        case .reference(let ref): return [ref]
        case .references(let refs): return refs
        default: return []
        }
    }

    // MARK: Model lookups

    /// The mapping of a table the working set holds rows of; the last one asked for is kept, as a save's
    /// rows come in runs of one table.
    mutating func tableMapping(_ table: TableID) throws -> TableMapping {
        if let lastTable, lastTable.id == table { return lastTable.mapping }
        if let known = tableMappings[table] {
            lastTable = (table, known)
            return known
        }
        guard let mapping = store.tableMapping(for: table, in: snapshot) else {
            throw ContextError.storage(.corruption(file: "store \(store.identifier)", offset: 0, reason: "a reference names table \(table), which the store does not have"))
        }
        tableMappings[table] = mapping
        lastTable = (table, mapping)
        return mapping
    }

    /// The mapping of a row's entity (a hierarchy table holds several), cached by table and code.
    private mutating func entity(of row: Row, in tableID: TableID)
        -> (mapping: EntityMapping, relationships: [(Int, RelationshipDescription)])?
    {
        guard case .int(let code) = row[StorageMapping.entityColumn] else { return nil }
        let key = EntityKey(table: tableID, code: code)
        if let cached = entityCache[key] { return cached }
        guard let table = try? tableMapping(tableID), let name = table.entityName(forCode: code),
            let mapping = store.mapping.entity(named: name)
        else { return nil }
        let relationships: [(Int, RelationshipDescription)] = mapping.propertyColumns.compactMap { column in
            if case .relationship(let r)? = mapping.property(atColumn: column) { return (column, r) }
            return nil
        }
        entityCache[key] = (mapping, relationships)
        return (mapping, relationships)
    }

    private mutating func entityMapping(of row: Row, in tableID: TableID) -> EntityMapping? {
        entity(of: row, in: tableID)?.mapping
    }

    private mutating func relationshipColumns(of row: Row, in tableID: TableID) -> [(Int, RelationshipDescription)] {
        entity(of: row, in: tableID)?.relationships ?? []
    }

    private mutating func column(named name: String, at slot: Int) -> Int? {
        let entry = entries[slot]
        return entityMapping(of: entry.row, in: entry.ref.table)?.column(forProperty: name)
    }

    /// Where a row keeps the inverse of a relationship, and whether it is a to-many: all a link needs of
    /// the inverse (a copy of its whole description, names and all, was a tenth of the pass).
    private struct InverseColumn {
        var column: Int
        var isToMany: Bool
    }

    private mutating func inverseColumn(of relationship: RelationshipDescription, at slot: Int) -> InverseColumn? {
        guard case .int(let code) = entries[slot].row[StorageMapping.entityColumn] else { return nil }
        let target = entries[slot].ref
        let key = InverseKey(entity: EntityKey(table: target.table, code: code), inverseName: relationship.graphInverseName)
        if let last = lastInverse, last.key == key { return last.found }
        if let cached = inverseCache[key] {
            lastInverse = (key, cached)
            return cached
        }
        var found: InverseColumn?
        let entry = entries[slot]
        if let mapping = entityMapping(of: entry.row, in: target.table),
            let column = mapping.column(forProperty: relationship.graphInverseName),
            case .relationship(let inverse)? = mapping.property(atColumn: column)
        {
            found = InverseColumn(column: column, isToMany: inverse.isToMany)
        }
        inverseCache[key] = .some(found)
        lastInverse = (key, found)
        return found
    }
}
