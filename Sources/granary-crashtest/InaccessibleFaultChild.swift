import Foundation
import Granary

/// Fires a fault whose object another context deleted, in a context with
/// `shouldDeleteInaccessibleFaults` off: the process must stop there (Core Data raises
/// `NSObjectInaccessibleException`). Prints `firing` before the fault fires and `survived` if it goes on.
///
/// `granary-crashtest inaccessible-fault <store-directory>`
func runInaccessibleFaultChild(_ args: [String]) -> Never {
    guard let path = args.first else {
        say("usage: granary-crashtest inaccessible-fault <store-directory>")
        exit(2)
    }
    do {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Note") { Attribute("title", .string) }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: URL(fileURLWithPath: path))
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let id = try writer.performAndWait {
            let note = ManagedObject(entity: model.entity(named: "Note")!, insertInto: writer)
            try note.setValue("doomed", forKey: "title")
            try writer.save()
            return note.objectID
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        reader.shouldDeleteInaccessibleFaults = false
        try reader.performAndWait {
            let fault = reader.object(with: id)
            try writer.performAndWait {
                writer.delete(try writer.existingObject(with: id))
                try writer.save()
            }
            say("firing")
            _ = try fault.value(forKey: "title")
            say("survived")
        }
        exit(0)
    } catch {
        say("error: \(error)")
        exit(1)
    }
}
