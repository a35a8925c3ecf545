import Foundation
import Granary

/// The one-sided relationships crash child: notes point at tags through relationships with no inverse
/// (a to-one and a to-many), and each save links, relinks and deletes tags at random, until the parent
/// kills it with SIGKILL. Each committed save prints `saved <n>`.
///
/// `granary-crashtest onesided <store-directory> <seed>`
func runOneSidedChild(_ args: [String]) -> Never {
    var arguments = ChildArguments(args, mode: "onesided")
    let path = arguments.storePath
    func next(_ bound: Int) -> Int { arguments.next(bound) }
    do {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Tag") { Attribute("name", .string) }
            Entity("Note") {
                Attribute("title", .string)
                Relationship("tag", to: "Tag")
                Relationship("tags", toMany: "Tag", deleteRule: .noAction)
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: URL(fileURLWithPath: path))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        var saves = 0
        var serial = 0
        while true {
            try context.performAndWait {
                var tags = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))
                let notes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
                for _ in 0..<(1 + next(3)) {
                    serial += 1
                    let tag = ManagedObject(entity: model.entity(named: "Tag")!, insertInto: context)
                    try tag.setValue("t\(serial)", forKey: "name")
                    tags.append(tag)
                }
                for _ in 0..<(1 + next(4)) {
                    serial += 1
                    let note = ManagedObject(entity: model.entity(named: "Note")!, insertInto: context)
                    try note.setValue("n\(serial)", forKey: "title")
                    try note.setValue(tags[next(tags.count)], forKey: "tag")
                    try note.setValue(Set((0..<next(4)).map { _ in tags[next(tags.count)] }), forKey: "tags")
                }
                for note in notes where next(4) == 0 {
                    try note.setValue(tags[next(tags.count)], forKey: "tag")
                }
                for tag in tags where next(5) == 0 { context.delete(tag) }
                try context.save()
                // Keep memory flat: the next round fetches again.
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
