import GranaryCoreData
import Testing

// The class of the article "Porting a Core Data app", as a Core Data app declares it, `@NSManaged`
// replaced.
final class PortedQuake: NSManagedObject {
    @Managed var code: String
    @Managed var magnitude: Double
}

/// The code of GranaryCoreData's landing page and its article "Porting a Core Data app".
@Suite struct CoreDataArticleTests {
    @Test func coreDataCodeRunsWithItsImportChanged() throws {
        ModelRegistry.shared.register(try ManagedObjectModel(version: "1") {
            Entity("PortedQuake", as: PortedQuake.self) {
                Attribute("code", .string)
                Attribute("magnitude", .double, defaultValue: 0.0)
            }
        }, named: "PortedQuakes")
        // snippet: coredata-port
        let container = NSPersistentContainer(name: "PortedQuakes")
        container.persistentStoreDescriptions.first!.type = NSInMemoryStoreType
        container.loadPersistentStores { description, error in
            if let error = error as NSError? { fatalError("Unresolved error \(error), \(error.userInfo)") }
        }
        let context = container.viewContext
        context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        let strong = try context.performAndWait {
            let quake = PortedQuake(context: context)
            quake.code = "ci1"
            quake.magnitude = 5.2
            try context.save()
            let request = NSFetchRequest<PortedQuake>(entityName: "PortedQuake")
            request.predicate = NSPredicate(format: "magnitude >= %@", NSNumber(value: 5))
            request.sortDescriptors = [NSSortDescriptor(key: "code", ascending: true)]
            return try context.fetch(request)
        }
        // end-snippet
        #expect(strong.count == 1)
    }
}
