// Port of Apple's article "Setting up a Core Data stack" (the `PersistenceController` it and Xcode's app
// template start with), and of the manual stack of older tutorials
// (`NSPersistentStoreCoordinator.addPersistentStore(ofType:configurationName:at:options:)`).
//
// Lines a porter changes beyond `import CoreData` → `import GranaryCoreData` and `@NSManaged` → `@Managed`:
// - the model is registered in code (`registerEarthquakesModel()`), or the .xcdatamodeld is shipped as a
//   resource: Linux has no model compiler to make the app's .momd;
// - `description.url = …` in the tests only, to keep each test's store apart (an app keeps the default,
//   `NSPersistentContainer.defaultDirectoryURL()`);
// - `NSManagedObjectModel.mergedModel(from:)` has no Linux counterpart (no bundles of compiled models):
//   the manual stack takes the registered model.
import GranaryCoreData
import Testing

// The article's controller, as written (the in-memory flag of the template included).
final class PersistenceController {
    let container: NSPersistentContainer

    init(inMemory: Bool = false, storeURL: URL? = nil) {
        container = NSPersistentContainer(name: "Earthquakes")
        if inMemory {
            container.persistentStoreDescriptions.first!.url = URL(fileURLWithPath: "/dev/null")
        } else if let storeURL {
            container.persistentStoreDescriptions.first!.url = storeURL  // test only
        }
        container.loadPersistentStores(completionHandler: { (storeDescription, error) in
            if let error = error as NSError? {
                fatalError("Unresolved error \(error), \(error.userInfo)")
            }
        })
        container.viewContext.automaticallyMergesChangesFromParent = true
    }
}

@Suite struct SettingUpACoreDataStackTests {
    init() { registerEarthquakesModel() }

    // Apple: NSPersistentContainer.loadPersistentStores(completionHandler:) — "Once the completion handler
    // has fired, the stack is fully initialized and is ready for use."
    @Test func theArticlesControllerLoadsADurableStoreThatKeepsWhatTheViewContextSaves() throws {
        let url = scratchStoreURL()
        let first = PersistenceController(storeURL: url)
        let viewContext = first.container.viewContext
        try viewContext.performAndWait {
            let quake = Quake(context: viewContext)
            quake.code = "nc1"
            quake.place = "Parkfield"
            quake.time = Date(timeIntervalSince1970: 0)
            try viewContext.save()
        }
        #expect(first.container.persistentStoreCoordinator.persistentStores.map(\.coreDataType) == [NSSQLiteStoreType])
        try first.container.close()

        let second = PersistenceController(storeURL: url)
        let places = try second.container.viewContext.performAndWait {
            try second.container.viewContext.fetch(NSFetchRequest<Quake>(entityName: "Quake")).map(\.place)
        }
        #expect(places == ["Parkfield"])
        try second.container.close()
    }

    // Apple: NSPersistentStoreDescription.type — the in-memory store type; the template's `inMemory`
    // flag uses the URL /dev/null instead.
    @Test(arguments: [false, true]) func anInMemoryStoreByTypeOrByDevNull(_ byType: Bool) throws {
        let container = NSPersistentContainer(name: "Earthquakes")
        let description = container.persistentStoreDescriptions.first!
        if byType {
            description.type = NSInMemoryStoreType
            #expect(description.type == NSInMemoryStoreType)
        } else {
            description.url = URL(fileURLWithPath: "/dev/null")
        }
        container.loadPersistentStores { _, error in #expect(error == nil) }
        let stored = container.persistentStoreCoordinator.persistentStores
        #expect(stored.count == 1 && stored[0].coreDataType == NSInMemoryStoreType)
    }

    // The manual stack of pre-container tutorials: Core Data's
    // addPersistentStore(ofType:configurationName:at:options:) with its options dictionary.
    @Test func theManualStackAddsAStoreByTypeStringWithCoreDataOptions() throws {
        let model = earthquakesModel  // NSManagedObjectModel.mergedModel(from: nil) in the tutorial
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let url = scratchStoreURL()
        let options = [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        #expect(store.coreDataType == NSSQLiteStoreType && store.url?.standardizedFileURL == url.standardizedFileURL)
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType, coordinator: coordinator)
        try context.performAndWait {
            let quake = NSEntityDescriptionInsert.quake(into: context)
            quake.code = "us1"
            quake.place = "Anza"
            quake.time = Date(timeIntervalSince1970: 60)
            try context.save()
        }
        let metadata = coordinator.metadata(for: store)
        #expect(metadata[NSStoreTypeKey] as? String != nil)
        try coordinator.remove(store)
        let onDisk = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(onDisk[NSStoreUUIDKey] as? String == store.identifier.uuidString)
    }

    // Options Granary does not have are refused with a typed error, not ignored.
    @Test func anUnsupportedTypeOrOptionIsATypedError() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: earthquakesModel)
        #expect(throws: ContextError.self) {
            try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: scratchStoreURL(), options: nil)
        }
        #expect(throws: ContextError.self) {
            try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil,
                                               options: [NSPersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber])
        }
        #expect(coordinator.persistentStores.isEmpty)
    }

    // NSPersistentHistoryTrackingKey is taken: the store records its saves.
    @Test func historyTrackingOptionOpensATrackedStore() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: earthquakesModel)
        let store = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil,
                                                       options: [NSPersistentHistoryTrackingKey: true as NSNumber])
        #expect(store.tracksPersistentHistory)
        #expect(coordinator.currentPersistentHistoryToken(fromStores: nil)?.transactionNumber == 0)
    }
}

/// Until `NSEntityDescription.insertNewObject(forEntityName:into:)` exists: the manual stack's insert.
enum NSEntityDescriptionInsert {
    static func quake(into context: NSManagedObjectContext) -> Quake { Quake(context: context) }
}
