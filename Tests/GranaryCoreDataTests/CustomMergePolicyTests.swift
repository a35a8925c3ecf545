// Port of Core Data custom merge policies as apps write them: an `NSMergePolicy` subclass made with
// `init(merge:)` that overrides `resolve(constraintConflicts:)` or `resolve(optimisticLockingConflicts:)`,
// changes the objects the conflicts name, and calls `super` for the rest, as Apple's documentation of
// `NSMergePolicy` advises.
//
// Lines a porter changes beyond `import CoreData` → `import GranaryCoreData` and `@NSManaged` → `@Managed`:
// - Swift 6: the subclass restates `@unchecked Sendable` (policies are shared between contexts on
//   different queues, so their state must not change; Core Data's `NSMergePolicy` is not `Sendable`);
// - `conflict.sourceObject` is optional (it is nil in an error that crossed threads): write
//   `conflict.sourceObject as? Quake`, or `conflict.sourceObject!` where Core Data code reads it directly.
import GranaryCoreData
import Testing

/// A policy that never lets an import lower a stored quake's magnitude, and otherwise merges by
/// property with the import winning.
final class KeepStrongestMagnitudePolicy: NSMergePolicy, @unchecked Sendable {
    init() {
        super.init(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    }

    override func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        for conflict in list {
            guard let databaseObject = conflict.databaseObject as? Quake else { continue }
            for case let quake as Quake in conflict.conflictingObjects where quake.magnitude < databaseObject.magnitude {
                quake.magnitude = databaseObject.magnitude
            }
        }
        try super.resolve(constraintConflicts: list)
    }
}

/// A policy that marks a quake edited in two places as disputed, records the versions it saw, and lets
/// the context's edits win.
final class MarkDisputedPolicy: NSMergePolicy, @unchecked Sendable {
    let versions = LockedBox<[(old: Int, new: Int)]>([])

    init() {
        super.init(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    }

    override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        for conflict in list {
            versions.set(versions.value + [(conflict.oldVersionNumber, conflict.newVersionNumber)])
            if let quake = conflict.sourceObject as? Quake {
                quake.place = "disputed: " + quake.place
            }
        }
        try super.resolve(optimisticLockingConflicts: list)
    }
}

@Suite struct CustomMergePolicyTests {
    func container() -> NSPersistentContainer {
        registerEarthquakesModel()
        let container = NSPersistentContainer(name: "Earthquakes")
        container.persistentStoreDescriptions.first!.type = NSInMemoryStoreType
        container.loadPersistentStores { _, error in precondition(error == nil) }
        return container
    }

    // Apple: NSMergePolicy.resolve(constraintConflicts:) — "Resolves the conflicts in a given list";
    // Apple: NSConstraintConflict.databaseObject — "The object whose constraint values are in the store";
    // NSMergePolicy.init(merge:) with NSMergePolicyType.mergeByPropertyObjectTrumpMergePolicyType.
    @Test func aConstraintPolicySubclassKeepsTheStrongerMagnitudeAndMergesTheRest() throws {
        let container = container()
        let view = container.viewContext
        try view.performAndWait {
            let quake = Quake(context: view)
            (quake.code, quake.magnitude, quake.place, quake.time) = ("ci1", 5.5, "Ridgecrest", Date(timeIntervalSince1970: 0))
            try view.save()
        }
        let importer = container.newBackgroundContext()
        importer.mergePolicy = KeepStrongestMagnitudePolicy()
        try importer.performAndWait {
            let weaker = Quake(context: importer)
            (weaker.code, weaker.magnitude, weaker.place, weaker.time) = ("ci1", 3.0, "10 km N of Ridgecrest", Date(timeIntervalSince1970: 60))
            let stronger = Quake(context: importer)
            (stronger.code, stronger.magnitude, stronger.place, stronger.time) = ("ci2", 6.0, "Offshore", Date(timeIntervalSince1970: 60))
            try importer.save()
        }
        let checker = container.newBackgroundContext()
        let stored = try checker.performAndWait {
            let request = NSFetchRequest<Quake>(entityName: "Quake")
            request.sortDescriptors = [NSSortDescriptor(key: "code", ascending: true)]
            return try checker.fetch(request).map { "\($0.code) \($0.magnitude) \($0.place)" }
        }
        #expect(stored == ["ci1 5.5 10 km N of Ridgecrest", "ci2 6.0 Offshore"])
    }

    // Apple: NSMergePolicy.resolve(optimisticLockingConflicts:) — "Resolves the conflicts in a given
    // list"; Apple: NSMergeConflict.oldVersionNumber / newVersionNumber — the version the context read and
    // the one the store holds.
    @Test func anOptimisticLockingPolicySubclassChangesTheSourceObjectAndLetsTheContextWin() throws {
        let container = container()
        let view = container.viewContext
        let id = try view.performAndWait {
            let quake = Quake(context: view)
            (quake.code, quake.magnitude, quake.place, quake.time) = ("ci1", 4.0, "Ridgecrest", Date(timeIntervalSince1970: 0))
            try view.save()
            return quake.objectID
        }
        let policy = MarkDisputedPolicy()
        let (first, second) = (container.newBackgroundContext(), container.newBackgroundContext())
        second.mergePolicy = policy
        // Both read the quake before either saves.
        let secondQuake = try second.performAndWait { try second.existingObject(with: id) as! Quake }
        try first.performAndWait {
            (try first.existingObject(with: id) as! Quake).magnitude = 4.2
            try first.save()
        }
        try second.performAndWait {
            secondQuake.magnitude = 4.4
            try second.save()
        }
        let checker = container.newBackgroundContext()
        let (magnitude, place) = try checker.performAndWait {
            let quake = try checker.existingObject(with: id) as! Quake
            return (quake.magnitude, quake.place)
        }
        #expect(magnitude == Float(4.4))
        #expect(place == "disputed: Ridgecrest")
        let versions = policy.versions.value
        #expect(versions.count == 1 && versions.allSatisfy { $0.new > $0.old })
    }

    // Apple: NSManagedObjectContext.mergePolicy — the built-in policies by their constants, their class
    // properties and init(merge:) are one policy each.
    @Test func theBuiltInPoliciesAreTheSameWhicheverWayCoreDataCodeNamesThem() {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.mergePolicy = NSMergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
        #expect(context.mergePolicy == NSMergeByPropertyStoreTrumpMergePolicy)
        context.mergePolicy = NSMergePolicy.rollback
        #expect(context.mergePolicy == NSRollbackMergePolicy)
        #expect(context.mergePolicy.mergeType == .rollbackMergePolicyType)
        let types: [NSMergePolicyType] = [.errorMergePolicyType, .mergeByPropertyStoreTrumpMergePolicyType,
                                          .mergeByPropertyObjectTrumpMergePolicyType, .overwriteMergePolicyType, .rollbackMergePolicyType]
        #expect(types.map { NSMergePolicy(merge: $0) } == [NSErrorMergePolicy, NSMergeByPropertyStoreTrumpMergePolicy,
                                                           NSMergeByPropertyObjectTrumpMergePolicy, NSOverwriteMergePolicy, NSRollbackMergePolicy])
    }
}
