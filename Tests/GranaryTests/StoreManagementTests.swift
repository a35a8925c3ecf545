import Foundation
@testable import Granary
import GranaryStorage
import Synchronization
import Testing

/// Store management as Apple's NSPersistentStoreCoordinator documentation describes it: the
/// coordinator's own queue (`perform`, `performAndWait`), a store's options, `destroyPersistentStore`,
/// `replacePersistentStore`, `migratePersistentStore(_:to:options:type:)`, and the context's
/// `assign(_:to:)`.
@Suite struct StoreManagementTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Note") {
                Attribute("title", .string)
                Attribute("stars", .integer64, defaultValue: 0)
                Index("byTitle", "title")
            }
            Configuration("Local", entities: "Note")
            Configuration("Shared", entities: "Note")
        }
    }

    /// Saves notes with these titles through a new context and returns their IDs.
    @discardableResult
    static func add(_ titles: [String], to coordinator: PersistentStoreCoordinator,
                    assigning store: PersistentStore? = nil) throws -> [ManagedObjectID] {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait {
            let notes = try titles.map { title -> ManagedObject in
                let note = ManagedObject(entity: coordinator.managedObjectModel.entity(named: "Note")!, insertInto: context)
                try note.setValue(title, forKey: "title")
                if let store { try context.assign(note, to: store) }
                return note
            }
            try context.save()
            return notes.map(\.objectID)
        }
    }

    static func titles(in coordinator: PersistentStoreCoordinator) throws -> [String] {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Note")
            request.sortKeys = [SortKey("title")]
            return try context.fetch(request).map { try $0.value(forKey: "title") as? String ?? "?" }
        }
    }

    static func durable(_ url: URL, options: PersistentStore.Options = .init()) throws -> (PersistentStoreCoordinator, PersistentStore) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        let store = try coordinator.addPersistentStore(type: .durable, at: url, options: options)
        return (coordinator, store)
    }

    // NSPersistentStore.options: "the options the store was added with".
    @Test func aStoreKeepsTheOptionsItWasOpenedWith() throws {
        let url = scratchURL()
        defer { try? FileManager.default.removeItem(at: url) }
        let options = PersistentStore.Options(durability: .off, persistentHistoryTracking: true)
        let (coordinator, store) = try Self.durable(url, options: options)
        #expect(store.options == options)
        let other = PersistentStoreCoordinator(managedObjectModel: coordinator.managedObjectModel)
        #expect(try other.addPersistentStore(sharing: store).options == options)
    }

    // NSPersistentStoreCoordinator.perform(_:) / performAndWait(_:): blocks on the coordinator's queue.
    @Test func theCoordinatorRunsBlocksOnItsOwnQueueInTurn() async throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        let nested = coordinator.performAndWait { coordinator.performAndWait { 42 } }
        #expect(nested == 42, "performAndWait is re-entrant")
        let log = Mutex<[Int]>([])
        // From synchronous code, as Core Data code calls it (in an async function the async form wins).
        func enqueue(_ i: Int) { coordinator.perform { log.withLock { $0.append(i) } } }
        for i in 0..<50 { enqueue(i) }
        let count = try await coordinator.perform { log.withLock { $0.count } }
        #expect(count == 50, "blocks run in the order they were given, before the async one")
        #expect(log.withLock { $0 } == Array(0..<50))
    }

    // NSPersistentStoreCoordinator.destroyPersistentStore(at:type:options:)
    @Test func destroyingRemovesTheStoreAndItsFiles() throws {
        let url = scratchURL()
        defer { try? FileManager.default.removeItem(at: url) }
        let (coordinator, _) = try Self.durable(url)
        try Self.add(["a", "b"], to: coordinator)
        try coordinator.destroyPersistentStore(at: url)
        #expect(coordinator.persistentStores.isEmpty, "an attached store is removed first")
        #expect(!FileManager.default.fileExists(atPath: url.path))
        let (again, _) = try Self.durable(url)
        #expect(try Self.titles(in: again).isEmpty)
        try coordinator.destroyPersistentStore(at: scratchURL("nothing-here"))
    }

    @Test func aStoreOpenElsewhereIsNotDestroyed() throws {
        let url = scratchURL()
        defer { try? FileManager.default.removeItem(at: url) }
        let (owner, store) = try Self.durable(url)
        try Self.add(["kept"], to: owner)
        let other = PersistentStoreCoordinator(managedObjectModel: owner.managedObjectModel)
        #expect {
            try other.destroyPersistentStore(at: url)
        } throws: { error in
            guard case ContextError.storeInUse(let at) = error else { return false }
            return at == url
        }
        #expect(try Self.titles(in: owner) == ["kept"])
        _ = store
    }

    // NSPersistentStoreCoordinator.replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:type:)
    @Test func replacingCopiesTheSourceOverTheDestination() throws {
        let sourceURL = scratchURL("source"), destinationURL = scratchURL("destination"), backupURL = scratchURL("backup")
        defer { for url in [sourceURL, destinationURL, backupURL] { try? FileManager.default.removeItem(at: url) } }
        let (source, sourceStore) = try Self.durable(sourceURL)
        let ids = try Self.add(["one", "two"], to: source)
        try source.remove(sourceStore)
        // A destination attached to this coordinator is removed, replaced and added back with its options.
        let options = PersistentStore.Options(durability: .off)
        let (destination, old) = try Self.durable(destinationURL, options: options)
        try Self.add(["old"], to: destination)
        try destination.replacePersistentStore(at: destinationURL, withPersistentStoreFrom: sourceURL)
        #expect(try Self.titles(in: destination) == ["one", "two"])
        let replaced = try #require(destination.persistentStore(for: destinationURL) as PersistentStore?)
        #expect(replaced !== old && replaced.options == options)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: destination)
        try context.performAndWait { () throws in
            #expect(try context.existingObject(with: ids[0]).value(forKey: "title") as? String == "one", "the copy is the same store")
        }

        // A source attached to this coordinator is copied from a snapshot while it stays in use.
        let (reopened, _) = try Self.durable(sourceURL)
        try Self.add(["three"], to: reopened)
        try reopened.replacePersistentStore(at: backupURL, withPersistentStoreFrom: sourceURL)
        try Self.add(["four"], to: reopened)
        #expect(try Self.titles(in: reopened) == ["four", "one", "three", "two"])
        let (backup, _) = try Self.durable(backupURL)
        #expect(try Self.titles(in: backup) == ["one", "three", "two"])

        // A store open in another coordinator is not copied under it; nor is a store over itself.
        #expect {
            try destination.replacePersistentStore(at: destinationURL, withPersistentStoreFrom: sourceURL)
        } throws: { error in
            if case ContextError.storeInUse(sourceURL) = error { return true } else { return false }
        }
        #expect(throws: ContextError.self) { try reopened.replacePersistentStore(at: sourceURL, withPersistentStoreFrom: sourceURL) }
        #expect {
            try reopened.replacePersistentStore(at: destinationURL, withPersistentStoreFrom: scratchURL("missing"))
        } throws: { error in
            if case ContextError.storeDoesNotExist = error { return true } else { return false }
        }
    }

    // NSPersistentStoreCoordinator.migratePersistentStore(_:to:options:type:): durable to in-memory and back.
    @Test func migratingCopiesAStoreToAnotherTypeAndSwapsItIn() throws {
        let url = scratchURL("original"), copyURL = scratchURL("copy")
        defer {
            try? FileManager.default.removeItem(at: url)
            try? FileManager.default.removeItem(at: copyURL)
        }
        let (coordinator, original) = try Self.durable(url)
        let ids = try Self.add(["a", "b"], to: coordinator)

        let memory = try coordinator.migratePersistentStore(original, to: nil, type: .inMemory)
        #expect(coordinator.persistentStores.count == 1 && coordinator.persistentStores[0] === memory)
        #expect(memory.type == .inMemory && memory.identifier == original.identifier)
        #expect(try Self.titles(in: coordinator) == ["a", "b"])
        try Self.add(["only in memory"], to: coordinator)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            #expect(try context.existingObject(with: ids[1]).value(forKey: "title") as? String == "b", "IDs stay valid")
        }
        // The original's files are as they were.
        let (reopened, reopenedStore) = try Self.durable(url)
        #expect(try Self.titles(in: reopened) == ["a", "b"])
        try reopened.remove(reopenedStore)

        let durable = try coordinator.migratePersistentStore(memory, to: copyURL, type: .durable)
        #expect(durable.url == copyURL)
        #expect(throws: ContextError.self) { try coordinator.migratePersistentStore(durable, to: url, type: .durable) }
        try coordinator.remove(durable)
        let (copy, _) = try Self.durable(copyURL)
        #expect(try Self.titles(in: copy) == ["a", "b", "only in memory"])
    }

    // NSManagedObjectContext.assign(_:to:): "Specifies the store in which a newly inserted object will be saved."
    @Test func assignedObjectsAreSavedInTheirStoreAndFetchedFromAll() throws {
        let localURL = scratchURL("local"), sharedURL = scratchURL("shared")
        defer {
            try? FileManager.default.removeItem(at: localURL)
            try? FileManager.default.removeItem(at: sharedURL)
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        let local = try coordinator.addPersistentStore(type: .durable, configuration: "Local", at: localURL)
        let shared = try coordinator.addPersistentStore(type: .durable, configuration: "Shared", at: sharedURL)
        let inLocal = try Self.add(["b", "d"], to: coordinator)
        let inShared = try Self.add(["a", "c"], to: coordinator, assigning: shared)
        #expect(inLocal.allSatisfy { $0.persistentStoreIdentifier == local.identifier })
        #expect(inShared.allSatisfy { $0.persistentStoreIdentifier == shared.identifier })
        #expect(try Self.titles(in: coordinator) == ["a", "b", "c", "d"], "sorted across both stores")
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            var request = FetchRequest<ManagedObject>(entityName: "Note")
            request.sortKeys = [SortKey("title", ascending: false)]
            request.fetchLimit = 2
            #expect(try context.fetch(request).map { try $0.value(forKey: "title") as? String } == ["d", "c"])
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Note")) == 4)

            var rows = FetchRequest<ManagedObject>(entityName: "Note")
            rows.propertiesToFetch = ["title"]
            rows.sortKeys = [SortKey("title")]
            #expect(try context.fetchDictionaries(rows).map { $0["title"] as? String } == ["a", "b", "c", "d"])
            var total = FetchRequest<ManagedObject>(entityName: "Note")
            total.propertiesToFetch = [.expression(ExpressionDescription(name: "n", expression: .count(), resultType: .integer64))]
            #expect(throws: ContextError.self) { try context.fetchDictionaries(total) }

            let saved = try context.existingObject(with: inLocal[0])
            #expect(throws: ContextError.self) { try context.assign(saved, to: shared) }
        }
        try coordinator.remove(local)
        try coordinator.remove(shared)
        let alone = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try alone.addPersistentStore(type: .durable, configuration: "Shared", at: sharedURL)
        #expect(try Self.titles(in: alone) == ["a", "c"])
    }

    @Test func anObjectCannotGoToAStoreWithoutItsEntity() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Note") { Attribute("title", .string) }
            Entity("Cache") { Attribute("key", .string) }
            Configuration("Notes", entities: "Note")
            Configuration("Caches", entities: "Cache")
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, configuration: "Notes")
        let caches = try coordinator.addPersistentStore(type: .inMemory, configuration: "Caches")
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            let note = ManagedObject(entity: model.entity(named: "Note")!, insertInto: context)
            #expect {
                try context.assign(note, to: caches)
            } throws: { error in
                guard case ContextError.invalidRequest(let entity, let reason) = error else { return false }
                return entity == "Note" && reason.contains("Caches")
            }
        }
    }
}
