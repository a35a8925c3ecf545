import Foundation
@testable import Granary
import Testing

/// `PersistentStoreCoordinator.managedObjectID(forURIRepresentation:)` as Apple's
/// "NSPersistentStoreCoordinator" reference page documents it: "Returns an object ID for the specified
/// URI representation of an object ID if a matching store is available, or nil if a matching store
/// cannot be found", the other half of `NSManagedObjectID.uriRepresentation()`.
@Suite struct ObjectURIResolutionTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Note") { Attribute("title", .string) }
            Entity("Tag") { Attribute("name", .string) }
            Configuration("Notes", entities: "Note")
            Configuration("Tags", entities: "Tag")
        }
    }

    @Test func aSavedObjectsURIComesBackAsItsIDAcrossCoordinators() throws {
        let url = scratchURL()
        let model = try Self.model()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .durable, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let uri = try context.performAndWait {
            let note = try context.insert("Note", ["title": "kept"])
            try context.save()
            return note.objectID.uriRepresentation
        }
        #expect(coordinator.managedObjectID(forURIRepresentation: uri)?.uriRepresentation == uri)
        try coordinator.remove(store)
        #expect(coordinator.managedObjectID(forURIRepresentation: uri) == nil, "the store is no longer attached")

        // A new coordinator, as after a restart: the URI stored elsewhere finds the object again.
        let later = PersistentStoreCoordinator(managedObjectModel: model)
        let reopened = try later.addPersistentStore(type: .durable, at: url)
        defer { try? later.remove(reopened) }
        let id = try #require(later.managedObjectID(forURIRepresentation: uri))
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: later)
        #expect(try reader.performAndWait { try reader.existingObject(with: id).value(forKey: "title") as? String } == "kept")
    }

    @Test func aURIOfAnotherStoreAnUnknownEntityOrATemporaryIDIsNil() throws {
        let model = try Self.model()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let notes = try coordinator.addPersistentStore(type: .inMemory, configuration: "Notes")
        let store = notes.identifier.uuidString
        #expect(coordinator.managedObjectID(forURIRepresentation: URL(string: "x-granary://\(store)/Note/p1")!) != nil)
        #expect(coordinator.managedObjectID(forURIRepresentation: URL(string: "x-granary://\(UUID().uuidString)/Note/p1")!) == nil,
                "a store this coordinator does not have")
        #expect(coordinator.managedObjectID(forURIRepresentation: URL(string: "x-granary://\(store)/Unknown/p1")!) == nil,
                "an entity the model does not have")
        #expect(coordinator.managedObjectID(forURIRepresentation: URL(string: "x-granary://\(store)/Tag/p1")!) == nil,
                "an entity that store does not hold")
        #expect(coordinator.managedObjectID(forURIRepresentation: URL(string: "x-coredata://\(store)/Note/p1")!) == nil)
        #expect(coordinator.managedObjectID(forURIRepresentation: URL(string: "x-granary://\(store)/Note/pX")!) == nil)

        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let temporary = try context.performAndWait { try context.insert("Note", ["title": "unsaved"]).objectID.uriRepresentation }
        #expect(coordinator.managedObjectID(forURIRepresentation: temporary) == nil, "a temporary ID belongs to no store")
    }
}
