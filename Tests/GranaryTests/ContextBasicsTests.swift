import Foundation
import Testing
@testable import Granary

@Suite struct ContextBasicsTests {
    @Test func insertSaveReopenAndFetchWithTypedProperties() throws {
        let url = scratchURL()
        let (coordinator, context) = try makeStack(.durable, at: url)
        let uri: URL = try context.performAndWait {
            let acme = Company(context: context)
            acme.name = "Acme"
            let ada = Employee(context: context)
            ada.name = "Ada"
            ada.salary = 120_000
            ada.company = acme
            #expect(ada.objectID.isTemporaryID && ada.isInserted)
            #expect(acme.employees == [ada])  // the inverse follows at once
            try context.save()
            #expect(!ada.objectID.isTemporaryID && !ada.isInserted && !context.hasChanges)
            return ada.objectID.uriRepresentation
        }
        try coordinator.remove(coordinator.persistentStores[0])

        let (_, reopened) = try makeStack(.durable, at: url)
        try reopened.performAndWait {
            let id = try ManagedObjectID(uriRepresentation: uri)
            let ada = try #require(try reopened.existingObject(with: id) as? Employee)
            #expect(ada.name == "Ada" && ada.salary == 120_000)
            #expect(ada.company?.name == "Acme")
            #expect(ada.company?.employees.map(\.name) == ["Ada"])
            let all = try reopened.fetch(FetchRequest<Company>())
            #expect(all.map(\.name) == ["Acme"])
        }
    }

    @Test func fetchWithPredicateSortAndLimitUsesTheIndex() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            for i in 0..<50 {
                let e = Employee(context: context)
                e.name = "E\(i)"
                e.salary = i * 1000
            }
            try context.save()
            let before = coordinator.fetchStatistics
            var request = FetchRequest<Employee>(predicate: #Predicate { $0.salary >= 10_000 && $0.salary < 20_000 },
                                                 sortBy: [SortDescriptor(\.salary, order: .reverse)], fetchLimit: 3)
            let top = try context.fetch(request)
            #expect(top.map(\.salary) == [19_000, 18_000, 17_000])
            let after = coordinator.fetchStatistics
            #expect(after.fullScans == before.fullScans, "an indexed fetch scanned the table")
            #expect(after.indexScans > before.indexScans)
            let plan = try context.explain(request)
            #expect(plan.explain.contains("bySalary"), "\(plan.explain)")
            request.fetchLimit = 0
            #expect(try context.count(for: request) == 10)
            // String-keyed, for run-time models.
            var dynamic = FetchRequest<ManagedObject>(entityName: "Employee")
            dynamic.filter = try PredicateParser.parse("salary > %@ AND name BEGINSWITH 'E4'", arguments: [40_000])
            dynamic.sortKeys = [SortKey("salary")]
            #expect(try context.fetch(dynamic).map { try $0.value(forKey: "name") as? String } == ["E41", "E42", "E43", "E44", "E45", "E46", "E47", "E48", "E49"])
        }
    }

    /// The registry holds objects strongly (for speed) but must behave as Core Data's weak one: an
    /// object nobody holds is forgotten, so the next lookup loads what the store has now; one that is
    /// held stays the same instance, with the values it had, until refreshed.
    @Test func objectsNobodyHoldsAreForgottenAndHeldOnesStay() throws {
        let (coordinator, context) = try makeStack()
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let (dropped, held): (ManagedObjectID, ManagedObjectID) = try context.performAndWait {
            let a = makeEmployee(context, "A", salary: 1)
            let b = makeEmployee(context, "B", salary: 1)
            try context.save()
            return (a.objectID, b.objectID)
        }
        let keep: Employee = try context.performAndWait {
            let all = try context.fetch(FetchRequest<Employee>())
            return try #require(all.first { $0.objectID == held })
        }
        try other.performAndWait {
            for id in [dropped, held] { try #require(try other.existingObject(with: id) as? Employee).salary = 2 }
            try other.save()
        }
        try context.performAndWait {
            #expect(context.registeredObject(for: dropped) == nil)
            #expect(context.registeredObjects.map(\.objectID) == [held])
            #expect((try context.existingObject(with: dropped) as? Employee)?.salary == 2)
            let same = try #require(try context.existingObject(with: held) as? Employee)
            #expect(same === keep && same.salary == 1)
            context.refresh(same, mergeChanges: false)
            #expect(same.salary == 2)
        }
    }

    @Test func unsavedChangesShowUpInFetches() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let a = Employee(context: context)
            a.name = "Saved"
            a.salary = 10
            try context.save()
            let b = Employee(context: context)
            b.name = "Unsaved"
            b.salary = 20
            a.salary = 30
            var request = FetchRequest<Employee>(predicate: #Predicate { $0.salary > 15 }, sortBy: [SortDescriptor(\.salary)])
            #expect(try context.fetch(request).map(\.name) == ["Unsaved", "Saved"])
            context.delete(b)
            #expect(try context.fetch(request).map(\.name) == ["Saved"])
            request.includesPendingChanges = false
            context.delete(a)
            #expect(try context.fetch(request).isEmpty)
            context.rollback()
            #expect(a.salary == 10 && !a.isDeleted)
        }
    }

    @Test func subEntitiesComeBackWithTheirClasses() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let e = Employee(context: context)
            e.name = "Emp"
            let c = Contractor(context: context)
            c.name = "Con"
            c.rate = 99.5
            try context.save()
            context.reset()
            let people = try context.fetch(FetchRequest<Person>(sortBy: [SortDescriptor(\.name)]))
            #expect(people.count == 2)
            #expect(people[0] is Contractor && people[1] is Employee)
            #expect((people[0] as? Contractor)?.rate == 99.5)
            #expect(try context.fetch(FetchRequest<Employee>()).map(\.name) == ["Emp"])
        }
    }

    @Test func objectIDsAndURIs() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let e = Employee(context: context)
            e.name = "X"
            let temporary = e.objectID
            #expect(try ManagedObjectID(uriRepresentation: temporary.uriRepresentation) == temporary)
            try context.obtainPermanentIDs(for: [e])
            #expect(!e.objectID.isTemporaryID && e.objectID.primaryKey != nil)
            try context.save()
            #expect(context.object(with: e.objectID) === e)
            #expect(throws: ObjectIDError.self) { try ManagedObjectID(uriRepresentation: URL(string: "x-granary://nope/Employee/p1")!) }
            let missing = ManagedObjectID(entityName: "Employee", store: e.objectID.persistentStoreIdentifier!, key: 999)
            #expect(throws: ContextError.self) { try context.existingObject(with: missing) }
        }
    }

    @Test func badInputIsAThrownErrorNamingEntityKeyAndValue() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let e = Employee(context: context)
            do {
                try e.setValue("lots", forKey: "salary")
                Issue.record("a string went into an integer attribute")
            } catch let error as ContextError {
                #expect(error.description.contains("Employee.salary") && error.description.contains("lots"))
            }
            #expect(throws: ContextError.self) { try e.setValue(1, forKey: "nope") }
            #expect(throws: ContextError.self) { _ = try e.value(forKey: "nope") }
            let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: context.persistentStoreCoordinator)
            let stranger = other.performAndWait { Company(context: other) }
            #expect(throws: ContextError.self) { try e.setValue(stranger, forKey: "company") }
            #expect(throws: ContextError.self) { try context.fetch(FetchRequest<ManagedObject>(entityName: "Nope")) }
        }
    }

    @Test func validationReportsEveryProblemAndWritesNothing() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            let a = Employee(context: context)
            a.name = ""              // too short
            a.email = "not-an-email" // regex
            a.salary = 5_000_000     // over the range
            do {
                try context.save()
                Issue.record("invalid objects were saved")
            } catch ContextError.validation(let errors) {
                #expect(errors.count == 3)
                #expect(errors.map(\.description).joined().contains("salary"))
            }
            #expect(try coordinator.persistentStores[0].engine.read().count(in: "Person") == 0)
        }
    }

    @Test func constraintViolationIsReported() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let a = Employee(context: context)
            a.name = "A"
            a.email = "same@x.io"
            try context.save()
            let b = Employee(context: context)
            b.name = "B"
            b.email = "same@x.io"
            do {
                try context.save()
                Issue.record("duplicate email saved")
            } catch ContextError.constraintConflicts(let conflicts) {
                #expect(conflicts.count == 1 && conflicts[0].entityName == "Person" && conflicts[0].constraint == ["email"])
                #expect(conflicts[0].constraintValues["email"] as? String == "same@x.io")
            }
        }
    }

    @Test func changedAndCommittedValues() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let e = Employee(context: context)
            e.name = "Before"
            try context.save()
            e.name = "After"
            #expect(e.isUpdated && e.hasChanges)
            #expect(e.changedValues()["name"] as? String == "After")
            #expect(e.committedValues(forKeys: ["name"])["name"] as? String == "Before")
            context.refresh(e, mergeChanges: false)
            #expect(e.isFault)
            #expect(e.name == "Before" && !e.isFault)
        }
    }
}

@Suite struct TypedAccessTests {
    final class Tiny: ManagedObject {
        @Managed var small: Int
        @Managed var label: String
    }

    @Test func aRejectedTypedValueFailsTheSaveInsteadOfCrashing() throws {
        let model = try ManagedObjectModel {
            Entity("Tiny", as: Tiny.self) {
                Attribute("small", .integer16, defaultValue: 0)
                Attribute("label", .string)
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let t = Tiny(context: context)
            #expect(t.label == "")      // required and unset: reads as empty, save reports it
            t.small = 70_000            // does not fit integer16
            #expect(t.small == 0)
            #expect(throws: (any Error).self) { try context.save() }
            #expect(try context.count(for: FetchRequest<Tiny>(includingPending: false)) == 0)
            context.rollback()
            let u = Tiny(context: context)
            u.small = 7
            u.label = "ok"
            try context.save()
            #expect(try context.fetch(FetchRequest<Tiny>()).map(\.small) == [7])
        }
    }
}

extension FetchRequest {
    init(includingPending: Bool) {
        self.init()
        includesPendingChanges = includingPending
    }
}

@Suite struct ContextSavingOptionsTests {
    @Test func obtainedPermanentIDsAreKeptBySave() throws {
        let (_, context) = try makeStack(.durable)
        try context.performAndWait {
            let objects = (0..<5).map { i -> Badge in
                let b = Badge(context: context)
                b.title = "b\(i)"
                return b
            }
            let employee = Employee(context: context)
            employee.name = "E"
            try context.obtainPermanentIDs(for: objects + [employee])
            let obtained = objects.map(\.objectID) + [employee.objectID]
            #expect(Set(obtained.compactMap(\.primaryKey)).count == 6 || Set(obtained).count == 6)
            #expect(Set(objects.compactMap(\.objectID.primaryKey)).count == 5)
            // One more object without an obtained ID gets a key after the reserved ones.
            let late = Badge(context: context)
            late.title = "late"
            try context.save()
            #expect(objects.map(\.objectID) + [employee.objectID] == obtained)
            #expect(!obtained.contains(late.objectID))
            context.reset()
            let titles = try obtained.prefix(5).map { try #require(try context.existingObject(with: $0) as? Badge).title }
            #expect(titles == ["b0", "b1", "b2", "b3", "b4"])
            #expect(try context.count(for: FetchRequest<Badge>()) == 6)
        }
    }

    @Test func aChildThatObtainedIDsCanEditItsObjectsAfterTheParentSaved() throws {
        let (coordinator, parent) = try makeStack()
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        try child.performAndWait {
            let b = Badge(context: child)
            b.title = "first"
            try child.obtainPermanentIDs(for: [b])
            try child.save()
            try parent.performAndWait { try parent.save() }
            b.title = "second"
            try child.save()
            try parent.performAndWait { try parent.save() }
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let found = try reader.performAndWait { try reader.fetch(FetchRequest<Badge>()).map(\.title) }
        #expect(found == ["second"])
    }

    @Test func aReadOnlyContextRefusesToSaveAndNamesItself() throws {
        let (coordinator, context) = try makeStack()
        context.name = "scratch"
        context.isReadOnly = true
        try context.performAndWait {
            _ = Badge(context: context).title = "never"
            do {
                try context.save()
                Issue.record("a read-only context saved")
            } catch let error as ContextError {
                guard case .readOnlyContext = error else { throw error }
                #expect(error.description.contains("scratch"))
            }
            #expect(context.hasChanges)
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let found = try reader.performAndWait { try reader.count(for: FetchRequest<Badge>()) }
        #expect(found == 0)
    }

    /// Under `swift test` on Linux the main queue runs on a worker thread (`dispatch_main`), not the
    /// main thread: a main-queue context must still accept work there.
    @Test func aMainQueueContextWorksWhereverTheMainQueueRuns() async throws {
        let (coordinator, _) = try makeStack()
        let main = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: coordinator)
        let count = try await main.perform {
            _ = Badge(context: main).title = "on main"
            try main.save()
            return try main.count(for: FetchRequest<Badge>())
        }
        #expect(count == 1)
        let titles = try await Task.detached { try main.performAndWait { try main.fetch(FetchRequest<Badge>()).map(\.title) } }.value
        #expect(titles == ["on main"])
    }
}
