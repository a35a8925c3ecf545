import Foundation
import Granary

/// Folds a local object into another of the same global identifier (M8 on one device).
///
/// The app may create an object whose global identifier another object of the store already has — a
/// default folder made at every first launch, after sync brought the other device's. Capture keeps the
/// key with the object that had it and sends the newcomer's values as an insert of that key; the ledger
/// then holds one object with the newcomer's values (the newest write) and the members of both. This
/// makes the store say the same: the survivor takes the duplicate's attributes and to-ones, gains its
/// to-many members and referrers, and the duplicate is deleted once emptied, so no delete rule acts. The
/// save is the ensemble's (author `granary.sync`), so capture does not send it: the insert already said it.
enum LocalDuplicateMerger {
    struct Pair: Hashable, Sendable {
        var duplicate: ManagedObjectID
        var survivor: ManagedObjectID
    }

    /// Merges each pair in one save through `coordinator`; pairs whose objects are gone are skipped.
    /// - Throws: `SyncError.storeSave` when the save fails (the duplicates stay; nothing is lost).
    static func merge(_ pairs: [Pair], coordinator: PersistentStoreCoordinator) throws(SyncError) -> ContextChanges {
        guard !pairs.isEmpty else { return ContextChanges() }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.transactionAuthor = SyncConstants.mergeAuthor
        context.name = SyncConstants.mergeContextNamePrefix + "duplicates." + UUID().uuidString
        do {
            return try context.performAndWait { () throws -> ContextChanges in
                for pair in pairs {
                    guard let duplicate = try? context.existingObject(with: pair.duplicate),
                          let survivor = try? context.existingObject(with: pair.survivor), duplicate !== survivor else { continue }
                    try fold(duplicate, into: survivor)
                    context.delete(duplicate)
                }
                guard context.hasChanges else { return ContextChanges() }
                let changes = ContextChanges(inserted: Set(context.insertedObjects.map(\.objectID)),
                                             updated: Set(context.updatedObjects.map(\.objectID)),
                                             deleted: Set(context.deletedObjects.map(\.objectID)))
                try context.save()
                return changes
            }
        } catch {
            throw .storeSave("merging \(pairs.count) local duplicate\(pairs.count == 1 ? "" : "s") into their survivors: \(error)")
        }
    }

    private static func fold(_ duplicate: ManagedObject, into survivor: ManagedObject) throws {
        let entity = duplicate.entity
        for attribute in entity.attributes where !attribute.isTransient && attribute.derivationExpression == nil {
            try survivor.setValue(try duplicate.value(forKey: attribute.name), forKey: attribute.name)
        }
        for relationship in entity.relationships where !relationship.isTransient {
            let name = relationship.name
            if !relationship.isToMany {
                let target = try duplicate.value(forKey: name) as? ManagedObject
                try survivor.setValue(target === duplicate ? survivor : target, forKey: name)
                try duplicate.setValue(nil, forKey: name)
            } else if relationship.isOrdered {
                let members = duplicate.mutableOrderedSetValue(forKey: name)
                let moving = members.array.compactMap { $0 as? ManagedObject }
                members.removeAllObjects()
                let target = survivor.mutableOrderedSetValue(forKey: name)
                for member in moving where !target.contains(member) { target.add(member === duplicate ? survivor : member) }
            } else {
                let members = duplicate.mutableSetValue(forKey: name)
                let moving = members.allObjects.compactMap { $0 as? ManagedObject }
                members.removeAllObjects()
                let target = survivor.mutableSetValue(forKey: name)
                for member in moving { target.add(member === duplicate ? survivor : member) }
            }
        }
    }
}
