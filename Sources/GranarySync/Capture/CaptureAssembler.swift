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
    }

    private let reader: StoreObjectReader
    private let schema: LedgerSchema
    private let identifiers: GlobalIdentifierSource
    private let ledger: Ledger
    /// Per entity, its non-canonical relationships: the name of the canonical inverse on the destination.
    private let nonCanonical: [String: [String: String]]
    private lazy var ledgerReader = LedgerReader(ledger: ledger)
    private lazy var projection = Projection(of: ledger, schema: schema)

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
    private var result = Result()

    init(reader: StoreObjectReader, schema: LedgerSchema, identifiers: GlobalIdentifierSource, ledger: Ledger) {
        self.reader = reader
        self.schema = schema
        self.identifiers = identifiers
        self.ledger = ledger
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

    /// A link history reported on the non-canonical side (Author.books, Tag.books) is sent as a change of
    /// the canonical side of each object whose link differs from what the ledger derives (§8.1 step 6).
    /// Only the differences: re-sending an unchanged to-one would be a new write that overrides a
    /// concurrent device's change of it.
    private func translateNonCanonicalSides() throws(SyncError) {
        for id in inserts + updateOrder {
            guard let object = rows[id], let relationships = nonCanonical[id.entityName] else { continue }
            let named: Set<String>? = insertSet.contains(id) ? nil : (updates[id] ?? nil)
            for (name, canonical) in relationships.sorted(by: { $0.key < $1.key }) where named?.contains(name) ?? true {
                let current = try reader.related(object, name)
                var derived: [ObjectKey] = []
                if !insertSet.contains(id), let key = try reader.mappedKey(id),
                   let projected = projection.objects[ledgerReader.existingRepresentative(key) ?? key] {
                    if let members = projected.toManys[name] { derived = members } else if let target = projected.toOnes[name] ?? nil { derived = [target] }
                }
                var currentKeys: Set<ObjectKey> = []
                for counterpart in current {
                    if let key = try reader.mappedKey(counterpart.objectID) { currentKeys.insert(key) }
                    if try reader.mappedKey(counterpart.objectID).map({ !derived.contains($0) }) ?? true {
                        rows[counterpart.objectID] = rows[counterpart.objectID] ?? counterpart
                        try touch(counterpart.objectID, canonical)
                    }
                }
                for key in derived where !currentKeys.contains(key) {
                    guard let counterpartID = try reader.objectID(for: key) else { continue }
                    try touch(counterpartID, canonical)
                }
            }
        }
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
        var claimed: Set<ObjectKey> = []
        for entity in freshOrder {
            let ids = fresh[entity] ?? []
            let objects = ids.compactMap { rows[$0] }
            guard objects.count == ids.count else { continue }
            let (made, missing) = try identifiers.identifiers(entity: entity, objects: objects)
            if missing > 0 { result.missingIdentifiers[entity, default: 0] += missing }
            for (id, globalID) in zip(ids, made) {
                let key = ObjectKey(entity, globalID)
                keys[id] = key
                guard let localKey = id.primaryKey, claimed.insert(key).inserted else { continue }
                if let deleted = deletedKeys[key] {
                    // M13: the window deleted an object and inserted a new one under its global ID.
                    replacing.insert(key)
                    deletes[deleted] = nil
                    result.localKeys[key] = localKey
                } else if let previous = try reader.objectID(for: key), previous != id, reader.exists(previous) {
                    // A second live object with one global ID: the key stays with the object that had it,
                    // and this one's values are sent as an insert of the key (M8: one key, one object).
                    continue
                } else {
                    result.localKeys[key] = localKey
                }
            }
        }
    }

    // MARK: Changes

    private func buildChanges() throws(SyncError) {
        var changes: [ObjectKey: ObjectChange] = [:]
        func add(_ change: ObjectChange) {
            // One change per key: a second object claiming a key already sent adds nothing.
            if changes[change.key] == nil { changes[change.key] = change }
        }
        for id in inserts {
            guard let object = rows[id], let key = keys[id] else { continue }
            var change = ObjectChange(key: key, kind: replacing.contains(key) ? .replacingInsert : .insert)
            try fill(&change, from: object, named: nil, isInsert: true)
            add(change)
        }
        for id in updateOrder {
            guard let object = rows[id], let key = keys[id], let named = updates[id] else { continue }
            var change = ObjectChange(key: key, kind: .update)
            try fill(&change, from: object, named: named, isInsert: false)
            if !change.attributes.isEmpty || !change.toOnes.isEmpty || !change.memberAdds.isEmpty || !change.memberRemoves.isEmpty {
                add(change)
            }
        }
        for (_, key) in deletes where !replacing.contains(key) { add(ObjectChange(key: key, kind: .delete)) }
        result.changes = changes.values.sorted { $0.key < $1.key }
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
            if !toMany.isOrdered { current.sort() }
            let present: [ObjectKey: Double?] = isInsert ? [:] : ledgerReader.presentAdds(of: ledgerReader.group(of: change.key), in: name)
            var adds: [ObjectChange.MemberAdd] = []
            for (index, member) in current.enumerated() {
                let orderKey: Double? = toMany.isOrdered ? Double(index) : nil
                // M19: a member whose index changed is added again with its new index.
                if let known = present[member], !toMany.isOrdered || known == orderKey { continue }
                adds.append(.init(member: member, orderKey: orderKey))
            }
            let currentSet = Set(current)
            let removes = present.keys.filter { !currentSet.contains($0) }.sorted()
            if !adds.isEmpty { change.memberAdds[name] = adds }
            if !removes.isEmpty { change.memberRemoves[name] = removes }
        }
    }

    private func key(of id: ManagedObjectID) throws(SyncError) -> ObjectKey? {
        if let key = keys[id] { return key }
        return try reader.mappedKey(id)
    }

    /// For each entity, its relationships whose inverse is the synced canonical side, with that side's
    /// name.
    private static func nonCanonicalRelationships(model: ManagedObjectModel?, schema: LedgerSchema) -> [String: [String: String]] {
        guard let model else { return [:] }
        var result: [String: [String: String]] = [:]
        for entity in model.entities where schema.entities[entity.name] != nil {
            for relationship in entity.relationships where !relationship.isTransient {
                guard let inverse = model.inverseRelationship(of: relationship),
                      let destination = schema.entities[relationship.destinationEntityName],
                      destination.toOnes[inverse.name] != nil || destination.toManys[inverse.name] != nil,
                      schema.entities[entity.name]?.toOnes[relationship.name] == nil,
                      schema.entities[entity.name]?.toManys[relationship.name] == nil else { continue }
                result[entity.name, default: [:]][relationship.name] = inverse.name
            }
        }
        return result
    }
}
