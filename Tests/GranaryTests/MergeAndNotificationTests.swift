import Foundation
import Synchronization
import Testing
@testable import Granary

@Suite struct MergePolicyTests {
    /// Two contexts read the same employee; the second saves a change first; the first then saves its own.
    func conflict(_ policy: MergePolicy, _ check: (Employee, ManagedObjectContext) throws -> Void) throws {
        let (coordinator, first) = try makeStack()
        let id: ManagedObjectID = try first.performAndWait {
            let e = Employee(context: first)
            e.name = "Ada"
            e.salary = 100
            e.email = "ada@x.io"
            try first.save()
            return e.objectID
        }
        let second = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try first.performAndWait {
            let mine = try #require(try first.existingObject(with: id) as? Employee)
            try second.performAndWait {
                let theirs = try #require(try second.existingObject(with: id) as? Employee)
                theirs.salary = 200
                theirs.email = "ada@store.io"
                try second.save()
            }
            first.mergePolicy = policy
            mine.salary = 300
            mine.name = "Ada L."
            try check(mine, first)
        }
    }

    @Test func errorPolicyListsTheConflicts() throws {
        try conflict(.error) { _, context in
            do {
                try context.save()
                Issue.record("conflicting save succeeded")
            } catch ContextError.mergeConflicts(let conflicts) {
                #expect(conflicts.count == 1 && conflicts[0].storeVersion == 2 && conflicts[0].expectedVersion == 1)
            }
        }
    }

    @Test func storeTrumpKeepsStoreChangesAndOtherLocalOnes() throws {
        try conflict(.mergeByPropertyStoreTrump) { e, context in
            try context.save()
            #expect(e.salary == 200 && e.name == "Ada L." && e.email == "ada@store.io")
        }
    }

    @Test func objectTrumpKeepsLocalChangesAndTakesTheRest() throws {
        try conflict(.mergeByPropertyObjectTrump) { e, context in
            try context.save()
            context.refresh(e, mergeChanges: false)
            #expect(e.salary == 300 && e.name == "Ada L." && e.email == "ada@store.io")
        }
    }

    @Test func overwriteWritesTheObjectAsItIs() throws {
        try conflict(.overwrite) { e, context in
            try context.save()
            context.refresh(e, mergeChanges: false)
            #expect(e.salary == 300 && e.email == "ada@x.io")
        }
    }

    @Test func rollbackDropsLocalChanges() throws {
        try conflict(.rollback) { e, context in
            try context.save()
            #expect(e.salary == 200 && e.name == "Ada" && !e.hasChanges)
        }
    }
}

@Suite struct ParentChildAndNotificationTests {
    @Test func childSavesIntoItsParentAndParentSavesToTheStore() throws {
        let (coordinator, parent) = try makeStack()
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        let id: ManagedObjectID = try child.performAndWait {
            let e = Employee(context: child)
            e.name = "Draft"
            try child.save()
            return e.objectID
        }
        try parent.performAndWait {
            #expect(parent.hasChanges)
            #expect(try parent.fetch(FetchRequest<Employee>()).map(\.name) == ["Draft"])
            #expect(try coordinator.persistentStores[0].engine.read().count(in: "Person") == 0)
            try parent.save()
            #expect(try coordinator.persistentStores[0].engine.read().count(in: "Person") == 1)
            _ = id
        }
        // The child sees the parent's unsaved edits.
        try parent.performAndWait {
            let e = try #require(try parent.fetch(FetchRequest<Employee>()).first)
            e.salary = 42
        }
        try child.performAndWait {
            let seen = try child.fetch(FetchRequest<Employee>(predicate: #Predicate { $0.salary == 42 }))
            #expect(seen.count == 1)
        }
    }

    @Test func aChildReportsItsParentsStoreErrorsRatherThanAMissingObject() throws {
        let (coordinator, parent) = try makeStack()
        let id: ManagedObjectID = try parent.performAndWait {
            let b = Badge(context: parent)
            b.title = "b"
            try parent.save()
            return b.objectID
        }
        try coordinator.remove(coordinator.persistentStores[0])
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        try child.performAndWait {
            do {
                _ = try child.existingObject(with: id)
                Issue.record("found an object of a removed store")
            } catch let error as ContextError {
                guard case .noPersistentStore = error else { throw error }
            }
        }
    }

    final class Ranked: ManagedObject {
        @Managed var rank: Int
    }

    /// An in-memory store of `Ranked` objects, indexed by rank.
    static func rankedCoordinator() throws -> PersistentStoreCoordinator {
        let model = try ManagedObjectModel {
            Entity("Ranked", as: Ranked.self) {
                Attribute("rank", .integer64)
                Index("byRank", "rank")
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        return coordinator
    }

    @Test func aChildFetchWithAWindowIsWindowedByItsParent() throws {
        let coordinator = try Self.rankedCoordinator()
        let parent = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try parent.performAndWait {
            for i in 0..<50 { Ranked(context: parent).rank = i }
            try parent.save()
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        try child.performAndWait { () throws in
            var request = FetchRequest<Ranked>(predicate: #Predicate { $0.rank >= 0 },
                                               sortBy: [SortDescriptor(\.rank, order: .reverse)], fetchLimit: 3)
            let before = coordinator.fetchStatistics.rowsExamined
            #expect(try child.fetch(request).map(\.rank) == [49, 48, 47])
            #expect(coordinator.fetchStatistics.rowsExamined - before == 3)
            request.fetchOffset = 2
            #expect(try child.fetch(request).map(\.rank) == [47, 46, 45])
            // The parent's pending changes count.
            try parent.performAndWait {
                Ranked(context: parent).rank = 1_000
                try #require(try parent.existingObject(with: parent.fetchObjectIDs(request)[0]) as? Ranked).rank = 2_000
            }
            request.fetchOffset = 0
            #expect(try child.fetch(request).map(\.rank) == [2_000, 1_000, 49])
            // With pending changes of its own the child windows itself, over everything.
            Ranked(context: child).rank = 1_500
            #expect(try child.fetch(request).map(\.rank) == [2_000, 1_500, 1_000])
            request.fetchOffset = 1
            #expect(try child.fetch(request).map(\.rank) == [1_500, 1_000, 49])
            #expect(try child.count(for: FetchRequest<Ranked>()) == 52)
        }
    }

    @Test func aWindowedFetchWithPendingChangesReadsOnlyTheRowsItNeeds() throws {
        let coordinator = try Self.rankedCoordinator()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            let saved = (0..<100).map { i -> Ranked in
                let r = Ranked(context: context)
                r.rank = 10 + i
                return r
            }
            try context.save()
            saved[0].rank = 1_000        // moves out of the window
            context.delete(saved[1])     // leaves it
            saved[50].rank = 13          // moves into it, tied with a saved row
            Ranked(context: context).rank = 5
            var request = FetchRequest<Ranked>(predicate: #Predicate { $0.rank >= 0 }, sortBy: [SortDescriptor(\.rank)], fetchLimit: 4)
            let before = coordinator.fetchStatistics.rowsExamined
            #expect(try context.fetch(request).map(\.rank) == [5, 12, 13, 13])
            #expect(coordinator.fetchStatistics.rowsExamined - before <= 4 + 4, "\(coordinator.fetchStatistics.lastPlan ?? "")")
            for offset in [0, 1, 3, 95, 97, 200] {
                request.fetchOffset = offset
                var everything = request
                everything.fetchLimit = 0
                everything.fetchOffset = 0
                let all = try context.fetch(everything).map(\.rank)
                #expect(try context.fetch(request).map(\.rank) == Array(all.dropFirst(offset).prefix(4)), "offset \(offset)")
            }
            #expect(try context.count(for: FetchRequest<Ranked>()) == 100)
        }
    }

    @Test func didSaveNotificationCarriesTheIDsAndMergesIntoAnotherContext() throws {
        let (coordinator, writer) = try makeStack()
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let id: ManagedObjectID = try writer.performAndWait {
            let e = Employee(context: writer)
            e.name = "V1"
            try writer.save()
            return e.objectID
        }
        let seen = try reader.performAndWait { try #require(try reader.existingObject(with: id) as? Employee) }
        let received = Mutex<[ContextChanges]>([])
        let token = NotificationCenter.default.addObserver(forName: .managedObjectContextDidSave, object: writer, queue: nil) { note in
            if let changes = note.userInfo?[ContextChanges.userInfoKey] as? ContextChanges { received.withLock { $0.append(changes) } }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try writer.performAndWait {
            let e = try #require(try writer.existingObject(with: id) as? Employee)
            e.name = "V2"
            let extra = Employee(context: writer)
            extra.name = "New"
            try writer.save()
        }
        let changes = try #require(received.withLock { $0.first })
        #expect(changes.updated == [id] && changes.inserted.count == 1)
        reader.performAndWait {
            #expect(seen.name == "V1")  // stale until merged
            reader.mergeChanges(fromContextDidSave: changes)
            #expect(seen.name == "V2")
        }
    }

    @Test func automaticMergingFromParentKeepsAViewContextFresh() async throws {
        let (coordinator, background) = try makeStack()
        let view = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        view.automaticallyMergesChangesFromParent = true
        let id: ManagedObjectID = try background.performAndWait {
            let e = Employee(context: background)
            e.name = "Before"
            try background.save()
            return e.objectID
        }
        // Merges reach registered objects, which the context holds only while someone does.
        let held = view.performAndWait { () -> Employee? in
            let e = view.object(with: id) as? Employee
            _ = e?.name
            return e
        }
        try background.performAndWait {
            (try background.existingObject(with: id) as? Employee)?.name = "After"
            try background.save()
        }
        // The merge is scheduled on the view context's queue; wait for it with a round trip.
        let name = try await view.perform { (view.registeredObject(for: id) as? Employee)?.name }
        #expect(name == "After")
        withExtendedLifetime(held) {}
    }

    @Test func objectsDidChangeIsPostedForEdits() throws {
        let (_, context) = try makeStack()
        let posts = Mutex(0)
        let token = NotificationCenter.default.addObserver(forName: .managedObjectContextObjectsDidChange, object: context, queue: nil) { _ in
            posts.withLock { $0 += 1 }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try context.performAndWait {
            let e = Employee(context: context)
            e.name = "x"
            context.processPendingChanges()
            try context.save()
        }
        #expect(posts.withLock { $0 } >= 1)
    }
}

@Suite struct StoreRoutingTests {
    @Test func configurationsRouteEntitiesToTheirStores() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Cache") { Attribute("key", .string) }
            Entity("Note") { Attribute("text", .string) }
            Configuration("Memory", entities: "Cache")
            Configuration("Disk", entities: "Note")
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let memory = try coordinator.addPersistentStore(type: .inMemory, configuration: "Memory")
        let url = scratchURL()
        let disk = try coordinator.addPersistentStore(type: .durable, configuration: "Disk", at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let cache = ManagedObject(entity: model.entity(named: "Cache")!, insertInto: context)
            try cache.setValue("k", forKey: "key")
            let note = ManagedObject(entity: model.entity(named: "Note")!, insertInto: context)
            try note.setValue("hello", forKey: "text")
            try context.save()
            #expect(cache.objectID.persistentStoreIdentifier == memory.identifier)
            #expect(note.objectID.persistentStoreIdentifier == disk.identifier)
        }
        #expect(try disk.engine.read().count(in: "Note") == 1)
        #expect(!disk.engine.read().tableNames.contains("Cache"))
        try coordinator.setMetadata(["owner": "tests"], for: disk)
        #expect(disk.metadata.userInfo["owner"] == "tests")
        // Saving into a removed store is an error, not a crash.
        try coordinator.remove(disk)
        try context.performAndWait {
            let note = ManagedObject(entity: model.entity(named: "Note")!, insertInto: context)
            try note.setValue("late", forKey: "text")
            #expect(throws: ContextError.self) { try context.save() }
        }
    }

    @Test func batchFaultingKeepsABoundedNumberOfObjectsLoaded() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            for i in 0..<500 {
                let e = Employee(context: context)
                e.name = "E\(i)"
            }
            try context.save()
            context.reset()
            var request = FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)])
            request.fetchBatchSize = 50
            let all = try context.fetch(request)
            #expect(all.count == 500 && all.allSatisfy(\.isFault))
            var maxLoaded = 0
            for e in all {
                _ = e.name
                maxLoaded = max(maxLoaded, all.filter { !$0.isFault }.count)
            }
            #expect(maxLoaded <= 50 * BatchFaulter.residentBatches)
            #expect(all.last?.name == "E99")
        }
    }
}
