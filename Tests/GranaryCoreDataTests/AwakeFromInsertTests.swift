// Port of a Core Data class that gives each new object a unique identifier and a creation date in
// `awakeFromInsert()` (the pattern of sync-ready models: the identifier tells devices' copies apart),
// with the manual stack such code sets up, and of the primitive-setter form Apple's documentation uses.
//
// Lines a porter changes beyond `import CoreData` → `import GranaryCoreData` and `@NSManaged` → `@Managed`:
// - the model is registered in code (Linux has no model compiler);
// - a class named `Entity` would hide Granary's model builder `Entity(...)` in the same module: this
//   port names the class `SyncedEntity` (the entity keeps its name), or the builder is written
//   `Granary.Entity(...)`.
// (The original is Swift 1.2: `NSDate` became `Date` and `NSProcessInfo.processInfo()` became
// `ProcessInfo.processInfo`, as any Swift 6 port writes them; that is Swift's change, not Granary's.)
import GranaryCoreData
import Testing

// The class as the original writes it, in today's Swift.
final class SyncedEntity: NSManagedObject {
    @Managed var name: String
    @Managed var desctext: String
    @Managed var uniqueIdentifier: String?
    @Managed var creationDate: Date?

    override func awakeFromInsert() {
        super.awakeFromInsert()
        if uniqueIdentifier == nil {
            self.uniqueIdentifier = ProcessInfo.processInfo.globallyUniqueString
            self.creationDate = Date()
        }
    }
}

// The form Apple's documentation of awakeFromInsert() gives: the primitive setter.
final class Reading: NSManagedObject {
    @Managed var id: UUID?
    @Managed var value: Double

    override func awakeFromInsert() {
        super.awakeFromInsert()
        setPrimitiveValue(UUID(), forKey: "id")
    }
}

let syncModel: NSManagedObjectModel = {
    do {
        return try ManagedObjectModel(version: "1") {
            Entity("Entity", as: SyncedEntity.self) {
                Attribute("name", .string)
                Attribute("desctext", .string)
                Attribute("uniqueIdentifier", .string, optional: true)
                Attribute("creationDate", .date, optional: true)
            }
            Entity("Reading", as: Reading.self) {
                Attribute("id", .uuid, optional: true)
                Attribute("value", .double, defaultValue: 0.0)
            }
        }
    } catch {
        fatalError("the sync model does not build: \(error)")
    }
}()

@Suite struct AwakeFromInsertTests {
    /// The original's manual stack: a coordinator, a store, and a main-queue context given the
    /// coordinator and a merge policy after it is made.
    func mainQueueContext(storeURL: URL) throws -> NSManagedObjectContext {
        let psc = NSPersistentStoreCoordinator(managedObjectModel: syncModel)
        let options = [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]
        try psc.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: storeURL, options: options)
        let mainQueueMOC = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        mainQueueMOC.persistentStoreCoordinator = psc
        mainQueueMOC.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        return mainQueueMOC
    }

    /// Detaches the stores, closing their files, as Core Data code does with `remove(_:)`.
    func closeStores(of context: NSManagedObjectContext) throws {
        let psc = context.persistentStoreCoordinator!
        for store in psc.persistentStores { try psc.remove(store) }
    }

    // Apple: NSManagedObject.awakeFromInsert() — "You typically use this method to initialize special
    // default property values. This method is invoked only once in the object's lifetime."
    @Test func eachNewEntityGetsItsOwnIdentifierAndDateOnceAndKeepsThemAcrossAReopen() throws {
        let url = scratchStoreURL()
        let context = try mainQueueContext(storeURL: url)
        let identifiers = try context.performAndWait {
            let first = NSEntityDescription.insertNewObject(forEntityName: "Entity", into: context) as! SyncedEntity
            (first.name, first.desctext) = ("First", "one")
            let second = SyncedEntity(context: context)
            (second.name, second.desctext) = ("Second", "two")
            #expect(first.creationDate != nil && second.creationDate != nil)
            try context.save()
            return [first.uniqueIdentifier, second.uniqueIdentifier].compactMap { $0 }
        }
        #expect(identifiers.count == 2 && Set(identifiers).count == 2)
        try closeStores(of: context)

        let reopened = try mainQueueContext(storeURL: url)
        let stored = try reopened.performAndWait {
            let request = NSFetchRequest<SyncedEntity>(entityName: "Entity")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            return try reopened.fetch(request).compactMap(\.uniqueIdentifier)
        }
        #expect(stored == identifiers)
        try closeStores(of: reopened)
    }

    // Apple: NSManagedObject.awakeFromInsert() — "use primitive accessors to change property values";
    // Apple: setPrimitiveValue(_:forKey:).
    @Test func thePrimitiveSetterInAwakeFromInsertGivesAUUIDThatIsSaved() throws {
        let url = scratchStoreURL()
        let context = try mainQueueContext(storeURL: url)
        let (id, objectID) = try context.performAndWait {
            let reading = Reading(context: context)
            reading.value = 21.5
            try context.save()
            return (reading.id, reading.objectID)
        }
        #expect(id != nil)
        // A child context made in Core Data's two lines reads it as saved.
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = context
        let childID = try child.performAndWait { (try child.existingObject(with: objectID) as! Reading).id }
        #expect(childID == id)
        try closeStores(of: context)
    }
}
