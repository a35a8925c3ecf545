import Foundation
@testable import Granary
import Testing

/// The fetch options of Apple's NSFetchRequest documentation (`resultType`, `returnsObjectsAsFaults`,
/// `includesPropertyValues`, `shouldRefreshRefetchedObjects`) and NSAsynchronousFetchRequest.
@Suite struct FetchOptionsTests {
    /// A store of `count` employees named e0000… with salary i, saved, and a fresh context on it.
    static func employees(_ count: Int) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            for i in 0..<count {
                let employee = Employee(context: context)
                employee.name = String(format: "e%04d", i)
                employee.salary = i
            }
            try context.save()
        }
        return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
    }

    static func sortedByName() -> FetchRequest<Employee> {
        FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)])
    }

    // NSFetchRequest.resultType: managed objects, object IDs, dictionaries or a count.
    @Test func executeAnswersAsTheResultTypeAsks() throws {
        let (_, context) = try Self.employees(5)
        try context.performAndWait { () throws in
            var request = Self.sortedByName()
            request.predicate = #Predicate { $0.salary >= 2 }
            let objects = try context.execute(request)
            #expect(objects.objects.map(\.name) == ["e0002", "e0003", "e0004"])
            request.resultType = .managedObjectID
            let ids = try context.execute(request)
            #expect(ids.objectIDs == objects.objectIDs)
            request.resultType = .dictionary
            request.propertiesToFetch = ["salary"]
            let rows = try context.execute(request)
            guard case .dictionaries(let dictionaries) = rows else { Issue.record("not dictionaries: \(rows)"); return }
            #expect(dictionaries.map { $0["salary"] as? Int64 } == [2, 3, 4])
            request.resultType = .count
            let count = try context.execute(request)
            guard case .count(3) = count else { Issue.record("not a count of 3: \(count)"); return }
        }
    }

    // NSFetchRequest.returnsObjectsAsFaults: "the objects returned from the fetch are faults".
    @Test func objectsComeBackAsFaultsWhenAskedAndLoadOnTouch() throws {
        let (_, context) = try Self.employees(20)
        try context.performAndWait { () throws in
            var request = Self.sortedByName()
            request.returnsObjectsAsFaults = true
            let employees = try context.fetch(request)
            #expect(employees.count == 20)
            #expect(employees.allSatisfy { $0.isFault })
            #expect(employees[7].name == "e0007")
            #expect(employees.allSatisfy { !$0.isFault }, "the first touch loads the result together")
            #expect(employees.map(\.salary) == Array(0..<20))

            let loaded = try context.fetch(Self.sortedByName())
            #expect(loaded.allSatisfy { !$0.isFault }, "Granary's default hands out loaded objects")
        }
    }

    // NSFetchRequest.includesPropertyValues: "If false, the fetch request doesn't include property values".
    @Test func withoutPropertyValuesTheObjectsAreFaults() throws {
        let (_, context) = try Self.employees(10)
        try context.performAndWait { () throws in
            var request = Self.sortedByName()
            request.includesPropertyValues = false
            let employees = try context.fetch(request)
            #expect(employees.allSatisfy { $0.isFault })
            #expect(employees.map(\.name) == (0..<10).map { String(format: "e%04d", $0) })
            // The IDs of a result are fetched the same way: nothing is loaded.
            let ids = try context.fetchObjectIDs(Self.sortedByName())
            #expect(ids == employees.map(\.objectID))
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: context.persistentStoreCoordinator!)
        try other.performAndWait { () throws in
            let ids = try other.fetchObjectIDs(Self.sortedByName())
            #expect(ids.count == 10)
            #expect(ids.allSatisfy { other.registeredObject(for: $0)?.isFault ?? true }, "fetching IDs loaded objects")
        }
    }

    // NSFetchRequest.shouldRefreshRefetchedObjects: "the property values of fetched objects will be
    // updated with the current values in the persistent store".
    @Test func refetchingRefreshesChangedObjectsOnlyWhenAsked() throws {
        let (coordinator, context) = try Self.employees(3)
        for refresh in [false, true] {
            try context.performAndWait { () throws in
                context.reset()
                var request = Self.sortedByName()
                request.predicate = #Predicate { $0.salary == 1 }
                let employee = try #require(try context.fetch(request).first)
                employee.salary = 1   // unchanged value, but the object is now updated here
                employee.email = "local\(refresh)@example.com"
                try ContextOptionsTests.rename(employee.objectID, to: "renamed\(refresh)", through: coordinator)
                request.shouldRefreshRefetchedObjects = refresh
                let again = try #require(try context.fetch(request).first)
                #expect(again === employee)
                #expect(employee.name == (refresh ? "renamed\(refresh)" : "e0001"), "refresh \(refresh)")
                #expect(employee.email == "local\(refresh)@example.com", "the unsaved change is kept")
                #expect(employee.hasChanges)
                context.rollback()
            }
        }
    }

    // NSAsynchronousFetchRequest: the completion block gets the result on the context's queue, with a
    // progress that counts it.
    @Test func anAsynchronousFetchMakesTheResultInChunksAndReportsProgress() throws {
        let (_, context) = try Self.employees(2_500)
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        let parent = Progress(totalUnitCount: 1)
        try context.performAndWait { () throws in
            var fetch = Self.sortedByName()
            fetch.predicate = #Predicate { $0.salary >= 100 }
            let request = AsynchronousFetchRequest(fetchRequest: fetch) { result in
                outcome.names = result.finalResult?.map(\.name)
                outcome.error = result.operationError
                outcome.progress = (result.progress.completedUnitCount, result.progress.totalUnitCount)
                outcome.onQueue = context.isOnQueue
                done.signal()
            }
            request.chunkSize = 300
            parent.becomeCurrent(withPendingUnitCount: 1)
            try context.execute(request)
            parent.resignCurrent()
        }
        #expect(done.wait(timeout: .now() + 300) == .success)
        #expect(outcome.error == nil)
        #expect(outcome.names == (100..<2_500).map { String(format: "e%04d", $0) })
        #expect(outcome.progress == (2_400, 2_400))
        #expect(outcome.onQueue)
        #expect(parent.fractionCompleted == 1, "the fetch's progress is a child of the current one")
    }

    @Test func aCancelledAsynchronousFetchEndsWithoutAResult() throws {
        let (_, context) = try Self.employees(50)
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        try context.performAndWait { () throws in
            let request = AsynchronousFetchRequest(fetchRequest: Self.sortedByName()) { result in
                outcome.names = result.finalResult?.map(\.name)
                outcome.error = result.operationError
                done.signal()
            }
            let running = try context.execute(request)
            running.cancel()
        }
        #expect(done.wait(timeout: .now() + 300) == .success)
        #expect(outcome.names == nil)
        guard case ContextError.fetchCancelled(entity: "Employee")? = outcome.error else {
            Issue.record("expected fetchCancelled, got \(String(describing: outcome.error))")
            return
        }
    }

    @Test func anAsynchronousFetchSeesUnsavedChanges() throws {
        let (_, context) = try Self.employees(5)
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        try context.performAndWait { () throws in
            let extra = Employee(context: context)
            extra.name = "e9999"
            let request = AsynchronousFetchRequest(fetchRequest: Self.sortedByName()) { result in
                outcome.names = result.finalResult?.map(\.name)
                done.signal()
            }
            try context.execute(request)
        }
        #expect(done.wait(timeout: .now() + 300) == .success)
        #expect(outcome.names == ["e0000", "e0001", "e0002", "e0003", "e0004", "e9999"])
    }

    final class Outcome: @unchecked Sendable {
        var names: [String]?
        var error: (any Error)?
        var progress: (Int64, Int64) = (0, 0)
        var onQueue = false
    }
}
