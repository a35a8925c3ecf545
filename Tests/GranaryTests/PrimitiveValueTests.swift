import Foundation
import Testing
@testable import Granary

/// A ticket that gives itself an identifier the way Core Data code does: with the primitive setter in
/// `awakeFromInsert()`, and a custom setter between the change notifications.
final class Ticket: ManagedObject {
    @Managed var id: UUID?
    @Managed var title: String

    override func awakeFromInsert() {
        super.awakeFromInsert()
        setPrimitiveValue(UUID(), forKey: "id")
        setPrimitiveValue("untitled", forKey: "title")
    }

    /// A Core Data custom accessor, written with the notification methods around the primitive ones.
    var shoutedTitle: String {
        get {
            willAccessValue(forKey: "title")
            defer { didAccessValue(forKey: "title") }
            return (primitiveValue(forKey: "title") as? String ?? "").uppercased()
        }
        set {
            willChangeValue(forKey: "title")
            setPrimitiveValue(newValue.uppercased(), forKey: "title")
            didChangeValue(forKey: "title")
        }
    }
}

func makeTicketStack() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
    let model = try ManagedObjectModel(version: "tickets") {
        Entity("Ticket", as: Ticket.self) {
            Attribute("id", .uuid, optional: true)
            Attribute("title", .string)
        }
    }
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(type: .inMemory)
    return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
}

@Suite struct PrimitiveValueTests {
    // Apple: NSManagedObject.awakeFromInsert() — "You typically use this method to initialize special
    // default property values"; Apple: setPrimitiveValue(_:forKey:) — "Sets the value of a given property
    // in the managed object's private internal storage."
    @Test func awakeFromInsertSetsAnIdentifierWithThePrimitiveSetterAndItIsSaved() throws {
        let (coordinator, context) = try makeTicketStack()
        let (objectID, id) = try context.performAndWait {
            let ticket = Ticket(context: context)
            let id = try #require(ticket.id)
            #expect(ticket.primitiveValue(forKey: "id") as? UUID == id)
            #expect(ticket.title == "untitled")
            try context.save()
            return (ticket.objectID, id)
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try other.performAndWait {
            let stored = try #require(try other.existingObject(with: objectID) as? Ticket)
            #expect(stored.id == id)
            #expect(stored.title == "untitled")
        }
    }

    // Apple: primitiveValue(forKey:) — "Returns the value for the specified property from the managed
    // object's private internal storage"; willAccessValue(forKey:) — "Provides support for key-value
    // observing access notification" (it fires the fault, so the value is there to read).
    @Test func aCustomAccessorReadsAFaultAndItsSetterIsRecordedAsAChange() throws {
        let (coordinator, context) = try makeTicketStack()
        let objectID = try context.performAndWait {
            let ticket = Ticket(context: context)
            ticket.title = "Leak"
            try context.save()
            return ticket.objectID
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try other.performAndWait {
            let fault = try #require(other.object(with: objectID) as? Ticket)
            #expect(fault.isFault)
            #expect(fault.shoutedTitle == "LEAK")
            #expect(!fault.isFault)
            fault.shoutedTitle = "fixed"
            #expect(fault.isUpdated && fault.hasPersistentChangedValues)
            #expect(fault.changedValues()["title"] as? String == "FIXED")
            try other.save()
        }
        try context.performAndWait {
            let ticket = try #require(context.object(with: objectID) as? Ticket)
            context.refresh(ticket, mergeChanges: false)
            #expect(ticket.title == "FIXED")
        }
    }

    // Apple: setValue(_:forKey:) — "If key is not a property defined by the model, the method raises an
    // exception." Granary's non-throwing primitive setter keeps the error for the next save instead.
    @Test func aPrimitiveSetOfAnUnknownKeyOrAWrongTypeFailsTheNextSaveNamingIt() throws {
        let (_, context) = try makeTicketStack()
        try context.performAndWait {
            let ticket = Ticket(context: context)
            #expect(ticket.primitiveValue(forKey: "colour") == nil)
            ticket.setPrimitiveValue("red", forKey: "colour")
            let unknown = try #require(throws: ContextError.self) { try context.save() }
            guard case .unknownKey(entity: "Ticket", key: "colour") = unknown else {
                Issue.record("expected an unknown key Ticket.colour, got \(unknown)")
                return
            }
            // The error stays until the change is undone; then a wrong type is named the same way.
            context.rollback()
            let other = Ticket(context: context)
            other.setPrimitiveValue(42, forKey: "id")
            let error = try #require(throws: ContextError.self) { try context.save() }
            guard case .wrongValueType(entity: "Ticket", key: "id", _, _) = error else {
                Issue.record("expected a wrong value type for Ticket.id, got \(error)")
                return
            }
            // Nothing was kept of the refused value.
            #expect(other.id != nil)
            context.rollback()
            try context.save()
        }
    }

    // Apple: setPrimitiveValue(_:forKey:) — "If key identifies a to-one relationship, relates the object
    // specified by value to the receiver, unrelating the previously related object if there was one."
    @Test func aPrimitiveSetOfARelationshipRelatesAndUnrelatesBothSides() throws {
        let (_, context) = try makeNotesStack()
        try context.performAndWait {
            let (inbox, archive) = (Folder(context: context), Folder(context: context))
            (inbox.name, archive.name) = ("Inbox", "Archive")
            let note = Note(context: context)
            note.title = "Moving"
            note.setPrimitiveValue(inbox, forKey: "folder")
            #expect(inbox.notes == [note])
            note.setPrimitiveValue(archive, forKey: "folder")
            #expect(inbox.notes.isEmpty && archive.notes == [note])
            #expect(note.primitiveValue(forKey: "folder") as? Folder === archive)
            try context.save()
        }
    }
}
