import Foundation
import Granary

/// Turns the net changes of one capture window into the object changes of one event (§8.1 steps 3–7):
/// reads the current rows, gives new objects their global IDs, and sends relationships on their
/// canonical side only, to-manys as member deltas against the ledger.
///
/// Values are read when the capture runs, not when the window's saves happened: a save committed
/// meanwhile shows here and is captured again in the next window, re-sending equal values, so nothing
/// is ever lost.
final class CaptureAssembler {
    /// The changes, the primary keys the new or re-inserted keys are mapped to, and how many objects per
    /// entity got a random ID because their identifier attribute was empty.
    struct Result {
        var changes: [ObjectChange] = []
        var localKeys: [ObjectKey: Int64] = [:]
        var missingIdentifiers: [String: Int] = [:]
        /// Objects whose identifier attribute now differs from the global ID fixed at their first capture
        /// (for `SyncDiagnostic.globalIdentifierChanged`: unstable IDs are the classic cause of duplicates).
        var changedIdentifiers: [(entity: String, old: String, new: String?)] = []
        /// Per entity, how many new objects repeat the global ID of another live object of the store.
        var duplicateIdentifiers: [String: Int] = [:]
        /// Those objects, each with the object whose key it repeats: the ensemble folds each into its
        /// survivor (`LocalDuplicateMerger`), which is what the event already says.
        var localDuplicates: [LocalDuplicateMerger.Pair] = []
    }

    private let reader: StoreObjectReader
    private let schema: LedgerSchema
    private let identifiers: GlobalIdentifierSource
    private let slice: LedgerSlice
    /// The canonical inverse, on the destination, of a relationship that is not sent itself.
    private struct Canonical {
        var name: String
        var isToMany: Bool
    }

    /// Per entity, its non-canonical relationships with their canonical inverse.
    private let nonCanonical: [String: [String: Canonical]]
    /// A reader of the loaded part of the ledger, made again after each load.
    private var ledgerReader: LedgerReader

    private var rows: [ManagedObjectID: ManagedObject] = [:]
    private var inserts: [ManagedObjectID] = []
    private var insertSet: Set<ManagedObjectID> = []
    /// Updated objects with the property names to send; nil sends every synced property.
    private var updates: [ManagedObjectID: Set<String>?] = [:]
    private var updateOrder: [ManagedObjectID] = []
    private var deletes: [ManagedObjectID: ObjectKey] = [:]
    /// The key of every object an event change names, resolved from the map or made for an insert.
    private var keys: [ManagedObjectID: ObjectKey] = [:]
    private var replacing: Set<ObjectKey> = []
    /// New objects repeating a live object's key: sent as inserts of that key, never mapped.
    private var duplicates: Set<ManagedObjectID> = []
    private var result = Result()

    init(reader: StoreObjectReader, schema: LedgerSchema, identifiers: GlobalIdentifierSource, slice: LedgerSlice) {
        self.reader = reader
        self.schema = schema
        self.identifiers = identifiers
        self.slice = slice
        self.ledgerReader = LedgerReader(ledger: slice.ledger)
        self.nonCanonical = Self.nonCanonicalRelationships(model: reader.context.persistentStoreCoordinator?.managedObjectModel,
                                                           schema: schema)
    }

    /// The changes of `window`. Call on the reader's context queue.
    /// - Throws: `SyncError.storeRead`, `.eventStore`, `.globalIdentifierCountMismatch`.
    func assemble(_ window: CaptureWindow) throws(SyncError) -> Result {
        for (id, net) in window.netChanges {
            switch net {
            case .inserted: queueInsert(id)
            case let .updated(properties):
                if try reader.mappedKey(id) != nil { queueUpdate(id, properties) } else { queueInsert(id) }
            case .deleted:
                if let key = try reader.mappedKey(id) { deletes[id] = key }
            }
        }
        try loadRows()
        try translateNonCanonicalSides()
        try loadRows()
        try queueUnmappedReferences()
        try assignKeys()
        // Everything the changes touch, for their to-many deltas now and for integrating the event next.
        try load(updateOrder.compactMap { keys[$0] } + inserts.compactMap { keys[$0] } + deletes.values, members: true)
        try buildChanges()
        return result
    }

    // MARK: Collecting objects

    private func queueInsert(_ id: ManagedObjectID) {
        guard insertSet.insert(id).inserted else { return }
        inserts.append(id)
        if updates.removeValue(forKey: id) != nil { updateOrder.removeAll { $0 == id } }
    }

    private func queueUpdate(_ id: ManagedObjectID, _ properties: Set<String>?) {
        guard !insertSet.contains(id), deletes[id] == nil else { return }
        // `.some` throughout: assigning a nil `Set?` to the subscript would remove the entry instead of
        // meaning "every property".
        if let existing = updates[id] {
            updates[id] = .some(existing.flatMap { current in properties.map { current.union($0) } })
        } else {
            updates[id] = .some(properties)
            updateOrder.append(id)
        }
    }

    private func loadRows() throws(SyncError) {
        let missing = (inserts + updateOrder).filter { rows[$0] == nil }
        guard !missing.isEmpty else { return }
        let found = try reader.objects(missing)
        for id in missing { rows[id] = found[id] }
        // Rows gone since the window (deleted by a later save) are skipped: their delete is captured next.
        for id in missing where found[id] == nil {
            if insertSet.remove(id) != nil { inserts.removeAll { $0 == id } }
            if updates.removeValue(forKey: id) != nil { updateOrder.removeAll { $0 == id } }
        }
    }

    private func load(_ keys: some Sequence<ObjectKey>, members: Bool) throws(SyncError) {
        try slice.load(keys, members: members)
        ledgerReader = LedgerReader(ledger: slice.ledger)
    }

    /// A link history reported on the non-canonical side (Author.books, Tag.books, Person.passport) is sent
    /// as a change of the canonical side of each counterpart whose link differs from the ledger's (§8.1
    /// step 6). Only the differences: re-sending an unchanged to-one would be a new write that overrides
    /// a concurrent device's change of it.
    ///
    /// Found from here: counterparts the object now has that the ledger does not link it to, and for a
    /// many-to-many the ledger's owners of the object that are no longer counterparts. A counterpart that
    /// left a one-to-many or one-to-one is not looked up (the ledger has no index of to-one targets): its
    /// own row changed, so history reports it on its canonical side.
    private func translateNonCanonicalSides() throws(SyncError) {
        var pairs: [(key: ObjectKey?, counterparts: [ManagedObject], canonical: Canonical)] = []
        var wanted: [ObjectKey] = []
        for id in inserts + updateOrder {
            guard let object = rows[id], let relationships = nonCanonical[id.entityName] else { continue }
            let named: Set<String>? = insertSet.contains(id) ? nil : (updates[id] ?? nil)
            let key = insertSet.contains(id) ? nil : try reader.mappedKey(id)
            for (name, canonical) in relationships.sorted(by: { $0.key < $1.key }) where named?.contains(name) ?? true {
                let counterparts = try reader.related(object, name)
                pairs.append((key, counterparts, canonical))
                if let key { wanted.append(key) }
                for counterpart in counterparts { if let mapped = try reader.mappedKey(counterpart.objectID) { wanted.append(mapped) } }
            }
        }
        guard !pairs.isEmpty else { return }
        try load(wanted, members: true)
        for pair in pairs {
            guard let key = pair.key else {
                // A new object: every counterpart links to it anew.
                for counterpart in pair.counterparts { try touch(counterpart, pair.canonical.name) }
                continue
            }
            let me = ledgerReader.existingRepresentative(key) ?? key
            var current: Set<ObjectKey> = []
            for counterpart in pair.counterparts {
                guard let counterpartKey = try reader.mappedKey(counterpart.objectID) else {
                    try touch(counterpart, pair.canonical.name)
                    continue
                }
                current.insert(counterpartKey)
                if !links(counterpartKey, pair.canonical.name, to: me) { try touch(counterpart, pair.canonical.name) }
            }
            guard pair.canonical.isToMany else { continue }
            let owners = try slice.owners(of: key, in: pair.canonical.name).filter { !current.contains($0) }
            ledgerReader = LedgerReader(ledger: slice.ledger)
            for owner in owners where links(owner, pair.canonical.name, to: me) {
                guard let ownerID = try reader.objectID(for: owner) else { continue }
                try touch(ownerID, pair.canonical.name)
            }
        }
    }

    /// Whether the ledger has `owner`'s canonical `relationship` naming `target`: a present member of a
    /// to-many, or the winning value of a to-one.
    private func links(_ owner: ObjectKey, _ relationship: String, to target: ObjectKey) -> Bool {
        let group = ledgerReader.group(of: owner)
        if schema.entities[owner.entity]?.toManys[relationship] != nil {
            return ledgerReader.presentAdds(of: group, in: relationship).keys.contains(target)
        }
        let winner = ledgerReader.winner(group) { $0.toOnes[relationship]?.candidates ?? [] }
        return (winner?.value).flatMap(ledgerReader.existingRepresentative) == target
    }

    private func touch(_ counterpart: ManagedObject, _ property: String) throws(SyncError) {
        rows[counterpart.objectID] = rows[counterpart.objectID] ?? counterpart
        try touch(counterpart.objectID, property)
    }

    private func touch(_ id: ManagedObjectID, _ property: String) throws(SyncError) {
        guard deletes[id] == nil, !insertSet.contains(id) else { return }
        if try reader.mappedKey(id) == nil { queueInsert(id) } else { queueUpdate(id, [property]) }
    }

    /// Objects that a sent relationship names but that were never captured (they should not exist, but a
    /// row the map lacks must not be lost) are sent as inserts too.
    private func queueUnmappedReferences() throws(SyncError) {
        var checked: Set<ManagedObjectID> = []
        var pending = inserts + updateOrder
        while let id = pending.popLast() {
            guard checked.insert(id).inserted, let object = rows[id], let shape = schema.entities[id.entityName] else { continue }
            let named: Set<String>? = insertSet.contains(id) ? nil : (updates[id] ?? nil)
            for name in Array(shape.toOnes.keys) + Array(shape.toManys.keys) where named?.contains(name) ?? true {
                for target in try reader.related(object, name) {
                    let targetID = target.objectID
                    guard !insertSet.contains(targetID), schema.entities[targetID.entityName] != nil,
                          try reader.mappedKey(targetID) == nil else { continue }
                    rows[targetID] = target
                    queueInsert(targetID)
                    pending.append(targetID)
                }
            }
        }
    }

    // MARK: Keys

    private func assignKeys() throws(SyncError) {
        for id in updateOrder { keys[id] = try reader.mappedKey(id) }
        for (id, key) in deletes { keys[id] = key }
        var fresh: [String: [ManagedObjectID]] = [:]
        var freshOrder: [String] = []
        for id in inserts {
            // Inserted and already mapped: captured before as a reference, or by a capture that read this
            // row while its insert was still ahead in history. Known, so sent as a full update.
            if let key = try reader.mappedKey(id) {
                keys[id] = key
                insertSet.remove(id)
                updates[id] = .some(nil)
                updateOrder.append(id)
                continue
            }
            if fresh[id.entityName] == nil { freshOrder.append(id.entityName) }
            fresh[id.entityName, default: []].append(id)
        }
        inserts = inserts.filter { insertSet.contains($0) }
        let deletedKeys = Dictionary(deletes.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        var claimedBy: [ObjectKey: ManagedObjectID] = [:]
        for entity in freshOrder {
            let ids = fresh[entity] ?? []
            let objects = ids.compactMap { rows[$0] }
            guard objects.count == ids.count else { continue }
            let (made, missing) = try identifiers.identifiers(entity: entity, objects: objects)
            if missing > 0 { result.missingIdentifiers[entity, default: 0] += missing }
            for (id, globalID) in zip(ids, made) {
                guard let localKey = id.primaryKey else { continue }
                let key = ObjectKey(entity, globalID)
                keys[id] = key
                if let deleted = deletedKeys[key], claimedBy[key] == nil {
                    // M13: the window deleted an object and inserted a new one under its global ID.
                    replacing.insert(key)
                    deletes[deleted] = nil
                } else if let survivor = try survivor(of: key, other: id, claimedBy: claimedBy) {
                    // A second live object of this store with one global ID (a default object made at
                    // first launch after sync brought the other device's): M8 on one device. The key stays
                    // with the object that had it; this one's values are sent as an insert of the key, and
                    // the pair is reported so that the ensemble folds the newcomer into it.
                    duplicates.insert(id)
                    result.localDuplicates.append(LocalDuplicateMerger.Pair(duplicate: id, survivor: survivor))
                    result.duplicateIdentifiers[entity, default: 0] += 1
                    continue
                }
                claimedBy[key] = id
                result.localKeys[key] = localKey
            }
        }
    }

    /// The object `key` belongs to when `id` repeats it: one claimed earlier in this window, or the
    /// mapped row if it still exists.
    private func survivor(of key: ObjectKey, other id: ManagedObjectID,
                          claimedBy: [ObjectKey: ManagedObjectID]) throws(SyncError) -> ManagedObjectID? {
        if let claimant = claimedBy[key] { return claimant }
        return try liveHolder(of: key, other: id)
    }

    /// The row other than `id` that `key` is mapped to, if it still exists.
    private func liveHolder(of key: ObjectKey, other id: ManagedObjectID) throws(SyncError) -> ManagedObjectID? {
        guard let previous = try reader.objectID(for: key), previous != id, reader.exists(previous) else { return nil }
        return previous
    }

    // MARK: Changes

    private func buildChanges() throws(SyncError) {
        var changes: [ObjectKey: ObjectChange] = [:]
        func add(_ change: ObjectChange) {
            if changes[change.key] == nil { changes[change.key] = change }
        }
        for id in inserts {
            guard let object = rows[id], let key = keys[id] else { continue }
            var change = ObjectChange(key: key, kind: replacing.contains(key) ? .replacingInsert : .insert)
            try fill(&change, from: object, named: nil, isInsert: true)
            if duplicates.contains(id), var survivor = changes[key] {
                // Survivor and duplicate both new in this window: one insert holding what the fold makes
                // of them, the duplicate's values and the members of both.
                Self.fold(change, into: &survivor)
                changes[key] = survivor
            } else if duplicates.contains(id) {
                changes[key] = change
            } else {
                add(change)
            }
        }
        for id in updateOrder {
            guard let object = rows[id], let key = keys[id], let named = updates[id] else { continue }
            var change = ObjectChange(key: key, kind: .update)
            try fill(&change, from: object, named: named, isInsert: false)
            if case let .attribute(name)? = identifiers.rules[key.entity], named?.contains(name) ?? true,
               case let value = identifiers.attributeIdentifier(of: object, entity: key.entity), value != key.globalID {
                result.changedIdentifiers.append((key.entity, key.globalID, value))
            }
            if !change.attributes.isEmpty || !change.toOnes.isEmpty || !change.memberAdds.isEmpty || !change.memberRemoves.isEmpty {
                add(change)
            }
        }
        for (_, key) in deletes where !replacing.contains(key) { add(ObjectChange(key: key, kind: .delete)) }
        result.changes = changes.values.sorted { $0.key < $1.key }
    }

    /// `duplicate`'s values over `survivor`'s, and the members of both, as `LocalDuplicateMerger` folds
    /// the rows.
    private static func fold(_ duplicate: ObjectChange, into survivor: inout ObjectChange) {
        survivor.attributes.merge(duplicate.attributes) { _, new in new }
        survivor.toOnes.merge(duplicate.toOnes) { _, new in new }
        for (name, adds) in duplicate.memberAdds {
            var members = survivor.memberAdds[name] ?? []
            for add in adds where !members.contains(where: { $0.member == add.member }) { members.append(add) }
            survivor.memberAdds[name] = members
        }
    }

    private func fill(_ change: inout ObjectChange, from object: ManagedObject, named: Set<String>?,
                      isInsert: Bool) throws(SyncError) {
        guard let shape = schema.entities[object.objectID.entityName] else { return }
        let entity = object.entity
        for name in shape.attributes where named?.contains(name) ?? true {
            guard let attribute = entity.attributesByName[name] else { continue }
            change.attributes[name] = .some(try AttributeValueReader.value(of: attribute, in: object))
        }
        for name in shape.toOnes.keys where named?.contains(name) ?? true {
            var targetKey: ObjectKey? = nil
            if let target = try reader.related(object, name).first {
                targetKey = try key(of: target.objectID)
            }
            change.toOnes[name] = .some(targetKey)
        }
        for (name, toMany) in shape.toManys where named?.contains(name) ?? true {
            var current: [ObjectKey] = []
            for member in try reader.related(object, name) {
                if let key = try key(of: member.objectID) { current.append(key) }
            }
            let present: [ObjectKey: Double?] = isInsert ? [:] : ledgerReader.presentAdds(of: ledgerReader.group(of: change.key), in: name)
            MemberDelta(current: current, present: present, isOrdered: toMany.isOrdered).record(in: &change, as: name)
        }
    }

    private func key(of id: ManagedObjectID) throws(SyncError) -> ObjectKey? {
        if let key = keys[id] { return key }
        return try reader.mappedKey(id)
    }

    /// For each entity, its relationships whose inverse is the synced canonical side, with that side's
    /// name.
    private static func nonCanonicalRelationships(model: ManagedObjectModel?, schema: LedgerSchema) -> [String: [String: Canonical]] {
        guard let model else { return [:] }
        var result: [String: [String: Canonical]] = [:]
        for entity in model.entities where schema.entities[entity.name] != nil {
            for relationship in entity.relationships where !relationship.isTransient {
                guard let inverse = model.inverseRelationship(of: relationship),
                      let destination = schema.entities[relationship.destinationEntityName],
                      destination.toOnes[inverse.name] != nil || destination.toManys[inverse.name] != nil,
                      schema.entities[entity.name]?.toOnes[relationship.name] == nil,
                      schema.entities[entity.name]?.toManys[relationship.name] == nil else { continue }
                result[entity.name, default: [:]][relationship.name] = Canonical(name: inverse.name, isToMany: inverse.isToMany)
            }
        }
        return result
    }
}
