import Foundation
import Testing
@testable import Granary

final class Tag: ManagedObject {
    @Managed var shelf: String
    @Managed var code: Int
    @Managed var label: String?
}

/// Uniqueness constraints resolved by the merge policy at save, as Core Data does.
///
/// Apple: NSEntityDescription.uniquenessConstraints — "The uniqueness constraints of the entity ... an
/// array of arrays, each of which contains one or more NSAttributeDescription or NSString instances."
/// Apple: NSConstraintConflict — "A constraint conflict ... databaseObject, databaseSnapshot,
/// conflictingObjects, conflictingSnapshots, constraint, constraintValues."
/// Apple: NSMergePolicy — "A policy object that you use to resolve conflicts between the persistent store
/// and in-memory versions of managed objects."
@Suite struct UniquenessConstraintTests {
    func employee(_ context: ManagedObjectContext, _ name: String, email: String?, salary: Int = 0) -> Employee {
        let e = Employee(context: context)
        e.name = name
        e.email = email
        e.salary = salary
        return e
    }

    func storedEmployees(_ coordinator: PersistentStoreCoordinator) throws -> [Employee] {
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try reader.performAndWait { try reader.fetch(FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)])) }
    }

    func didSave(_ context: ManagedObjectContext, _ body: () throws -> Void) throws -> ContextChanges? {
        nonisolated(unsafe) var saved: ContextChanges?
        let token = NotificationCenter.default.addObserver(forName: .managedObjectContextDidSave, object: context, queue: nil) { note in
            saved = note.userInfo?[ContextChanges.userInfoKey] as? ContextChanges
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try body()
        return saved
    }

    // Apple: NSMergePolicy.mergeByPropertyObjectTrump — "in-memory changes trumping external changes".
    @Test(arguments: [PersistentStore.StoreType.inMemory, .durable])
    func objectTrumpMergesAnInsertIntoTheStoredObject(_ type: PersistentStore.StoreType) throws {
        let (coordinator, context) = try makeStack(type)
        let storedID = try context.performAndWait {
            let a = employee(context, "Ann", email: "ann@x.io", salary: 10)
            try context.save()
            return a.objectID
        }
        let importer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        importer.mergePolicy = .mergeByPropertyObjectTrump
        let saved = try importer.performAndWait {
            let dup = employee(importer, "Ann Again", email: "ann@x.io", salary: 20)
            let saved = try didSave(importer) { try importer.save() }
            // The duplicate left the context; the stored object carries its values under its own ID.
            #expect(dup.managedObjectContext == nil)
            let survivor = try #require(try importer.existingObject(with: storedID) as? Employee)
            #expect(survivor.name == "Ann Again" && survivor.salary == 20 && !survivor.hasChanges)
            #expect(!importer.registeredObjects.contains(dup))
            #expect(!importer.hasChanges)
            return saved
        }
        #expect(saved?.inserted.isEmpty == true && saved?.updated == [storedID])
        let stored = try storedEmployees(coordinator)
        #expect(stored.count == 1 && stored[0].objectID == storedID)
        #expect(stored[0].name == "Ann Again" && stored[0].salary == 20)
    }

    @Test func insertsOfOneSaveWithTheSameKeyBecomeOneInsertedObject() throws {
        let (coordinator, context) = try makeStack()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let saved = try context.performAndWait {
            let first = employee(context, "First", email: "k@x.io", salary: 1)
            let second = employee(context, "Second", email: "k@x.io", salary: 2)
            let third = employee(context, "Other", email: "o@x.io", salary: 3)
            let saved = try didSave(context) { try context.save() }
            // The first inserted survives with the later values.
            #expect(first.managedObjectContext === context && second.managedObjectContext == nil)
            #expect(first.name == "Second" && first.salary == 2 && !first.objectID.isTemporaryID)
            #expect(saved?.inserted == [first.objectID, third.objectID] && saved?.updated.isEmpty == true)
            return saved
        }
        #expect(saved != nil)
        #expect(try storedEmployees(coordinator).map(\.name) == ["Other", "Second"])
    }

    // Apple: NSMergePolicy.mergeByPropertyStoreTrump — "external changes trumping in-memory changes".
    @Test func storeTrumpKeepsTheStoredValues() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            employee(context, "Stored", email: "s@x.io", salary: 5).hired = nil
            try context.save()
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        other.mergePolicy = .mergeByPropertyStoreTrump
        try other.performAndWait {
            let dup = employee(other, "New", email: "s@x.io", salary: 9)
            dup.hired = Date(timeIntervalSince1970: 100)
            try other.save()
        }
        let stored = try storedEmployees(coordinator)
        // Stored values win; what the stored object lacked (hired) comes from the duplicate.
        #expect(stored.count == 1 && stored[0].name == "Stored" && stored[0].salary == 5)
        #expect(stored[0].hired == Date(timeIntervalSince1970: 100))
    }

    @Test func relationshipsOfTheDuplicateMoveToTheSurvivor() throws {
        let (coordinator, context) = try makeStack()
        let storedID = try context.performAndWait {
            let a = employee(context, "A", email: "a@x.io")
            let badge = Badge(context: context)
            badge.title = "old"
            badge.holder = a
            try context.save()
            return a.objectID
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        other.mergePolicy = .mergeByPropertyObjectTrump
        try other.performAndWait {
            let company = Company(context: other)
            company.name = "Acme"
            let dup = employee(other, "A2", email: "a@x.io")
            dup.company = company
            let badge = Badge(context: other)
            badge.title = "new"
            badge.holder = dup
            try other.save()
            // References to the duplicate now name the survivor.
            #expect(badge.holder?.objectID == storedID)
            #expect(company.employees.map(\.objectID) == [storedID])
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let survivor = try #require(try reader.existingObject(with: storedID) as? Employee)
            #expect(Set(survivor.badges.map(\.title)) == ["old", "new"])
            #expect(survivor.company?.name == "Acme")
            #expect(try reader.count(for: FetchRequest<Badge>()) == 2)
        }
    }

    // Apple: NSMergePolicy.overwrite — "saving the entire in-memory object to the persistent store".
    @Test func overwriteReplacesTheStoredStateWhole() throws {
        let (coordinator, context) = try makeStack()
        let storedID = try context.performAndWait {
            let a = employee(context, "A", email: "a@x.io", salary: 7)
            a.hired = Date(timeIntervalSince1970: 5)
            let badge = Badge(context: context)
            badge.title = "old"
            badge.holder = a
            try context.save()
            return a.objectID
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        other.mergePolicy = .overwrite
        try other.performAndWait {
            _ = employee(other, "B", email: "a@x.io", salary: 8)
            try other.save()
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let survivor = try #require(try reader.existingObject(with: storedID) as? Employee)
            #expect(survivor.name == "B" && survivor.salary == 8 && survivor.hired == nil && survivor.badges.isEmpty)
            let badge = try #require(try reader.fetch(FetchRequest<Badge>()).first)
            #expect(badge.holder == nil)
        }
    }

    // Apple: NSMergePolicy.rollback — "discarding unsaved changes".
    @Test func rollbackDropsTheDuplicateAndKeepsTheStoredObject() throws {
        let (coordinator, context) = try makeStack()
        let storedID = try context.performAndWait {
            let a = employee(context, "A", email: "a@x.io", salary: 7)
            try context.save()
            return a.objectID
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        other.mergePolicy = .rollback
        try other.performAndWait {
            let dup = employee(other, "B", email: "a@x.io", salary: 8)
            let badge = Badge(context: other)
            badge.title = "kept"
            badge.holder = dup
            try other.save()
            #expect(badge.holder?.objectID == storedID)
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let stored = try reader.fetch(FetchRequest<Employee>())
            #expect(stored.map(\.name) == ["A"] && stored[0].salary == 7)
            #expect(stored[0].badges.map(\.title) == ["kept"])
        }
    }

    // Apple: NSErrorMergePolicy — "The default merge policy for all managed object contexts."
    @Test func errorPolicyListsEveryConflict() throws {
        let (coordinator, context) = try makeStack()
        let storedID = try context.performAndWait {
            let a = employee(context, "A", email: "a@x.io", salary: 7)
            try context.save()
            return a.objectID
        }
        try context.performAndWait {
            let b = employee(context, "B", email: "a@x.io")
            let c = employee(context, "C", email: "c@x.io")
            let d = employee(context, "D", email: "c@x.io")
            do {
                try context.save()
                Issue.record("duplicates were saved")
            } catch ContextError.constraintConflicts(let conflicts) {
                #expect(conflicts.count == 2)
                let stored = try #require(conflicts.first { $0.databaseObjectID != nil })
                #expect(stored.entityName == "Person" && stored.constraint == ["email"])
                #expect(stored.constraintValues["email"] as? String == "a@x.io")
                #expect(stored.databaseObjectID == storedID && stored.databaseSnapshot?["name"] as? String == "A")
                #expect(stored.conflictingObjectIDs == [b.objectID] && stored.conflictingSnapshots.first?["name"] as? String == "B")
                #expect(stored.conflictingObjects.isEmpty && stored.databaseObject == nil)
                let inSave = try #require(conflicts.first { $0.databaseObjectID == nil })
                #expect(inSave.conflictingObjectIDs == [c.objectID, d.objectID])
                #expect(ContextError.constraintConflicts(conflicts).description.contains("a@x.io"))
            }
            // Nothing was written, and the context still holds its changes.
            #expect(context.insertedObjects.count == 3)
        }
        #expect(try storedEmployees(coordinator).count == 1)
    }

    /// A big save checks uniqueness only once a write breaks a unique index: the same
    /// conflicts as a check before writing, and nothing written.
    @Test(arguments: [PersistentStore.StoreType.inMemory, .durable])
    func errorPolicyListsEveryConflictOfABigSave(_ type: PersistentStore.StoreType) throws {
        let (coordinator, context) = try makeStack(type)
        let storedID = try context.performAndWait {
            let a = employee(context, "A", email: "a@x.io", salary: 7)
            try context.save()
            return a.objectID
        }
        let count = DeferredUniquenessCheck.threshold + 500
        try context.performAndWait {
            for n in 0..<count { _ = employee(context, "E\(n)", email: "e\(n)@x.io") }
            let b = employee(context, "B", email: "a@x.io")
            let c = employee(context, "C", email: "e7@x.io")
            do {
                try context.save()
                Issue.record("duplicates were saved")
            } catch ContextError.constraintConflicts(let conflicts) {
                #expect(conflicts.count == 2)
                let stored = try #require(conflicts.first { $0.databaseObjectID != nil })
                #expect(stored.databaseObjectID == storedID && stored.conflictingObjectIDs == [b.objectID])
                let inSave = try #require(conflicts.first { $0.databaseObjectID == nil })
                #expect(inSave.constraintValues["email"] as? String == "e7@x.io")
                #expect(inSave.conflictingObjectIDs.count == 2 && inSave.conflictingObjectIDs.last == c.objectID)
            }
            #expect(context.insertedObjects.count == count + 2)
            // Without the duplicates, the same save goes through.
            context.delete(b)
            context.delete(c)
            try context.save()
        }
        #expect(try storedEmployees(coordinator).count == count + 1)
    }

    /// A big save that links its rows runs the graph pass beside its writes and checks uniqueness only
    /// when a write fails: a duplicate among a thousand linked rows still fails the save whole under
    /// the error policy, and is merged under object trump, with every link two-sided in the store.
    @Test(arguments: [false, true])
    func aDuplicateInABigLinkedSaveIsFoundAndResolved(objectTrump: Bool) throws {
        let (coordinator, context) = try makeStack(.durable)
        let count = PendingGraphRepair.threshold + 100
        let (storedID, bossID) = try context.performAndWait {
            let a = employee(context, "A", email: "a@x.io", salary: 7)
            let boss = employee(context, "Boss", email: "boss@x.io")
            try context.save()
            return (a.objectID, boss.objectID)
        }
        if objectTrump { context.mergePolicy = .mergeByPropertyObjectTrump }
        try context.performAndWait {
            let boss = try #require(try context.existingObject(with: bossID) as? Employee)
            for n in 0..<count { employee(context, "E\(n)", email: "e\(n)@x.io").manager = boss }
            let dup = employee(context, "A again", email: "a@x.io", salary: 9)
            dup.manager = boss
            if objectTrump {
                try context.save()
            } else {
                #expect(throws: ContextError.self) { try context.save() }
                #expect(context.insertedObjects.count == count + 1)
            }
        }
        let stored = try storedEmployees(coordinator)
        guard objectTrump else {
            #expect(stored.count == 2)
            return
        }
        #expect(stored.count == count + 2)
        let a = try #require(stored.first { $0.objectID == storedID })
        #expect(a.salary == 9 && a.name == "A again")
        // Two-sided: the boss's reports are exactly the employees whose manager is the boss.
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let all = try reader.fetch(FetchRequest<Employee>())
            let boss = try #require(all.first { $0.objectID == bossID })
            let managed = Set(all.filter { $0.manager?.objectID == bossID }.map(\.objectID))
            #expect(Set(boss.reports.map(\.objectID)) == managed)
            #expect(managed.count == count + 1 && managed.contains(storedID))
        }
    }

    @Test func aKeySavedByAnotherContextAfterThisOneLookedIsResolvedAtWriteTime() throws {
        let (coordinator, _) = try makeStack(.durable)
        let late = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        late.mergePolicy = .mergeByPropertyObjectTrump
        let early = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let dup = late.performAndWait { employee(late, "Late", email: "race@x.io", salary: 2) }
        let earlyID = try early.performAndWait {
            let e = employee(early, "Early", email: "race@x.io", salary: 1)
            try early.save()
            return e.objectID
        }
        try late.performAndWait {
            try late.save()
            #expect(dup.managedObjectContext == nil)
            #expect((try late.existingObject(with: earlyID) as? Employee)?.name == "Late")
        }
        let stored = try storedEmployees(coordinator)
        #expect(stored.count == 1 && stored[0].objectID == earlyID && stored[0].salary == 2)
    }

    @Test func subEntitiesShareTheirParentsConstraint() throws {
        let (coordinator, context) = try makeStack()
        let storedID = try context.performAndWait {
            let e = employee(context, "Emp", email: "p@x.io", salary: 3)
            try context.save()
            return e.objectID
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        other.mergePolicy = .mergeByPropertyObjectTrump
        try other.performAndWait {
            let contractor = Contractor(context: other)
            contractor.name = "Con"
            contractor.email = "p@x.io"
            contractor.rate = 5
            try other.save()
            #expect(contractor.managedObjectContext == nil)
        }
        let stored = try storedEmployees(coordinator)
        // The stored employee takes the shared properties; the contractor's own (rate) has nowhere to go.
        #expect(stored.count == 1 && stored[0].objectID == storedID && stored[0].name == "Con" && stored[0].salary == 3)
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        #expect(try reader.performAndWait { try reader.count(for: FetchRequest<Contractor>()) } == 0)
    }

    static func tagModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Tag", as: Tag.self) {
                Attribute("shelf", .string)
                Attribute("code", .integer64)
                Attribute("label", .string, optional: true)
                Unique("shelf", "code")
            }
        }
    }

    @Test func compositeConstraintsConflictOnlyWhenEveryValueMatches() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.tagModel())
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.mergePolicy = .mergeByPropertyObjectTrump
        try context.performAndWait {
            for (shelf, code, label) in [("a", 1, "a1"), ("a", 2, "a2"), ("b", 1, "b1"), ("a", 1, "a1'")] {
                let tag = Tag(context: context)
                tag.shelf = shelf
                tag.code = code
                tag.label = label
            }
            try context.save()
            let tags = try context.fetch(FetchRequest<Tag>(sortBy: [SortDescriptor(\.shelf), SortDescriptor(\.code)]))
            #expect(tags.map { "\($0.shelf)\($0.code)=\($0.label ?? "")" } == ["a1=a1'", "a2=a2", "b1=b1"])
        }
    }

    @Test func aChildsDuplicatesAreResolvedWhenTheParentSaves() throws {
        let (coordinator, root) = try makeStack()
        root.mergePolicy = .mergeByPropertyObjectTrump
        let storedID = try root.performAndWait {
            let e = employee(root, "Stored", email: "c@x.io", salary: 1)
            try root.save()
            return e.objectID
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: root)
        try child.performAndWait {
            _ = employee(child, "Child", email: "c@x.io", salary: 2)
            try child.save()
        }
        try root.performAndWait {
            #expect(root.insertedObjects.count == 1)
            try root.save()
            #expect(try root.insertedObjects.isEmpty && (root.existingObject(with: storedID) as? Employee)?.name == "Child")
        }
        #expect(try storedEmployees(coordinator).map(\.name) == ["Child"])
    }

    @Test func aSavedObjectEditedIntoADuplicateIsMergedAndDeleted() throws {
        let (coordinator, context) = try makeStack()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let (keptID, editedID) = try context.performAndWait {
            let kept = employee(context, "Kept", email: "k@x.io", salary: 1)
            let edited = employee(context, "Edited", email: "e@x.io", salary: 2)
            try context.save()
            edited.email = "k@x.io"
            edited.salary = 3
            try context.save()
            #expect(kept.salary == 3 && kept.name == "Kept")
            return (kept.objectID, edited.objectID)
        }
        let stored = try storedEmployees(coordinator)
        #expect(stored.map(\.objectID) == [keptID] && !stored.map(\.objectID).contains(editedID))
    }

    /// A policy of one's own: it picks the higher salary, then lets object-trump merge the rest.
    final class HigherSalaryWins: MergePolicy, @unchecked Sendable {
        // @unchecked: no state of its own.
        init() { super.init(merge: .mergeByPropertyObjectTrump) }
        override func resolve(constraintConflicts list: [ConstraintConflict]) throws {
            for conflict in list {
                let all = (conflict.conflictingObjects + [conflict.databaseObject].compactMap { $0 }).compactMap { $0 as? Employee }
                let best = all.map(\.salary).max() ?? 0
                for employee in all { employee.salary = best }
            }
            try super.resolve(constraintConflicts: list)
        }
    }

    // Apple: NSMergePolicy init(merge:) — "If you override this method in a subclass, you should invoke
    // the superclass's implementation with the merge policy that is closest to the behavior you want."
    @Test func aCustomPolicyChangesTheObjectsThenCallsSuper() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            _ = employee(context, "Rich", email: "r@x.io", salary: 900)
            try context.save()
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        other.mergePolicy = HigherSalaryWins()
        try other.performAndWait {
            _ = employee(other, "Poor", email: "r@x.io", salary: 100)
            try other.save()
        }
        let stored = try storedEmployees(coordinator)
        #expect(stored.count == 1 && stored[0].name == "Poor" && stored[0].salary == 900)
    }

    final class CountingPolicy: MergePolicy, @unchecked Sendable {
        // @unchecked: the test reads the count after the save, on the same queue.
        nonisolated(unsafe) var seen: [MergeConflict] = []
        init() { super.init(merge: .mergeByPropertyStoreTrump) }
        override func resolve(optimisticLockingConflicts list: [MergeConflict]) throws {
            seen += list.map { $0 }
            #expect(list.allSatisfy { $0.sourceObject != nil && $0.persistedSnapshot != nil && $0.cachedSnapshot != nil })
            try super.resolve(optimisticLockingConflicts: list)
        }
    }

    @Test func aCustomPolicySeesOptimisticLockingConflictsWithTheirObjects() throws {
        let (coordinator, context) = try makeStack()
        let id = try context.performAndWait {
            let e = employee(context, "A", email: nil, salary: 1)
            try context.save()
            return e.objectID
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let policy = CountingPolicy()
        other.mergePolicy = policy
        try other.performAndWait {
            let mine = try #require(try other.existingObject(with: id) as? Employee)
            try context.performAndWait {
                (try context.existingObject(with: id) as? Employee)?.salary = 2
                try context.save()
            }
            mine.name = "B"
            try other.save()
            #expect(mine.salary == 2 && mine.name == "B")
        }
        #expect(policy.seen.count == 1 && policy.seen[0].objectSnapshot?["name"] as? String == "B")
        #expect(policy.seen[0].persistedSnapshot?["salary"] as? Int64 == 2)
    }

    /// One save may hand a unique value from one object to another: the engine checks each row as it is
    /// written, so the save writes deleted rows first, and rows taking a value after the rows giving it up.
    @Test(arguments: [PersistentStore.StoreType.inMemory, .durable])
    func aSaveMayMoveAUniqueValueBetweenObjects(_ type: PersistentStore.StoreType) throws {
        let (coordinator, context) = try makeStack(type)
        try context.performAndWait {
            let a = employee(context, "A", email: "a@x.io"), b = employee(context, "B", email: "b@x.io")
            let c = employee(context, "C", email: "c@x.io")
            try context.save()
            // A chain (B takes A's value, A a new one), an insert of C's value while C is deleted, an insert
            // of B's old value.
            b.email = "a@x.io"
            a.email = "z@x.io"
            context.delete(c)
            _ = employee(context, "D", email: "c@x.io")
            _ = employee(context, "E", email: "b@x.io")
            try context.save()
        }
        #expect(try storedEmployees(coordinator).map { "\($0.name)=\($0.email ?? "")" } == ["A=z@x.io", "B=a@x.io", "D=c@x.io", "E=b@x.io"])
    }

    /// Two objects swapping their values cannot be written one row at a time: one of them is taken out and
    /// written back last, and the store's history reports two updates, as the save made them.
    @Test func twoObjectsMaySwapAUniqueValue() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeCompanyModel())
        try coordinator.addPersistentStore(type: .durable, at: scratchURL(), options: .init(persistentHistoryTracking: true))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let token = try context.performAndWait {
            let a = employee(context, "A", email: "a@x.io"), b = employee(context, "B", email: "b@x.io")
            try context.save()
            let token = coordinator.currentPersistentHistoryToken()
            a.email = "b@x.io"
            b.email = "a@x.io"
            try context.save()
            return token
        }
        #expect(try storedEmployees(coordinator).map { "\($0.name)=\($0.email ?? "")" } == ["A=b@x.io", "B=a@x.io"])
        let changes = try coordinator.execute(.fetchHistory(after: token)).transactions.flatMap(\.changes)
        #expect(changes.count == 2 && changes.allSatisfy { $0.changeType == .update && $0.updatedProperties == ["email"] })
    }

    /// Rows that would truly share a value after the save still fail it (the check before writing finds
    /// them; a cycle of updates never hides one).
    @Test func aSaveEndingWithSharedValuesStillFails() throws {
        let (coordinator, context) = try makeStack(.durable)
        try context.performAndWait {
            let a = employee(context, "A", email: "a@x.io"), b = employee(context, "B", email: "b@x.io")
            try context.save()
            a.email = "c@x.io"
            b.email = "c@x.io"
            #expect(throws: ContextError.self) { try context.save() }
        }
        #expect(try storedEmployees(coordinator).map { "\($0.name)=\($0.email ?? "")" } == ["A=a@x.io", "B=b@x.io"])
    }

    @Test func builtInPoliciesAreSharedValues() {
        #expect(MergePolicy.error == MergePolicy(merge: .error))
        #expect(MergePolicy.rollback.mergeType == .rollback && MergePolicy.overwrite != .rollback)
        #expect(HigherSalaryWins() != MergePolicy.mergeByPropertyObjectTrump)
        let policies: Set<MergePolicy> = [.error, .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .overwrite, .rollback, .error]
        #expect(policies.count == 5)
    }
}
