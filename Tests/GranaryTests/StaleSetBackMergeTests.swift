import Foundation
import Testing
@testable import Granary

/// A context that set a property back to the value it last saw, while another context saved a new value
/// for it, saving with `.mergeByPropertyObjectTrump`. What TwoContextPropertyTests' reference model caught.
@Suite struct StaleSetBackMergeTests {
    /// The name the store holds after: A and B load an employee named "r5"; B renames it "r3"; A renames
    /// it "r7" and saves; B, without merging, sets the name back to "r5" (and raises the salary when
    /// `alsoChangeSalary`) and saves.
    static func storedName(alsoChangeSalary: Bool) throws -> String {
        let url = scratchURL("stalesetback")
        defer { try? FileManager.default.removeItem(at: url) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeCompanyModel())
        try coordinator.addPersistentStore(type: .durable, at: url)
        let a = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let b = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        a.mergePolicy = .mergeByPropertyObjectTrump
        b.mergePolicy = .mergeByPropertyObjectTrump
        try a.performAndWait {
            let e = Employee(context: a)
            e.name = "r5"
            e.email = "e@x.io"
            e.salary = 1
            try a.save()
        }
        try b.performAndWait { try b.fetch(FetchRequest<Employee>()).first!.name = "r3" }
        try a.performAndWait {
            try a.fetch(FetchRequest<Employee>()).first!.name = "r7"
            try a.save()
        }
        try b.performAndWait {
            let e = try b.fetch(FetchRequest<Employee>()).first!
            e.name = "r5"
            if alsoChangeSalary { e.salary = 2 }
            try b.save()
        }
        let checker = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try checker.performAndWait { try checker.fetch(FetchRequest<Employee>()).first!.name }
    }

    // Apple: NSMergePolicy.mergeByPropertyObjectTrump — "A policy that merges conflicts between the
    // persistent store's version of the object and the current in-memory version by individual
    // property, with the in-memory changes trumping external changes." A property set back to the
    // value the object was loaded with is no in-memory change (NSMergeConflict compares with the
    // object's snapshot), so the store's newer value stays, whether or not another property changed.
    @Test func aSetBackValueIsNoChangeWhetherOrNotAnotherPropertyChanged() throws {
        let withSalary = try Self.storedName(alsoChangeSalary: true)
        let alone = try Self.storedName(alsoChangeSalary: false)
        #expect(withSalary == "r7")
        #expect(alone == "r7")
    }
}
