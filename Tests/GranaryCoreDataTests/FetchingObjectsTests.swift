// Port of the fetching in Apple's documentation: the `NSFetchRequest` reference ("A description of
// search criteria used to retrieve data from a persistent store"), the generated class's
// `fetchRequest()`, `NSPredicate(format:)`, `NSSortDescriptor(key:ascending:)` and the result types
// (objects, IDs, dictionaries, counts).
//
// Lines a porter changes beyond `import CoreData` → `import GranaryCoreData` and `@NSManaged` → `@Managed`:
// none in the fetching code itself. The generated class's `fetchRequest()` is kept as Xcode writes it,
// `@nonobjc` included (it compiles on Linux, meaning nothing there).
import GranaryCoreData
import Testing

// Xcode's generated `Quake+CoreDataProperties.swift` fetch request, as written.
extension Quake {
    @nonobjc public class func fetchRequest() -> NSFetchRequest<Quake> {
        return NSFetchRequest<Quake>(entityName: "Quake")
    }
}

@Suite struct FetchingObjectsTests {
    /// A view context with quakes ci1…ci20 saved.
    func loadedContext() throws -> (NSPersistentContainer, NSManagedObjectContext) {
        registerEarthquakesModel()
        let container = NSPersistentContainer(name: "Earthquakes")
        container.persistentStoreDescriptions.first!.type = NSInMemoryStoreType
        container.loadPersistentStores { _, error in precondition(error == nil) }
        let context = container.viewContext
        try context.performAndWait {
            for values in feedRecords(1...20) {
                let quake = Quake(context: context)
                for (key, value) in values { try quake.setValue(value, forKey: key) }
            }
            try context.save()
        }
        return (container, context)
    }

    // Apple: NSFetchRequest — predicate, sortDescriptors, fetchLimit, fetchOffset; NSPredicate(format:);
    // NSSortDescriptor(key:ascending:).
    @Test func aFilteredSortedLimitedFetch() throws {
        let (_, context) = try loadedContext()
        let codes = try context.performAndWait {
            let request: NSFetchRequest<Quake> = Quake.fetchRequest()
            request.predicate = NSPredicate(format: "magnitude >= %@ AND place CONTAINS[c] %@", NSNumber(value: 5), "ridgecrest")
            request.sortDescriptors = [NSSortDescriptor(key: "time", ascending: false)]
            request.fetchLimit = 3
            request.fetchOffset = 1
            request.fetchBatchSize = 20
            return try context.fetch(request).map(\.code)
        }
        // magnitude = i % 7 >= 5: i in 5, 6, 12, 13, 19, 20; newest first, skip one, take three.
        #expect(codes == ["ci19", "ci13", "ci12"])
    }

    // Apple: NSSortDescriptor(keyPath:ascending:) and NSCompoundPredicate.
    @Test func keyPathSortsAndCompoundPredicates() throws {
        let (_, context) = try loadedContext()
        let codes = try context.performAndWait {
            let request = NSFetchRequest<Quake>(entityName: "Quake")
            request.predicate = NSCompoundPredicate(andPredicateWithSubpredicates: [
                NSPredicate(format: "magnitude < %d", 2), NSPredicate(format: "code BEGINSWITH %@", "ci1"),
            ])
            request.sortDescriptors = [NSSortDescriptor(keyPath: \Quake.code, ascending: true)]
            return try context.fetch(request).map(\.code)
        }
        #expect(codes == ["ci1", "ci14", "ci15"])
    }

    // Apple: NSFetchRequestResultType — managedObjectIDResultType, dictionaryResultType with
    // propertiesToFetch, countResultType; NSManagedObjectContext.count(for:).
    @Test func objectIDDictionaryAndCountResults() throws {
        let (_, context) = try loadedContext()
        try context.performAndWait {
            let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Quake")
            ids.resultType = .managedObjectIDResultType
            ids.predicate = NSPredicate(format: "code == %@", "ci7")
            let found = try context.fetch(ids)
            #expect(found.count == 1 && found[0].entityName == "Quake")

            let rows = NSFetchRequest<NSDictionary>(entityName: "Quake")
            rows.resultType = .dictionaryResultType
            rows.propertiesToFetch = ["code", "place"]
            rows.predicate = NSPredicate(format: "code IN %@", ["ci2", "ci3"])
            rows.sortDescriptors = [NSSortDescriptor(key: "code", ascending: true)]
            let dictionaries = try context.fetch(rows)
            #expect(dictionaries.map { $0["code"] as? String } == ["ci2", "ci3"])
            #expect(dictionaries.first?["place"] as? String == "2 km N of Ridgecrest")

            let counting = NSFetchRequest<NSNumber>(entityName: "Quake")
            counting.resultType = .countResultType
            #expect(try context.fetch(counting).first?.intValue == 20)
            #expect(try context.count(for: Quake.fetchRequest()) == 20)
        }
    }

    // Apple: NSFetchRequest with no predicate and the untyped result (NSFetchRequestResult), as batch
    // deletes use it.
    @Test func anUntypedRequestFetchesManagedObjects() throws {
        let (_, context) = try loadedContext()
        let all = try context.performAndWait {
            try context.fetch(NSFetchRequest<NSFetchRequestResult>(entityName: "Quake"))
        }
        #expect(all.count == 20 && all.allSatisfy { $0 is Quake })
    }

    // Bad calls are typed errors, under the compatibility names too: an unknown entity, a format string
    // that does not parse, a key the entity lacks.
    @Test func badRequestsThrowTypedErrors() throws {
        let (_, context) = try loadedContext()
        context.performAndWait {
            #expect(throws: ContextError.self) { try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Earthquake")) }
            let unparsable = Quake.fetchRequest()
            unparsable.predicate = NSPredicate(format: "magnitude >>> 3")
            #expect(throws: PredicateParseError.self) { try context.fetch(unparsable) }
            let unknownKey = Quake.fetchRequest()
            unknownKey.predicate = NSPredicate(format: "depth > 3")
            #expect(throws: (any Error).self) { try context.fetch(unknownKey) }
        }
        let error = context.performAndWait { () -> NSError? in
            do { _ = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Earthquake")); return nil } catch { return error as NSError }
        }
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSCoreDataError)
    }

    // Apple: NSFetchedResultsController init(fetchRequest:managedObjectContext:sectionNameKeyPath:cacheName:).
    @Test func aFetchedResultsControllerFromACoreDataRequest() throws {
        let (_, context) = try loadedContext()
        try context.performAndWait {
            let request: NSFetchRequest<Quake> = Quake.fetchRequest()
            request.predicate = NSPredicate(format: "magnitude == 6")
            request.sortDescriptors = [NSSortDescriptor(key: "time", ascending: true)]
            let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                        sectionNameKeyPath: nil, cacheName: "Quakes")
            try controller.performFetch()
            #expect(controller.fetchedObjects.map(\.code) == ["ci6", "ci13", "ci20"])
        }
    }
}
