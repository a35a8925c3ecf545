import Foundation
@testable import Granary
import Testing

/// The context options Apple's NSManagedObjectContext documentation describes for faults and memory:
/// `shouldDeleteInaccessibleFaults`, `stalenessInterval`, `retainsRegisteredObjects`.
@Suite struct ContextOptionsTests {
    /// A durable store with three saved employees, a second coordinator sharing it (another "process"
    /// as far as row caching goes), and the employees' IDs.
    static func sharedStore() throws -> (PersistentStoreCoordinator, PersistentStoreCoordinator, [ManagedObjectID]) {
        let (coordinator, _, ids) = try RelationshipFaultTests.savedCompany()
        let other = PersistentStoreCoordinator(managedObjectModel: coordinator.managedObjectModel)
        try other.addPersistentStore(sharing: coordinator.persistentStores[0])
        return (coordinator, other, ids)
    }

    static func rename(_ id: ManagedObjectID, to name: String, through coordinator: PersistentStoreCoordinator) throws {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            try context.existingObject(with: id).setValue(name, forKey: "name")
            try context.save()
        }
    }

    static func name(of object: ManagedObject) throws -> String? { try object.value(forKey: "name") as? String }

    // NSManagedObjectContext.shouldDeleteInaccessibleFaults: "If true, the context marks faults it
    // cannot fulfill as deleted, with nil/0 property values."
    @Test func anInaccessibleFaultBecomesADeletedObjectByDefault() throws {
        let (coordinator, _, ids) = try RelationshipFaultTests.savedCompany()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        #expect(context.shouldDeleteInaccessibleFaults)
        try context.performAndWait { () throws in
            let fault = context.object(with: ids[2])
            #expect(fault.isFault)
            let deleter = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try deleter.performAndWait {
                deleter.delete(try deleter.existingObject(with: ids[2]))
                try deleter.save()
            }
            #expect(try Self.name(of: fault) == nil, "the properties read as defaults")
            #expect(!fault.isFault)
            #expect(fault.isDeleted, "the fault became a deleted object")
            #expect(!context.deletedObjects.contains(fault), "no row is left for a save to delete")
            #expect(!context.hasChanges)
            try context.save()
        }
    }

    @Test func withoutTheOptionFiringAnInaccessibleFaultStopsTheProgram() throws {
        let url = scratchURL("inaccessible")
        defer { try? FileManager.default.removeItem(at: url) }
        let outcome = try ChildProcess.run("granary-crashtest", ["inaccessible-fault", url.path])
        #expect(outcome.out.contains("firing"), "the child did not get to the fault: \(outcome.out)")
        #expect(!outcome.out.contains("survived"), "firing an inaccessible fault went on: \(outcome.out)")
        #expect(outcome.reason == .uncaughtSignal, "the child was not stopped: \(outcome.out)")
    }

    // NSManagedObjectContext.stalenessInterval: "the maximum length of time that may have elapsed since
    // the store previously fetched data before fulfilling a fault issues a new fetch rather than using
    // the previously-fetched data."
    @Test func aZeroIntervalAlwaysReadsTheStore() throws {
        let (coordinator, other, ids) = try Self.sharedStore()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        #expect(context.stalenessInterval == 0)
        try context.performAndWait { () throws in
            let employee = try context.existingObject(with: ids[0])
            #expect(try Self.name(of: employee) == "e0")
            try Self.rename(ids[0], to: "renamed elsewhere", through: other)
            context.refresh(employee, mergeChanges: false)
            #expect(try Self.name(of: employee) == "renamed elsewhere")
        }
    }

    @Test func aNegativeIntervalReusesWhatWasLoadedUntilItIsSetBackToZero() throws {
        let (coordinator, other, ids) = try Self.sharedStore()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.stalenessInterval = -1
        try context.performAndWait { () throws in
            let employee = context.object(with: ids[0])
            #expect(try Self.name(of: employee) == "e0")
            try Self.rename(ids[0], to: "renamed elsewhere", through: other)
            context.refresh(employee, mergeChanges: false)
            #expect(employee.isFault)
            #expect(try Self.name(of: employee) == "e0", "the values loaded before are reused")
            context.stalenessInterval = 0
            context.refresh(employee, mergeChanges: false)
            #expect(try Self.name(of: employee) == "renamed elsewhere")
        }
    }

    @Test func savesThroughTheSameCoordinatorAreNeverHidden() throws {
        let (coordinator, _, ids) = try Self.sharedStore()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.stalenessInterval = -1
        try context.performAndWait { () throws in
            let employee = context.object(with: ids[1])
            #expect(try Self.name(of: employee) == "e1")
            try Self.rename(ids[1], to: "renamed here", through: coordinator)
            context.refresh(employee, mergeChanges: false)
            #expect(try Self.name(of: employee) == "renamed here")
        }
    }

    @Test func aPositiveIntervalReusesValuesOnlyWhileTheyAreThatYoung() throws {
        let (coordinator, other, ids) = try Self.sharedStore()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.stalenessInterval = 3600
        try context.performAndWait { () throws in
            let employee = context.object(with: ids[2])
            #expect(try Self.name(of: employee) == "e2")
            try Self.rename(ids[2], to: "renamed elsewhere", through: other)
            context.refresh(employee, mergeChanges: false)
            #expect(try Self.name(of: employee) == "e2", "an hour has not passed")
            Thread.sleep(forTimeInterval: 0.05)
            context.stalenessInterval = 0.01
            context.refresh(employee, mergeChanges: false)
            #expect(try Self.name(of: employee) == "renamed elsewhere", "the kept values are older than 10 ms")
        }
    }

    @Test func batchedFaultsUseTheKeptValuesToo() throws {
        let (coordinator, other, ids) = try Self.sharedStore()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.stalenessInterval = -1
        try context.performAndWait { () throws in
            let employees = ids.map { context.object(with: $0) }
            context.fulfillFaults(employees)
            #expect(try employees.map(Self.name(of:)) == ["e0", "e1", "e2"])
            for id in ids { try Self.rename(id, to: "x", through: other) }
            for employee in employees { context.refresh(employee, mergeChanges: false) }
            context.fulfillFaults(employees)
            #expect(try employees.map(Self.name(of:)) == ["e0", "e1", "e2"])
        }
    }

    // NSManagedObjectContext.retainsRegisteredObjects: "A Boolean value that indicates whether the
    // context keeps strong references to all registered managed objects."
    @Test func retainingKeepsEveryRegisteredObjectAlive() throws {
        let (coordinator, _, ids) = try RelationshipFaultTests.savedCompany()
        for retains in [false, true] {
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            context.retainsRegisteredObjects = retains
            try context.performAndWait { () throws in
                _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Employee")).count
                let kept = context.registeredObjects.count
                #expect(kept == (retains ? ids.count : 0), "retainsRegisteredObjects = \(retains)")
                if retains {
                    #expect(ids.allSatisfy { context.registeredObject(for: $0) != nil })
                    context.retainsRegisteredObjects = false
                    #expect(context.registeredObjects.isEmpty, "turned off, the next sweep drops what nobody holds")
                }
            }
        }
    }
}
