import Foundation
import Granary
import GranaryStack
import Testing

/// The code of the articles "Stores, durability and what a crash can lose" and "Porting from Core Data".
@Suite struct StoresArticleTests {
    @Test func configurationsRouteEntitiesToStores() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let library = try libraryModel()
        // snippet: stores-configurations
        let cache = try ManagedObjectModel {
            Entity("RecentSearch") { Attribute("text", .string) }
            Configuration("Cache", entities: "RecentSearch")
        }
        let model = try ManagedObjectModel(merging: [library, cache])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, configuration: "Cache")   // RecentSearch objects
        try coordinator.addPersistentStore(type: .durable, at: url)                   // every other entity
        // end-snippet
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            try ManagedObject(entity: model.entity(named: "RecentSearch")!, insertInto: context).setValue("lem", forKey: "text")
            let book = Book(context: context)
            book.title = "Solaris"
            book.year = 1961
            try context.save()
        }
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        // The durable store alone: it holds the book and no search.
        let reopened = PersistentStoreCoordinator(managedObjectModel: model)
        try reopened.addPersistentStore(type: .durable, at: url)
        let check = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: reopened)
        let counts = try check.performAndWait {
            (try check.count(for: FetchRequest<Book>()), try check.count(for: FetchRequest<ManagedObject>(entityName: "RecentSearch")))
        }
        #expect(counts == (1, 0))
    }

    @Test func aDamagedStoreIsRefusedOrKeptToAPrefix() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        do {
            let coordinator = try libraryCoordinator(at: url)
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try context.performAndWait {
                for year in 1990...2009 {
                    let book = Book(context: context)
                    book.title = "Book \(year)"
                    book.year = year
                    try context.save()
                }
            }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
        }
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: url.path).first { $0.hasSuffix(".wal") })
        let file = url.appendingPathComponent(segment)
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count * 3 / 4] ^= 0xFF
        try bytes.write(to: file)

        let coordinator = PersistentStoreCoordinator(managedObjectModel: try libraryModel())
        #expect(throws: ContextError.self) { try coordinator.addPersistentStore(type: .durable, at: url) }
        // snippet: stores-damaged
        do {
            try coordinator.addPersistentStore(type: .durable, at: url)
        } catch ContextError.storage(.corruption(let file, let offset, let reason)) {
            print("\(file) at offset \(offset): \(reason)")            // the files are left as they were
        }
        // end-snippet
        #expect(try Data(contentsOf: file) == bytes)

        // snippet: stores-options
        var options = PersistentStore.Options(durability: .full)      // the default: a save returns once on disk
        options.recovery = .keepConsistentPrefix                      // open a damaged store with what precedes the damage
        let store = try coordinator.addPersistentStore(type: .durable, at: url, options: options)
        if let lost = store.recoveryReport.lostCommits {
            print("commits after \(lost.afterLSN) were lost (\(lost.reason)); set aside: \(lost.quarantinedFiles)")
        }
        // end-snippet
        #expect(store.recoveryReport.lostCommits != nil)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let count = try context.performAndWait { try context.count(for: FetchRequest<Book>()) }
        #expect(count > 3 && count < 23)
    }

    @Test func theCoreDataPortOfAFetchRuns() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = try libraryCoordinator(at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let titles = try context.performAndWait {
            // snippet: porting-fetch
            var request = FetchRequest<Book>()
            request.filter = try PredicateParser.parse("year < %d AND author.name BEGINSWITH[c] %@", arguments: [1970, "stan"])
            request.sortKeys = [SortKey("year", ascending: false)]
            request.fetchLimit = 20
            let books = try context.fetch(request)
            // end-snippet
            return books.map(\.title)
        }
        #expect(titles == ["The Cyberiad", "Solaris"])
    }

    @Test func theCoreDataPortOfAContainerRuns() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = try libraryModel()
        // snippet: porting-container
        let container = try PersistentContainer(name: "Library", model: model,
                                                options: StackOptions(storeDirectory: directory)).start()
        try await container.performBackgroundTask { context in
            let book = Book(context: context)
            book.title = "Solaris"
            book.year = 1961
            try context.save()
        }
        // end-snippet
        try await container.flush()
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("Library.granary").path))
        try container.close()
    }
}
