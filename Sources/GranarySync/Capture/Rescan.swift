import Foundation
import Granary

/// Finds what changed in the store when its history can no longer say (§8.4): the app purged
/// transactions sync had not captured. Every synced object is compared with the ledger's projection,
/// and the differences become the changes of one local event.
///
/// Values equal to the projection's are not sent, so a rescan of an unchanged store records nothing and
/// cannot override a concurrent device's writes it had no reason to touch.
final class Rescan {
    /// The changes, the map entries of objects the ledger did not know, and the token the store was read at.
    struct Result {
        var changes: [ObjectChange] = []
        var localKeys: [ObjectKey: Int64] = [:]
        var historyToken: PersistentHistoryToken
        var missingIdentifiers: [String: Int] = [:]
    }

    let history: HistoryReader
    let eventStore: EventStore
    let schema: LedgerSchema
    let identifiers: GlobalIdentifierSource

    init(history: HistoryReader, eventStore: EventStore, schema: LedgerSchema, identifiers: GlobalIdentifierSource) {
        self.history = history
        self.eventStore = eventStore
        self.schema = schema
        self.identifiers = identifiers
    }

    /// The differences between the store and `ledger`'s projection.
    /// - Throws: `SyncError.storeRead`, `.eventStore`, `.globalIdentifierCountMismatch`.
    func run(ledger: Ledger) throws(SyncError) -> Result {
        let token = try history.currentToken()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: history.coordinator)
        context.name = "granary.sync.rescan"
        let reader = StoreObjectReader(context: context, store: history.store, eventStore: eventStore)
        do {
            return try context.performAndWait { () throws(SyncError) -> Result in
                try self.run(reader: reader, ledger: ledger, token: token)
            }
        } catch let error as SyncError {
            throw error
        } catch {
            throw .storeRead("rescanning the store: \(error)")
        }
    }

    private func run(reader: StoreObjectReader, ledger: Ledger, token: PersistentHistoryToken) throws(SyncError) -> Result {
        var result = Result(historyToken: token)
        var keys: [ManagedObjectID: ObjectKey] = [:]
        var objects: [(ManagedObject, ObjectKey, isNew: Bool)] = []
        var fresh: [(entity: String, objects: [ManagedObject])] = []
        for entity in schema.entities.keys.sorted() {
            var unmapped: [ManagedObject] = []
            try reader.forEachObject(of: entity) { batch throws(SyncError) in
                for object in batch {
                    if let key = try reader.mappedKey(object.objectID) {
                        keys[object.objectID] = key
                        objects.append((object, key, false))
                    } else {
                        unmapped.append(object)
                    }
                }
            }
            if !unmapped.isEmpty { fresh.append((entity, unmapped)) }
        }
        // New objects after every mapped one is known, so that a new object repeating a live object's
        // global ID is seen as the duplicate it is and gets a random one.
        var claimed = Set(keys.values)
        for (entity, unmapped) in fresh {
            let (made, missing) = try identifiers.identifiers(entity: entity, objects: unmapped)
            if missing > 0 { result.missingIdentifiers[entity, default: 0] += missing }
            for (object, globalID) in zip(unmapped, made) {
                var key = ObjectKey(entity, globalID)
                if claimed.contains(key) { key = ObjectKey(entity, GlobalIdentifierSource.randomIdentifier()) }
                claimed.insert(key)
                keys[object.objectID] = key
                objects.append((object, key, true))
            }
        }
        let projection = Projection(of: ledger, schema: schema)
        let ledgerReader = LedgerReader(ledger: ledger)
        var changes: [ObjectKey: ObjectChange] = [:]
        var seen: Set<ObjectKey> = []
        for (object, key, isNew) in objects {
            let representative = ledgerReader.existingRepresentative(key)
            seen.insert(representative ?? key)
            guard changes[key] == nil else { continue }
            if isNew, let localKey = object.objectID.primaryKey { result.localKeys[key] = localKey }
            guard let representative, let projected = projection.objects[representative] else {
                var change = ObjectChange(key: key, kind: .insert)
                try fill(&change, object: object, projected: nil, reader: reader, ledgerReader: ledgerReader, keys: keys)
                changes[key] = change
                continue
            }
            var change = ObjectChange(key: key, kind: .update)
            try fill(&change, object: object, projected: projected, reader: reader, ledgerReader: ledgerReader, keys: keys)
            if !change.attributes.isEmpty || !change.toOnes.isEmpty || !change.memberAdds.isEmpty || !change.memberRemoves.isEmpty {
                changes[key] = change
            }
        }
        for key in projection.objects.keys where !seen.contains(key) && changes[key] == nil {
            changes[key] = ObjectChange(key: key, kind: .delete)
        }
        result.changes = changes.values.sorted { $0.key < $1.key }
        return result
    }

    /// The object's values that differ from `projected` (all of them for an insert).
    private func fill(_ change: inout ObjectChange, object: ManagedObject, projected: ProjectedObject?,
                      reader: StoreObjectReader, ledgerReader: LedgerReader, keys: [ManagedObjectID: ObjectKey]) throws(SyncError) {
        guard let shape = schema.entities[change.key.entity] else { return }
        func key(_ object: ManagedObject) -> ObjectKey? {
            keys[object.objectID].map { ledgerReader.existingRepresentative($0) ?? $0 }
        }
        for name in shape.attributes {
            guard let attribute = object.entity.attributesByName[name] else { continue }
            let value = try AttributeValueReader.value(of: attribute, in: object)
            if let projected, let known = projected.attributes[name], LargeValues.isSameValue(known, value) { continue }
            change.attributes[name] = .some(value)
        }
        for name in shape.toOnes.keys {
            let target = try reader.related(object, name).first.flatMap(key)
            if let projected, let known = projected.toOnes[name], known == target { continue }
            change.toOnes[name] = .some(target)
        }
        for (name, toMany) in shape.toManys {
            let members = try reader.related(object, name).compactMap(key)
            let present: [ObjectKey: Double?] = projected == nil ? [:]
                : ledgerReader.presentAdds(of: ledgerReader.group(of: change.key), in: name)
            MemberDelta(current: members, present: present, isOrdered: toMany.isOrdered).record(in: &change, as: name)
        }
    }
}
