// Port of the persistence layer of Apple's sample "Loading and Displaying a Large Data Feed"
// (Earthquakes): its `QuakesProvider`, a provider class with a container made from a name, a background
// batch import of the feed with `NSBatchInsertRequest(entity:dictionaryHandler:)`, refreshed with
// overlapping data, sorted fetches, a batch delete of given objects, and a view context kept fresh.
// It also covers Apple's article "Using Core Data in the background" (`newBackgroundContext()`,
// `performBackgroundTask(_:)`, `perform`/`performAndWait`, passing object IDs between queues).
//
// Lines a porter changes beyond `import CoreData` → `import GranaryCoreData` and `@NSManaged` → `@Managed`:
// - `Logger` (OSLog) and `URLSession` are Apple-only: the feed comes in as dictionaries, and logging is gone;
// - the sample's history-driven merging (`NSPersistentHistoryTrackingKey`, `NSPersistentStoreRemoteChange`,
//   `NSPersistentHistoryChangeRequest`) needs remote-change notifications, which Granary does not post
//   (its persistent history has no NS-named aliases here either): those lines are removed, and the batch requests ask for object IDs
//   (`resultType = .objectIDs`) and merge them into the view context with
//   `mergeChanges(fromRemoteContextSave:into:)`, as Core Data documents for batch requests without
//   history; the view context's `automaticallyMergesChangesFromParent` is `true` (the sample's `false`
//   relies on history);
// - Swift 6: the provider is `final class … : Sendable` (its closures run on contexts' queues).
// Unchanged: `Quake.entity()`, `NSBatchInsertRequest(entity:dictionaryHandler:)`,
// `NSBatchDeleteRequest(objectIDs:)`, `name` and `transactionAuthor`, `undoManager = nil`,
// `shouldDeleteInaccessibleFaults = true` (accepted, see their documentation), the fire-and-forget
// `viewContext.perform { }`, and the refresh (a batch insert resolving the uniqueness constraint on `code`).
import GranaryCoreData
import Testing

/// Errors of the sample's provider.
enum QuakeError: Error {
    case batchInsertError
    case batchDeleteError
}

final class QuakesProvider: Sendable {
    let container: NSPersistentContainer

    init(storeURL: URL) {
        registerEarthquakesModel()  // Linux: the model is registered, not compiled into the bundle
        let container = NSPersistentContainer(name: "Earthquakes")
        guard let description = container.persistentStoreDescriptions.first else {
            fatalError("Failed to retrieve a persistent store description.")
        }
        description.url = storeURL  // test only
        container.loadPersistentStores { storeDescription, error in
            if let error = error as NSError? {
                fatalError("Unresolved error \(error), \(error.userInfo)")
            }
        }
        // The sample sets this to false and merges persistent history; without history, the view
        // context merges other contexts' saves.
        container.viewContext.automaticallyMergesChangesFromParent = true
        container.viewContext.name = "viewContext"
        /// - Tag: viewContextMergePolicy
        container.viewContext.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        container.viewContext.undoManager = nil
        container.viewContext.shouldDeleteInaccessibleFaults = true
        self.container = container
    }

    /// Creates and configures a private queue context.
    private func newTaskContext() -> NSManagedObjectContext {
        let taskContext = container.newBackgroundContext()
        taskContext.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        // Set unused undoManager to nil for macOS (it is nil by default on iOS)
        // to reduce resource requirements.
        taskContext.undoManager = nil
        return taskContext
    }

    /// Uses `NSBatchInsertRequest` (BIR) to import a JSON dictionary into the Core Data store on a private queue.
    func importQuakes(from propertiesList: [[String: Any]]) async throws {
        guard !propertiesList.isEmpty else { return }
        let taskContext = newTaskContext()
        taskContext.name = "importContext"
        taskContext.transactionAuthor = "importQuakes"
        let properties = PropertyList(propertiesList)
        try await taskContext.perform {
            let batchInsertRequest = self.newBatchInsertRequest(with: properties.list)
            batchInsertRequest.resultType = .objectIDs
            if let fetchResult = try? taskContext.execute(batchInsertRequest),
               let batchInsertResult = fetchResult as? NSBatchInsertResult,
               let objectIDs = batchInsertResult.result as? [NSManagedObjectID] {
                // The sample merges through persistent history; without it, the IDs are merged directly.
                NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSInsertedObjectsKey: objectIDs],
                                                    into: [self.container.viewContext])
                return
            }
            throw QuakeError.batchInsertError
        }
    }

    private func newBatchInsertRequest(with propertyList: [[String: Any]]) -> NSBatchInsertRequest {
        var index = 0
        let total = propertyList.count
        // Provide one dictionary at a time when the closure is called.
        let batchInsertRequest = NSBatchInsertRequest(entity: Quake.entity(), dictionaryHandler: { dictionary in
            guard index < total else { return true }
            dictionary.addEntries(from: propertyList[index])
            index += 1
            return false
        })
        return batchInsertRequest
    }

    /// Synchronously deletes given records in the Core Data store with the specified object IDs.
    func deleteQuakes(identifiedBy objectIDs: [NSManagedObjectID]) {
        let viewContext = container.viewContext
        viewContext.perform {
            objectIDs.forEach { objectID in
                let quake = viewContext.object(with: objectID)
                viewContext.delete(quake)
            }
        }
    }

    /// Asynchronously deletes records in the Core Data store with the specified `Quake` managed objects.
    func deleteQuakes(_ quakes: [Quake]) async throws {
        let objectIDs = quakes.map { $0.objectID }
        let taskContext = newTaskContext()
        // Add name and author to identify source of persistent history changes.
        taskContext.name = "deleteContext"
        taskContext.transactionAuthor = "deleteQuakes"
        try await taskContext.perform {
            // Execute the batch delete.
            let batchDeleteRequest = NSBatchDeleteRequest(objectIDs: objectIDs)
            batchDeleteRequest.resultType = .resultTypeObjectIDs  // no history: the IDs are merged directly
            guard let fetchResult = try? taskContext.execute(batchDeleteRequest),
                  let batchDeleteResult = fetchResult as? NSBatchDeleteResult,
                  let deleted = batchDeleteResult.result as? [NSManagedObjectID]
            else {
                throw QuakeError.batchDeleteError
            }
            NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: deleted],
                                                into: [self.container.viewContext])
        }
    }

    /// The quakes the list shows: newest first.
    func latestQuakes(in context: NSManagedObjectContext) throws -> [Quake] {
        let request = NSFetchRequest<Quake>(entityName: "Quake")
        request.sortDescriptors = [NSSortDescriptor(keyPath: \Quake.time, ascending: false)]
        return try context.fetch(request)
    }
}

/// The feed's dictionaries handed to a context's queue (they hold only strings, numbers and dates).
struct PropertyList: @unchecked Sendable {
    let list: [[String: Any]]
    init(_ list: [[String: Any]]) { self.list = list }
}

@Suite struct QuakesProviderTests {
    // Apple: NSBatchInsertRequest init(entity:dictionaryHandler:) — "the handler … returns true when
    // there are no more objects to insert"; NSBatchInsertResult.result with resultType .objectIDs;
    // NSManagedObjectContext.mergeChanges(fromRemoteContextSave:into:).
    @Test func aBatchImportReachesTheViewContextSortedNewestFirst() async throws {
        let provider = QuakesProvider(storeURL: scratchStoreURL())
        try await provider.importQuakes(from: feedRecords(1...50))
        let view = provider.container.viewContext
        let codes = try view.performAndWait { try provider.latestQuakes(in: view).map(\.code) }
        #expect(codes.count == 50 && codes.first == "ci50" && codes.last == "ci1")
        try provider.container.close()
    }

    // Apple: "Loading and Displaying a Large Data Feed" — the feed is refreshed and "the constraint on
    // code" merges each quake already stored with its new values (NSMergeByPropertyObjectTrumpMergePolicy).
    @Test func aRefreshWithOverlappingDataUpdatesTheExistingQuakes() async throws {
        let provider = QuakesProvider(storeURL: scratchStoreURL())
        try await provider.importQuakes(from: feedRecords(1...30))
        try await provider.importQuakes(from: feedRecords(21...40, magnitudeOffset: 0.5))
        let view = provider.container.viewContext
        let (count, refreshed) = try view.performAndWait { () -> (Int, Float?) in
            let request: NSFetchRequest<Quake> = Quake.fetchRequest()
            request.predicate = NSPredicate(format: "code == %@", "ci25")
            return (try view.count(for: Quake.fetchRequest()), try view.fetch(request).first?.magnitude)
        }
        #expect(count == 40)
        #expect(refreshed == Float(25 % 7) + 0.5)
        try provider.container.close()
    }

    // Apple: NSBatchDeleteRequest with resultType .resultTypeObjectIDs, merged into the view context:
    // the deleted objects leave it.
    @Test func aBatchDeleteOfGivenQuakesLeavesTheViewContext() async throws {
        let provider = QuakesProvider(storeURL: scratchStoreURL())
        try await provider.importQuakes(from: feedRecords(1...10))
        let view = provider.container.viewContext
        let doomed = try view.performAndWait { try provider.latestQuakes(in: view).prefix(3).map { $0 } }
        try await provider.deleteQuakes(doomed)
        let (codes, deleted) = try view.performAndWait {
            (try provider.latestQuakes(in: view).map(\.code), doomed.map { $0.isDeleted || $0.managedObjectContext == nil })
        }
        #expect(codes == (1...7).reversed().map { "ci\($0)" })
        #expect(deleted == [true, true, true])
        try provider.container.close()
    }

    // Apple: "Using Core Data in the background" — work on a private queue context, pass object IDs
    // (not objects) between queues, and let the view context merge (automaticallyMergesChangesFromParent).
    @Test func backgroundWorkReachesTheViewContextThroughObjectIDs() async throws {
        let provider = QuakesProvider(storeURL: scratchStoreURL())
        let container = provider.container
        let id = try await container.performBackgroundTask { context in
            let quake = Quake(context: context)
            (quake.code, quake.place, quake.time) = ("bg1", "Offshore", Date(timeIntervalSince1970: 5))
            try context.save()
            return quake.objectID
        }
        let privateContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType,
                                                    coordinator: container.persistentStoreCoordinator)
        try privateContext.performAndWait {
            let quake = try privateContext.existingObject(with: id) as! Quake
            quake.magnitude = 6.1
            try privateContext.save()
        }
        try await container.flush()
        let magnitude = container.viewContext.performAndWait { (container.viewContext.object(with: id) as! Quake).magnitude }
        #expect(magnitude == 6.1)

        // The callback form: returns at once, runs on the new context's queue.
        let done = LockedBox(false)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            container.performBackgroundTask { context in
                done.set((try? context.count(for: Quake.fetchRequest())) == 1)
                continuation.resume()
            }
        }
        #expect(done.value)
        try container.close()
    }

    // Apple: NSManagedObjectContext.perform(_:) — "Asynchronously performs the specified closure on the
    // context's queue": the sample's synchronous delete of quakes by object ID on the view context.
    @Test func aDeleteByObjectIDsOnTheViewContextsQueueRemovesTheQuakes() async throws {
        let provider = QuakesProvider(storeURL: scratchStoreURL())
        try await provider.importQuakes(from: feedRecords(1...5))
        let view = provider.container.viewContext
        let ids = try view.performAndWait { try provider.latestQuakes(in: view).prefix(2).map(\.objectID) }
        provider.deleteQuakes(identifiedBy: ids)
        // The queue is serial: this runs after the deletion.
        let (deleted, codes) = try view.performAndWait {
            try view.save()
            return (view.deletedObjects.count, try provider.latestQuakes(in: view).map(\.code))
        }
        #expect(deleted == 0)
        #expect(codes == ["ci3", "ci2", "ci1"])
        try provider.container.close()
    }

    // Apple: NSBatchInsertRequest init(entity:managedObjectHandler:) — "a closure that receives a managed
    // object to populate … and returns true when there are no more objects to insert"; the context's
    // transactionAuthor.
    @Test func aBatchInsertByManagedObjectHandlerSetsTypedProperties() throws {
        let provider = QuakesProvider(storeURL: scratchStoreURL())
        let taskContext = provider.container.newBackgroundContext()
        taskContext.transactionAuthor = "importQuakes"
        let feed = PropertyList(feedRecords(1...4))
        let count = try taskContext.performAndWait {
            var index = 0
            let request = NSBatchInsertRequest(entity: Quake.entity(), managedObjectHandler: { object in
                guard index < feed.list.count else { return true }
                let quake = object as! Quake
                let record = feed.list[index]
                quake.code = record["code"] as! String
                quake.magnitude = record["magnitude"] as! Float
                quake.place = record["place"] as! String
                quake.time = record["time"] as! Date
                index += 1
                return false
            })
            request.resultType = .count
            let result = try taskContext.execute(request) as! NSBatchInsertResult
            return result.result as? Int
        }
        #expect(count == 4)
        #expect(taskContext.transactionAuthor == "importQuakes")
        let view = provider.container.viewContext
        let codes = try view.performAndWait { try provider.latestQuakes(in: view).map(\.code) }
        #expect(codes == ["ci4", "ci3", "ci2", "ci1"])
        try provider.container.close()
    }

    // Apple: NSBatchDeleteRequest init(objectIDs:) — "Initializes a batch delete request with an array of
    // object IDs"; the request's fetchRequest describes those objects.
    @Test func aBatchDeleteByObjectIDsDescribesAndDeletesExactlyThose() async throws {
        let provider = QuakesProvider(storeURL: scratchStoreURL())
        try await provider.importQuakes(from: feedRecords(1...6))
        let taskContext = provider.container.newBackgroundContext()
        let (described, remaining) = try taskContext.performAndWait {
            let ids = try provider.latestQuakes(in: taskContext).filter { ["ci2", "ci5"].contains($0.code) }.map(\.objectID)
            let request = NSBatchDeleteRequest(objectIDs: ids)
            let described = try taskContext.count(for: request.fetchRequest)
            request.resultType = .resultTypeCount
            let result = try taskContext.execute(request) as! NSBatchDeleteResult
            #expect(result.result as? Int == 2)
            taskContext.reset()
            return (described, try provider.latestQuakes(in: taskContext).map(\.code))
        }
        #expect(described == 2)
        #expect(remaining == ["ci6", "ci4", "ci3", "ci1"])
        try provider.container.close()
    }

    // Bad calls through the compatibility names are typed errors: an entity the model lacks.
    @Test func aBatchInsertIntoAnUnknownEntityIsATypedError() throws {
        let provider = QuakesProvider(storeURL: scratchStoreURL())
        let context = provider.container.newBackgroundContext()
        _ = context.performAndWait {
            #expect(throws: ContextError.self) {
                try context.execute(NSBatchInsertRequest(entityName: "Earthquake", objects: [["code": "x"]]))
            }
        }
        try? provider.container.close()
    }
}
