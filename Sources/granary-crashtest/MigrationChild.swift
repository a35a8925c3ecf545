import Foundation
@_spi(CrashTesting) import GranaryStorage
import Granary

/// The migration crash child. It owns two model versions; the parent learns their hashes from `setup`
/// and checks stores through the model each store records, so the versions are declared only here.
///
/// - `setup <dir> <count>`: writes `count` items (and a tag per ten items) with version 1, prints
///   `models <hash1> <hash2>`.
/// - `point <dir> <point>`: migrates to version 2 and kills itself with SIGKILL when the engine reaches
///   the named point of its rewrite (see `StorageTestHooks.Point`).
/// - `run <dir>`: migrates to version 2, prints `migrated`, then waits to be killed.
func runMigrationChild(_ args: [String]) -> Never {
    guard args.count >= 2 else {
        FileHandle.standardError.write(Data("usage: granary-crashtest migrate setup|point|run <store> [count|point]\n".utf8))
        exit(2)
    }
    let url = URL(fileURLWithPath: args[1])
    do {
        let (v1, v2) = try crashTestModels()
        switch args[0] {
        case "setup":
            let count = args.count > 2 ? Int(args[2]) ?? 1000 : 1000
            try writeItems(count, with: v1, at: url)
            say("models \(v1.versionHash) \(v2.versionHash)")
            exit(0)
        case "point":
            guard args.count > 2, let point = StorageTestHooks.Point(rawValue: args[2]) else {
                say("error unknown point")
                exit(2)
            }
            StorageTestHooks.install { reached in
                if reached == point { kill(getpid(), SIGKILL) }
            }
            try open(url, with: v2)
            say("migrated")
            exit(0)
        case "run":
            try open(url, with: v2)
            say("migrated")
            while true { sleep(60) }
        default:
            say("error unknown mode \(args[0])")
            exit(2)
        }
    } catch {
        say("error \(error)")
        exit(1)
    }
}

/// Version 1: items with a name, a quantity and a tag. Version 2 renames `name` to `title`, widens
/// `qty`, adds `price` with a default and indexes `qty`: the lightweight changes the issue names.
private func crashTestModels() throws -> (ManagedObjectModel, ManagedObjectModel) {
    let v1 = try ManagedObjectModel(version: "1") {
        Entity("Item") {
            Attribute("name", .string)
            Attribute("qty", .integer16)
            Relationship("tag", to: "Tag", inverse: "items")
        }
        Entity("Tag") {
            Attribute("label", .string)
            Relationship("items", toMany: "Item", inverse: "tag")
        }
    }
    let v2 = try ManagedObjectModel(version: "2") {
        Entity("Item") {
            Attribute("title", .string, renamingIdentifier: "name")
            Attribute("qty", .integer32, indexed: true)
            Attribute("price", .double, defaultValue: 1.5)
            Relationship("tag", to: "Tag", inverse: "items")
        }
        Entity("Tag") {
            Attribute("label", .string)
            Relationship("items", toMany: "Item", inverse: "tag")
        }
    }
    return (v1, v2)
}

private func writeItems(_ count: Int, with model: ManagedObjectModel, at url: URL) throws {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    let store = try coordinator.addPersistentStore(type: .durable, at: url)
    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    try context.performAndWait {
        var tag: ManagedObject?
        for i in 0..<count {
            if i % 10 == 0 {
                tag = ManagedObject(entity: model.entity(named: "Tag")!, insertInto: context)
                try tag!.setValue("tag-\(i / 10)", forKey: "label")
            }
            let item = ManagedObject(entity: model.entity(named: "Item")!, insertInto: context)
            try item.setValue("item-\(i)", forKey: "name")
            try item.setValue(Int16(i % 1000), forKey: "qty")
            try item.setValue(tag, forKey: "tag")
        }
        try context.save()
    }
    try coordinator.remove(store)
}

private func open(_ url: URL, with model: ManagedObjectModel) throws {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    let store = try coordinator.addPersistentStore(type: .durable, at: url)
    try coordinator.remove(store)
}
