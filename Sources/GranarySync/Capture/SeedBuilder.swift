import Foundation
import Granary

/// What a leech adds to the cloud's data from the store's own (M28): the seed event's changes, the ID map
/// of every local object, and the history token the store was read at.
struct Seed: Sendable {
    /// The seed event's changes, in key order: inserts of local objects the cloud does not know, and
    /// updates adding the local to-many members the cloud lacks to objects it knows. Empty for
    /// `SeedPolicy.excludeLocalData`.
    var changes: [ObjectChange] = []
    /// Every local synced object's key and primary key. With `.excludeLocalData`, objects the cloud does
    /// not know are mapped under fresh random keys, which the ledger does not hold: projecting them deletes
    /// them.
    var localKeys: [ObjectKey: Int64] = [:]
    /// The store's history token taken before the read: the first capture after the leech starts after
    /// it, so a save made during the read is captured then (values re-sent, deletes as deletes).
    var historyToken: PersistentHistoryToken
    /// Per entity, how many objects got a random ID because their identifier attribute was empty.
    var missingIdentifiers: [String: Int] = [:]
}

/// Reads every synced object of the store for a leech and judges each against the cloud's ledger
/// (§8.3 steps 3–5): unknown keys are seeded, known live keys are the same object (the cloud's values
/// win, the local to-many members are added), known dead keys are deleted.
final class SeedBuilder {
    let history: HistoryReader
    let eventStore: EventStore
    let schema: LedgerSchema
    let identifiers: GlobalIdentifierSource

    init(coordinator: PersistentStoreCoordinator, store: PersistentStore, eventStore: EventStore, schema: LedgerSchema,
         identifiers: GlobalIdentifierSource) {
        self.history = HistoryReader(coordinator: coordinator, store: store)
        self.eventStore = eventStore
        self.schema = schema
        self.identifiers = identifiers
    }

    /// The seed of the store's current data against `overlay`, the ledger holding every cloud event the
    /// leech integrated.
    /// - Throws: `SyncError.storeRead`, `.eventStore`, `.globalIdentifierCountMismatch`,
    ///   `.historyTrackingDisabled`.
    func build(overlay: Ledger, policy: SeedPolicy) throws(SyncError) -> Seed {
        // T0 first: anything saved after it is captured later, and may also be read now; read twice is
        // harmless, missed would not be.
        let token = try history.currentToken()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: history.coordinator)
        context.name = "granary.sync.seed"
        let reader = StoreObjectReader(context: context, store: history.store, eventStore: eventStore)
        var seed: Seed
        do {
            seed = try context.performAndWait { () throws(SyncError) -> Seed in
                try self.build(reader: reader, overlay: overlay, policy: policy, token: token)
            }
        } catch let error as SyncError {
            throw error
        } catch {
            throw .storeRead("reading the store for the seed: \(error)")
        }
        // The seed event is committed by the merge's finalize, which knows nothing of values; its data
        // files are stored now, ahead of it (a file left unreferenced by a failed leech is dropped by the
        // next clean-up).
        do {
            let (changes, files) = LargeValues.extract(seed.changes, writer: try eventStore.state().storeID)
            try eventStore.storeDataFiles(files)
            seed.changes = changes
        } catch {
            throw SyncError(error)
        }
        return seed
    }

    private func build(reader: StoreObjectReader, overlay: Ledger, policy: SeedPolicy,
                       token: PersistentHistoryToken) throws(SyncError) -> Seed {
        var seed = Seed(historyToken: token)
        var keys: [ManagedObjectID: ObjectKey] = [:]
        var claimed: Set<ObjectKey> = []
        var objects: [(ManagedObject, ObjectKey)] = []
        for entity in schema.entities.keys.sorted() {
            try reader.forEachObject(of: entity) { batch throws(SyncError) in
                var fresh: [ManagedObject] = []
                for object in batch {
                    if let key = try reader.mappedKey(object.objectID) {
                        keys[object.objectID] = key
                        claimed.insert(key)
                    } else {
                        fresh.append(object)
                    }
                }
                let (made, missing) = try identifiers.identifiers(entity: entity, objects: fresh)
                if missing > 0 { seed.missingIdentifiers[entity, default: 0] += missing }
                for (object, globalID) in zip(fresh, made) {
                    var key = ObjectKey(entity, globalID)
                    // Two local objects with one global ID: the second gets a random one, so that each
                    // row is one key (M8 merges objects of different devices, not two rows of one store).
                    if claimed.contains(key) { key = ObjectKey(entity, GlobalIdentifierSource.randomIdentifier()) }
                    claimed.insert(key)
                    keys[object.objectID] = key
                }
                for object in batch { if let key = keys[object.objectID] { objects.append((object, key)) } }
            }
        }
        let ledgerReader = LedgerReader(ledger: overlay)
        var changes: [ObjectKey: ObjectChange] = [:]
        for (object, key) in objects {
            guard let localKey = object.objectID.primaryKey else { continue }
            let known = overlay.object(key) != nil
            switch (known, policy) {
            case (false, .excludeLocalData):
                // Under a key the cloud cannot know: its projection is "does not exist".
                seed.localKeys[ObjectKey(key.entity, GlobalIdentifierSource.randomIdentifier())] = localKey
                continue
            case (false, .mergeAllData):
                seed.localKeys[key] = localKey
                var change = ObjectChange(key: key, kind: .insert)
                try fillInsert(&change, from: object, reader: reader, keys: keys)
                changes[key] = change
            case (true, _):
                guard seed.localKeys[key] == nil else { continue }
                seed.localKeys[key] = localKey
                guard policy == .mergeAllData, ledgerReader.exists(ledgerReader.group(of: key)) else { continue }
                var change = ObjectChange(key: key, kind: .update)
                try addMissingMembers(&change, from: object, reader: reader, ledgerReader: ledgerReader, keys: keys)
                if !change.memberAdds.isEmpty { changes[key] = change }
            }
        }
        seed.changes = changes.values.sorted { $0.key < $1.key }
        return seed
    }

    private func fillInsert(_ change: inout ObjectChange, from object: ManagedObject, reader: StoreObjectReader,
                            keys: [ManagedObjectID: ObjectKey]) throws(SyncError) {
        guard let shape = schema.entities[change.key.entity] else { return }
        for name in shape.attributes {
            guard let attribute = object.entity.attributesByName[name] else { continue }
            change.attributes[name] = .some(try AttributeValueReader.value(of: attribute, in: object))
        }
        for name in shape.toOnes.keys {
            change.toOnes[name] = .some(try reader.related(object, name).first.flatMap { keys[$0.objectID] })
        }
        for (name, toMany) in shape.toManys {
            let members = try reader.related(object, name).compactMap { keys[$0.objectID] }
            MemberDelta(current: members, present: [:], isOrdered: toMany.isOrdered).record(in: &change, as: name)
        }
    }

    /// M28's union: the local members of the known object's canonical to-manys that the cloud's ledger
    /// does not hold; for ordered ones after the cloud's, in local order.
    private func addMissingMembers(_ change: inout ObjectChange, from object: ManagedObject, reader: StoreObjectReader,
                                   ledgerReader: LedgerReader, keys: [ManagedObjectID: ObjectKey]) throws(SyncError) {
        guard let shape = schema.entities[change.key.entity] else { return }
        let group = ledgerReader.group(of: change.key)
        for (name, toMany) in shape.toManys {
            let present = ledgerReader.presentAdds(of: group, in: name)
            var next = (present.values.compactMap { $0 }.max() ?? -1) + 1
            var adds: [ObjectChange.MemberAdd] = []
            let members = try reader.related(object, name).compactMap { keys[$0.objectID] }
            for member in toMany.isOrdered ? members : members.sorted() where present[member] == nil {
                // A member the cloud knows as existing under another representative is present already.
                if let representative = ledgerReader.existingRepresentative(member), present[representative] != nil { continue }
                adds.append(.init(member: member, orderKey: toMany.isOrdered ? next : nil))
                if toMany.isOrdered { next += 1 }
            }
            if !adds.isEmpty { change.memberAdds[name] = adds }
        }
    }
}
