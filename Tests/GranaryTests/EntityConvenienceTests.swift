import Testing
import Granary

// `import Granary` alone (not `@testable`, no `import Foundation`): Foundation's types come with it, as
// they come with `import CoreData`.

/// Core Data's conveniences for finding entities and making objects and requests by class or name.
@Suite struct EntityConvenienceTests {
    @Test func foundationTypesComeWithGranary() {
        let date: Date = Date(timeIntervalSince1970: 0)
        let id = UUID()
        #expect(date.timeIntervalSince1970 == 0 && id.uuidString.count == 36)
    }

    // Apple: NSEntityDescription.insertNewObject(forEntityName:into:) — "Creates, configures, and returns
    // an instance of the class for the entity with a given name." Core Data raises for an unknown name;
    // Granary throws ContextError.unknownEntity.
    @Test func insertNewObjectMakesAnObjectOfTheEntitysClassOrThrows() throws {
        let (_, context) = try makeNotesStack()
        try context.performAndWait {
            let object = try EntityDescription.insertNewObject(forEntityName: "Note", into: context)
            let note = try #require(object as? Note)
            #expect(note.isInserted && note.events == ["awakeFromInsert"])
            #expect {
                _ = try EntityDescription.insertNewObject(forEntityName: "Notebook", into: context)
            } throws: { error in
                if case .unknownEntity(let name) = error as? ContextError { return name == "Notebook" && "\(error)".contains("Notebook") }
                return false
            }
        }
        let unattached = ManagedObjectContext(concurrencyType: .privateQueue)
        unattached.performAndWait { () -> Void in
            #expect(throws: ContextError.self) { _ = try EntityDescription.insertNewObject(forEntityName: "Note", into: unattached) }
        }
    }

    // Apple: NSEntityDescription.entity(forEntityName:in:) — "Returns the entity with the specified name
    // from the managed object model associated with the specified managed object context's persistent
    // store coordinator."
    @Test func entityForNameInAContext() throws {
        let (_, context) = try makeNotesStack()
        #expect(EntityDescription.entity(forEntityName: "Folder", in: context)?.name == "Folder")
        #expect(EntityDescription.entity(forEntityName: "Nothing", in: context) == nil)
    }

    // Apple: NSManagedObject.entity() — "Returns the entity description for the receiver's class"; Apple:
    // NSManagedObject.fetchRequest() — "Returns a fetch request configured with the entity description
    // for the managed object's class".
    @Test func aClassKnowsItsEntityAndMakesTypedFetchRequests() throws {
        let (_, context) = try makeNotesStack()
        #expect(Note.entity().name == "Note")
        #expect(Folder.entity().relationshipsByName["notes"] != nil)
        let request = Note.fetchRequest()
        #expect(request.entityName == "Note")
        let titles = try context.performAndWait {
            let note = Note(context: context)
            note.title = "Found"
            try context.save()
            let notes: [Note] = try context.fetch(Note.fetchRequest())
            return notes.map(\.title)
        }
        #expect(titles == ["Found"])
    }

    // Core Data warns when two models claim a class ("+entity is unable to disambiguate"); Granary
    // returns the newest model's entity, and a request by class then leaves the name to the context.
    @Test func aClassBoundInTwoDifferentModelsAnswersWithTheNewest() throws {
        let first = try ManagedObjectModel(version: "a") { Entity("Bound", as: Bound.self) { Attribute("x", .integer64, defaultValue: 0) } }
        let second = try ManagedObjectModel(version: "b") { Entity("Rebound", as: Bound.self) { Attribute("y", .string, optional: true) } }
        #expect(Bound.entity().name == "Rebound")
        #expect(Bound.fetchRequest().entityName == nil)
        withExtendedLifetime(first) {}
        withExtendedLifetime(second) {}
    }

    // Generated Core Data code declares its own `fetchRequest()` per class; it keeps compiling and wins.
    @Test func aClassesOwnFetchRequestTakesPrecedence() {
        #expect(Generated.fetchRequest().entityName == "GeneratedEntity")
    }
}

final class Bound: ManagedObject {}

final class Generated: ManagedObject {}

extension Generated {
    class func fetchRequest() -> FetchRequest<Generated> { FetchRequest<Generated>(entityName: "GeneratedEntity") }
}
