import Foundation
import Synchronization
import Testing
@testable import Granary

/// Contexts on their queues under Swift concurrency: async `perform`, main-queue contexts driven from
/// the main actor, many private contexts saving at once, and the async sequences of notifications.
@Suite struct ContextConcurrencyTests {
    @Test func performRunsOnTheContextsQueueAndReturnsItsResult() async throws {
        let (_, context) = try makeStack()
        #expect(!context.isOnQueue)
        let onQueue = try await context.perform { context.isOnQueue }
        #expect(onQueue)
        let id: ManagedObjectID = try await context.perform {
            let e = Employee(context: context)
            e.name = "Ada"
            try context.save()
            return e.objectID
        }
        #expect(!id.isTemporaryID)
    }

    /// Typed properties find their index in a per-entity table that readers scan without a lock while
    /// the first accesses fill it: contexts on a fresh model, on several threads at once, must each
    /// read back exactly what they wrote.
    @Test func typedPropertiesOfAFreshModelReadRightFromManyThreadsAtOnce() async throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeCompanyModel())
        try coordinator.addPersistentStore(type: .inMemory)
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                    return context.performAndWait {
                        var wrong = 0
                        for i in 0..<200 {
                            let e = Employee(context: context)
                            e.name = "w\(worker)-\(i)"
                            e.salary = worker * 1_000 + i
                            e.email = "\(worker).\(i)@x.io"
                            if e.name != "w\(worker)-\(i)" || e.salary != worker * 1_000 + i || e.email != "\(worker).\(i)@x.io" { wrong += 1 }
                        }
                        return wrong
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test func performRethrowsTheBodysError() async throws {
        let (_, context) = try makeStack()
        await #expect(throws: ContextError.self) {
            try await context.perform {
                let e = Employee(context: context)
                e.name = ""  // fails the length rule
                try context.save()
            }
        }
    }

    @Test @MainActor func aMainQueueContextWorksFromTheMainActor() async throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeCompanyModel())
        try coordinator.addPersistentStore(type: .inMemory)
        let view = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: coordinator)
        #expect(view.isOnQueue)
        let e = Employee(context: view)
        e.name = "on main"
        try view.save()
        // A background context's save reaches the view context through the main queue.
        view.automaticallyMergesChangesFromParent = true
        let background = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try await background.perform {
            let other = Employee(context: background)
            other.name = "from background"
            try background.save()
        }
        // Let the scheduled merge run on the main queue.
        try await Task.sleep(for: .milliseconds(10))
        await Task.yield()
        #expect(try view.count(for: FetchRequest<Employee>()) == 2)
        #expect(try view.fetch(FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["from background", "on main"])
    }

    @Test func manyPrivateContextsSavingAtOnceLoseNothing() async throws {
        let (coordinator, seed) = try makeStack(.durable)
        defer { try? FileManager.default.removeItem(at: coordinator.persistentStores[0].url!) }
        let target: ManagedObjectID = try seed.performAndWait {
            let e = Employee(context: seed)
            e.name = "shared"
            try seed.save()
            return e.objectID
        }
        // Four contexts insert 50 objects each in 10 saves, and all edit one shared object's salary
        // (object trump: every save succeeds, the last one wins).
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                    context.mergePolicy = .mergeByPropertyObjectTrump
                    for batch in 0..<10 {
                        try await context.perform {
                            for i in 0..<5 {
                                let e = Employee(context: context)
                                e.name = "w\(worker)-\(batch)-\(i)"
                                e.email = "w\(worker)-\(batch)-\(i)@x.io"
                            }
                            let shared = try context.existingObject(with: target) as! Employee
                            shared.salary = worker * 100 + batch
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let check = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try check.performAndWait {
            #expect(try check.count(for: FetchRequest<Employee>()) == 201)
            let emails = Set(try check.fetch(FetchRequest<Employee>()).compactMap(\.email))
            #expect(emails.count == 200)
            let shared = try check.existingObject(with: target) as! Employee
            #expect(shared.salary % 100 == 9, "the last save of some worker wins: \(shared.salary)")
        }
    }

    @Test func eventsArriveInOrderAsAnAsyncSequence() async throws {
        let (_, context) = try makeStack()
        let events = context.events()
        let id: ManagedObjectID = try await context.perform {
            let e = Employee(context: context)
            e.name = "Ada"
            context.processPendingChanges()
            try context.save()
            return e.objectID
        }
        var seen: [ContextEvent] = []
        for await event in events {
            seen.append(event)
            if case .didSave = event { break }
        }
        #expect(seen.count == 3)
        guard seen.count == 3 else { return }
        if case .objectsDidChange(let changes) = seen[0] { #expect(changes.inserted.count == 1) } else { Issue.record("first: \(seen[0])") }
        #expect(seen[1] == .willSave)
        #expect(seen[2] == .didSave(ContextChanges(inserted: [id])))
    }

    @Test func theCoordinatorsSequenceCarriesEveryContextsSaves() async throws {
        let (coordinator, a) = try makeStack()
        let b = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let saves = coordinator.didSaveChanges()
        for (context, name) in [(a, "from a"), (b, "from b")] {
            try await context.perform {
                let e = Employee(context: context)
                e.name = name
                try context.save()
            }
        }
        var inserted = 0
        for await changes in saves {
            inserted += changes.inserted.count
            if inserted == 2 { break }
        }
        #expect(inserted == 2)
    }

    @Test func aContextsSequenceEndsWhenTheContextGoesAway() async throws {
        let (coordinator, _) = try makeStack()
        var context: ManagedObjectContext? = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let events = context!.events()
        let consumer = Task {
            var count = 0
            for await _ in events { count += 1 }
            return count
        }
        context = nil
        #expect(await consumer.value == 0)
    }
}
