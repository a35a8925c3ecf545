// Port of the persistence layer of Apple's sample "Loading and Displaying a Large Data Feed"
// (Earthquakes): its `QuakesProvider`, a provider class with a container made from a name, a background
// batch import of the feed with `NSBatchInsertRequest(entity:dictionaryHandler:)`, refreshed with
// overlapping data, sorted fetches, a batch delete of given objects, and a view context kept fresh.
// It also covers Apple's article "Using Core Data in the background" (`newBackgroundContext()`,
// `performBackgroundTask(_:)`, `perform`/`performAndWait`, passing object IDs between queues).
//
// Lines a porter changes beyond `import CoreData` → `import GranaryCoreData` and `@NSManaged` → `@Managed`:
// - `Logger` (OSLog) and `URLSession` are Apple-only: the feed comes in as dictionaries, and logging is gone;
// - persistent history (`NSPersistentHistoryTrackingKey`, `NSPersistentStoreRemoteChange`,
//   `NSPersistentHistoryChangeRequest`) does not exist in Granary: those lines are removed and the view
//   context merges with `automaticallyMergesChangesFromParent` (or `mergeChanges(fromRemoteContextSave:into:)`
//   after batch requests) instead; asking for history tracking makes loading fail with a typed error;
// - `undoManager = nil` and `shouldDeleteInaccessibleFaults` are removed (Granary has neither);
// - Swift 6: the provider is `final class … : Sendable` (its closures run on contexts' queues);
// - waiting for `NSPersistentHistoryChangeRequest`-free merges: `mergeChanges(fromRemoteContextSave:into:)`
//   is called with the batch result's object IDs, as Core Data documents for batch requests;
// - until Granary has `Quake.entity()`, `transactionAuthor`, `viewContext.perform { }` (fire and forget),
//   and `NSBatchDeleteRequest(objectIDs:)`, the port uses `earthquakesModel.entity(named:)`, no author,
//   `performAndWait` and a fetch-request delete by code. The refresh (a batch insert resolving the
//   uniqueness constraint on `code`) works unchanged.
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
        container.viewContext.automaticallyMergesChangesFromParent = true
        container.viewContext.name = "viewContext"
        container.viewContext.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        self.container = container
    }

    /// Creates and configures a private queue context.
    private func newTaskContext() -> NSManagedObjectContext {
        let taskContext = container.newBackgroundContext()
        taskContext.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        return taskContext
    }

    /// Uses `NSBatchInsertRequest` (BIR) to import a JSON dictionary into the Core Data store on a private queue.
    func importQuakes(from propertiesList: [[String: Any]]) async throws {
        guard !propertiesList.isEmpty else { return }
        let taskContext = newTaskContext()
        taskContext.name = "importContext"
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
        let batchInsertRequest = NSBatchInsertRequest(entity: earthquakesModel.entity(named: "Quake")!, dictionaryHandler: { dictionary in
            guard index < total else { return true }
            dictionary.addEntries(from: propertyList[index])
            index += 1
            return false
        })
        return batchInsertRequest
    }

    /// Deletes given records with a batch delete request, and merges the deletion into the view context.
    func deleteQuakes(_ quakes: [Quake]) async throws {
        // Until NSBatchDeleteRequest(objectIDs:): the quakes' codes, read on their (view) context's queue.
        let codes = container.viewContext.performAndWait { quakes.map(\.code) }
        let taskContext = newTaskContext()
        taskContext.name = "deleteContext"
        try await taskContext.perform {
            let fetchRequest = NSFetchRequest<NSFetchRequestResult>(entityName: "Quake")
            fetchRequest.predicate = NSPredicate(format: "code IN %@", codes)
            let batchDeleteRequest = NSBatchDeleteRequest(fetchRequest: fetchRequest)
            batchDeleteRequest.resultType = .resultTypeObjectIDs
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
