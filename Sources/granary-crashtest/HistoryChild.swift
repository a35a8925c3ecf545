import Foundation
import Granary

/// The persistent history crash child: a store tracking history, saved in a loop (each save inserts an
/// item, renames an earlier one and now and then deletes one) until the parent kills it with SIGKILL.
/// Each committed save prints `saved <n>`. The parent then checks that the history and the rows agree:
/// a save and its record are one commit.
///
/// `granary-crashtest history <store-directory> <seed>`
func runHistoryChild(_ args: [String]) -> Never {
    var arguments = ChildArguments(args, mode: "history")
    let path = arguments.storePath
    func next(_ bound: Int) -> Int { arguments.next(bound) }
    do {
        let model = try historyCrashModel()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: URL(fileURLWithPath: path),
                                           options: .init(persistentHistoryTracking: true))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.transactionAuthor = "crashtest"
        var saves = 0
        while true {
            try context.performAndWait {
                let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
                let item = ManagedObject(entity: model.entity(named: "Item")!, insertInto: context)
                try item.setValue(Int64(saves), forKey: "serial")
                try item.setValue("new", forKey: "label")
                if !items.isEmpty { try items[next(items.count)].setValue("renamed \(saves)", forKey: "label") }
                if items.count > 3 && next(3) == 0 { context.delete(items[next(items.count)]) }
                try context.save()
                context.reset()
            }
            saves += 1
            say("saved \(saves)")
        }
    } catch {
        say("error \(error)")
        exit(1)
    }
}

/// The model of the history crash child; the test opens the store with the same model.
func historyCrashModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "1") {
        Entity("Item") {
            Attribute("serial", .integer64, preservesValueInHistoryOnDeletion: true)
            Attribute("label", .string)
        }
    }
}
