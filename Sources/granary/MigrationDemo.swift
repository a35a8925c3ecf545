import Foundation
import Granary

/// The migration part of the demo: a copy of the object-graph demo's store opened with version 2 of
/// its model, which renames an attribute and adds one with a default. A copy, so the next run still
/// finds the store at version 1.
enum MigrationDemo {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "2") {
            Entity("Author") {
                Attribute("name", .string)
                Attribute("birthYear", .integer64, renamingIdentifier: "born")
                Relationship("books", toMany: "Book", inverse: "author", deleteRule: .cascade)
                Unique("name")
            }
            Entity("Book") {
                Attribute("title", .string)
                Attribute("year", .integer32, validation: [.range(min: 1000, max: 2100)])
                Attribute("price", .double, defaultValue: 0)
                Attribute("pages", .integer32, defaultValue: 0)
                Relationship("author", to: "Author", inverse: "books", deleteRule: .nullify)
                Index("byYear", "year")
            }
        }
    }

    static func run(copying url: URL) throws {
        print("Migration (module Granary)")
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("granary-demo-\(UUID().uuidString)")
            .appendingPathComponent(url.lastPathComponent)
        try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        try FileManager.default.copyItem(at: url, to: copy)

        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        var options = PersistentStore.Options()
        options.migration.versions = [try ObjectGraphDemo.model()]
        let start = ContinuousClock.now
        let store = try coordinator.addPersistentStore(type: .durable, at: copy, options: options)
        let ms = (ContinuousClock.now - start) / .milliseconds(1)
        if let report = store.migrationReport {
            print(String(format: "  a copy of the store opened with model version 2: migrated %@ in %.2f ms",
                         report.path.joined(separator: " → ") as NSString, ms))
            for change in report.changes.flatMap({ $0 }) { print("    \(change)") }
        }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Author")
            request.filter = try PredicateParser.parse("name == %@", arguments: ["Octavia E. Butler"])
            if let author = try context.fetch(request).first, let book = (try author.value(forKey: "books") as? Set<ManagedObject>)?.first {
                let born = try author.value(forKey: "birthYear") as? Int64 ?? 0
                let pages = try book.value(forKey: "pages") as? Int32 ?? -1
                print("  Octavia E. Butler: birthYear \(born) (was born); \(try book.value(forKey: "title") as? String ?? "?") has pages = \(pages) (the default)")
            }
        }
        try coordinator.remove(store)
        print("")
    }
}
