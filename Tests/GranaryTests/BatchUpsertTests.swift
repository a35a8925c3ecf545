import Foundation
import Testing
@testable import Granary

/// Batch inserts into constrained entities update what exists, as Core Data's do, and take their
/// objects from handlers; batch deletes take object IDs.
///
/// Apple: "Loading and Displaying a Large Data Feed" — the sample's quakes have a uniqueness constraint
/// on `code`, and a second import of the feed by `NSBatchInsertRequest` updates the stored quakes.
/// Apple: NSBatchInsertRequest init(entity:dictionaryHandler:) — "the handler ... returns true when
/// there are no more objects to insert".
@Suite struct BatchUpsertTests {
    func emails(_ coordinator: PersistentStoreCoordinator) throws -> [String: (name: String, salary: Int)] {
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try reader.performAndWait {
            var result: [String: (name: String, salary: Int)] = [:]
            for e in try reader.fetch(FetchRequest<Employee>()) { result[e.email ?? ""] = (e.name, e.salary) }
            return result
        }
    }

    @Test(arguments: [PersistentStore.StoreType.inMemory, .durable])
    func aSecondImportOfTheSameFeedUpdatesTheStoredObjects(_ type: PersistentStore.StoreType) throws {
        let (coordinator, context) = try makeStack(type)
        let first = try coordinator.execute(BatchInsertRequest(entityName: "Employee", objects: [
            ["name": "A", "email": "a@x.io", "salary": 1], ["name": "B", "email": "b@x.io", "salary": 2],
        ], resultType: .objectIDs))
        #expect(first.changes.inserted.count == 2)
        // The refreshed feed: one changed, one new, and a duplicate within the request (the later wins).
        let second = try coordinator.execute(BatchInsertRequest(entityName: "Employee", objects: [
            ["name": "A'", "email": "a@x.io"], ["name": "C", "email": "c@x.io", "salary": 3], ["name": "C'", "email": "c@x.io", "salary": 4],
        ], resultType: .objectIDs))
        let aID = try #require(first.objectIDs.first)
        #expect(second.count == 2 && second.objectIDs.first == aID)
        #expect(second.changes.updated == [aID] && second.changes.inserted.count == 1)
        let stored = try emails(coordinator)
        // The attribute it did not give (salary) keeps its stored value.
        #expect(stored.count == 3 && stored["a@x.io"]! == ("A'", 1) && stored["c@x.io"]! == ("C'", 4) && stored["b@x.io"]! == ("B", 2))
        // A live context that merges the result sees the update.
        try context.performAndWait {
            let a = try #require(try context.existingObject(with: aID) as? Employee)
            #expect(a.name == "A'")
        }
    }

    @Test func theDictionaryHandlerFillsOneObjectPerCallUntilItReturnsTrue() throws {
        let (coordinator, _) = try makeStack()
        var index = 0
        let result = try coordinator.execute(BatchInsertRequest(entity: try #require(coordinator.managedObjectModel.entity(named: "Employee")),
                                                                resultType: .objectIDs) { (object: inout [String: Any]) -> Bool in
            guard index < 5 else { return true }
            object["name"] = "E\(index)"
            object["email"] = "e\(index % 3)@x.io"
            object["salary"] = index
            index += 1
            return false
        })
        #expect(result.count == 3 && index == 5)
        let stored = try emails(coordinator)
        #expect(stored["e0@x.io"]! == ("E3", 3) && stored["e1@x.io"]! == ("E4", 4) && stored["e2@x.io"]! == ("E2", 2))
    }

    @Test func theManagedObjectHandlerFillsObjectsThatNoContextHolds() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            let e = Employee(context: context)
            e.name = "Old"
            e.email = "m0@x.io"
            e.salary = 50
            try context.save()
        }
        var made: [ManagedObject] = []
        let entity = try #require(coordinator.managedObjectModel.entity(named: "Employee"))
        let result = try coordinator.execute(BatchInsertRequest(entity: entity, resultType: .objectIDs, managedObjectHandler: { object in
            guard made.count < 3, let employee = object as? Employee else { return true }
            employee.name = "M\(made.count)"
            employee.email = "m\(made.count)@x.io"
            made.append(employee)
            return false
        }))
        #expect(result.changes.inserted.count == 2 && result.changes.updated.count == 1)
        #expect(made.allSatisfy { $0.managedObjectContext == nil })
        // The attributes the handler did not set keep their stored values.
        #expect(try emails(coordinator)["m0@x.io"]! == ("M0", 50))
    }

    @Test func badObjectsNameTheirPosition() throws {
        let (coordinator, _) = try makeStack()
        var calls = 0
        let error = #expect(throws: ContextError.self) {
            try coordinator.execute(BatchInsertRequest(entityName: "Employee") { (object: inout [String: Any]) -> Bool in
                calls += 1
                object["name"] = "X"
                if calls == 3 { object["salary"] = "lots" }
                return calls > 4
            })
        }
        guard case .invalidBatchObject(2, .wrongValueType("Employee", "salary", "lots", _))? = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(try emails(coordinator).isEmpty)
        #expect(throws: ContextError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Nope", dictionaryHandler: { _ in true })) }
    }

    @Test func anObjectMatchingTwoObjectsThroughTwoConstraintsFailsTheBatch() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(version: "1") {
            Entity("Account") {
                Attribute("login", .string)
                Attribute("email", .string)
                Unique("login")
                Unique("email")
            }
        })
        try coordinator.addPersistentStore(type: .inMemory)
        _ = try coordinator.execute(BatchInsertRequest(entityName: "Account", objects: [["login": "a", "email": "a@x"], ["login": "b", "email": "b@x"]]))
        let error = #expect(throws: ContextError.self) {
            try coordinator.execute(BatchInsertRequest(entityName: "Account", objects: [["login": "c", "email": "c@x"], ["login": "a", "email": "b@x"]]))
        }
        guard case .invalidBatchObject(1, .constraintViolation)? = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
    }

    // Apple: NSBatchDeleteRequest init(objectIDs:) — "Initializes a batch delete request with an array of
    // object IDs to delete."
    @Test func batchDeleteOfObjectIDsAppliesDeleteRules() throws {
        let (coordinator, context) = try makeStack()
        let (ids, badgeID, keptID) = try context.performAndWait {
            let people = (0..<3).map { i in
                let e = Employee(context: context)
                e.name = "E\(i)"
                return e
            }
            let badge = Badge(context: context)
            badge.title = "gold"
            badge.holder = people[0]
            people[1].manager = people[2]
            try context.save()
            return ([people[0].objectID, people[1].objectID], badge.objectID, people[2].objectID)
        }
        let result = try coordinator.execute(BatchDeleteRequest(objectIDs: ids + [ids[0]], resultType: .objectIDs))
        #expect(result.count == 2 && Set(result.objectIDs) == Set(ids))
        // badges cascade; the manager's reports are nullified.
        #expect(result.changes.deleted == Set(ids + [badgeID]) && result.changes.updated == [keptID])
        try context.performAndWait {
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: result.changes, into: [context])
            let kept = try #require(try context.existingObject(with: keptID) as? Employee)
            #expect(kept.reports.isEmpty)
            #expect(try context.count(for: FetchRequest<Badge>()) == 0)
            let temporary = Employee(context: context)
            #expect(throws: ContextError.self) { try coordinator.execute(BatchDeleteRequest(objectIDs: [temporary.objectID])) }
            context.rollback()
        }
        #expect(try coordinator.execute(BatchDeleteRequest(objectIDs: ids)).count == 0)
    }
}
