// Port of Apple's article "Creating and saving managed objects" (make an object in a context, set its
// values, save if the context has changes) and of the did-save notifications and error codes Core Data
// code reads after a save.
//
// Lines a porter changes beyond `import CoreData` → `import GranaryCoreData` and `@NSManaged` → `@Managed`:
// - none in the saving code; an observer of `.NSManagedObjectContextDidSave` reads the same keys;
// - `error.userInfo[NSValidationObjectErrorKey]` holds the entity's name, not the object (Granary's
//   errors are `Sendable` and carry names).
import GranaryCoreData
import Testing

@Suite struct CreatingAndSavingManagedObjectsTests {
    func container() -> NSPersistentContainer {
        registerEarthquakesModel()
        let container = NSPersistentContainer(name: "Earthquakes")
        container.persistentStoreDescriptions.first!.url = URL(fileURLWithPath: "/dev/null")
        container.loadPersistentStores { _, error in precondition(error == nil) }
        return container
    }

    // The article's save, as written: "if context.hasChanges { do { try context.save() } catch … }".
    func saveContext(_ context: NSManagedObjectContext) -> NSError? {
        if context.hasChanges {
            do {
                try context.save()
            } catch {
                let nserror = error as NSError
                return nserror
            }
        }
        return nil
    }

    // Apple: "Creating and saving managed objects" — initialize a managed object with a context, set its
    // attributes, save; Apple: NSManagedObjectContextDidSave — userInfo holds the inserted, updated and
    // deleted objects under NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey.
    @Test func anObjectMadeInAContextIsSavedAndTheDidSaveNotificationNamesIt() throws {
        let container = container()
        let context = container.viewContext
        let inserted = LockedBox<[String]>([])
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: context, queue: nil) { note in
            let objects = note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> ?? []
            inserted.set(objects.compactMap { ($0 as? Quake)?.code })
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let error = context.performAndWait { () -> NSError? in
            let quake = Quake(context: context)
            quake.code = "nc71"
            quake.place = "Petrolia"
            quake.time = Date(timeIntervalSince1970: 0)
            quake.magnitude = 4.2
            return saveContext(context)
        }
        #expect(error == nil)
        #expect(inserted.value == ["nc71"])
        #expect(try context.performAndWait { try context.count(for: Quake.fetchRequest()) } == 1)
    }

    // Apple: NSManagedObjectContext.mergeChanges(fromContextDidSave:) — a second context merges the
    // notification of the first one's save.
    @Test func anotherContextMergesTheDidSaveNotification() throws {
        let container = container()
        let background = container.newBackgroundContext()
        let view = container.viewContext
        let existing = try view.performAndWait { () -> NSManagedObjectID in
            let quake = Quake(context: view)
            (quake.code, quake.place, quake.time) = ("nc1", "Parkfield", Date(timeIntervalSince1970: 0))
            try view.save()
            return quake.objectID
        }
        let saved = LockedBox<Notification?>(nil)
        let observer = NotificationCenter.default.addObserver(forName: NSManagedObjectContext.didSaveObjectsNotification,
                                                              object: background, queue: nil) { saved.set($0) }
        defer { NotificationCenter.default.removeObserver(observer) }
        try background.performAndWait {
            let quake = try #require(try background.existingObject(with: existing) as? Quake)
            quake.place = "Cholame"
            try background.save()
        }
        let note = try #require(saved.value)
        #expect((note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject>)?.map(\.objectID) == [existing])
        let place = view.performAndWait { () -> String in
            view.mergeChanges(fromContextDidSave: note)
            return (view.object(with: existing) as! Quake).place
        }
        #expect(place == "Cholame")
    }

    // Apple: "Core Data Constants" — NSValidationMissingMandatoryPropertyError (1570),
    // NSValidationMultipleErrorsError (1560) with NSDetailedErrorsKey; a failed save reads as Core Data's
    // NSError.
    @Test func aFailedSaveReadsAsCoreDatasErrorCodes() throws {
        let container = container()
        let context = container.viewContext
        let (one, several) = context.performAndWait { () -> (NSError?, NSError?) in
            let quake = Quake(context: context)
            quake.code = "nc2"
            quake.time = Date(timeIntervalSince1970: 0)  // place left out
            let one = saveContext(context)
            context.rollback()
            _ = Quake(context: context)  // code, place and time left out
            return (one, saveContext(context))
        }
        #expect(one?.domain == NSCocoaErrorDomain && one?.code == NSValidationMissingMandatoryPropertyError)
        #expect(one?.userInfo[NSValidationKeyErrorKey] as? String == "place")
        #expect(several?.code == NSValidationMultipleErrorsError)
        let details = several?.userInfo[NSDetailedErrorsKey] as? [NSError] ?? []
        #expect(details.count == 3 && details.allSatisfy { $0.code == NSValidationMissingMandatoryPropertyError })
    }

    // Apple: NSManagedObjectConstraintMergeError (133021) — a uniqueness constraint broken under
    // NSErrorMergePolicy.
    @Test func aBrokenUniquenessConstraintReadsAsAConstraintMergeError() throws {
        let container = container()
        let context = container.viewContext
        let error = context.performAndWait { () -> NSError? in
            context.mergePolicy = NSErrorMergePolicy
            for _ in 0..<2 {
                let quake = Quake(context: context)
                (quake.code, quake.place, quake.time) = ("dup", "Here", Date(timeIntervalSince1970: 0))
            }
            return saveContext(context)
        }
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSManagedObjectConstraintMergeError)
    }
}

/// A value shared with notification observers, which may run on another thread.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
}
