import Foundation
import Granary
import GranaryStack
import Testing

@Suite struct NestedStrategyTests {
    @Test func aBackgroundSaveReachesTheViewAtOnceAndTheDiskThroughTheRoot() async throws {
        let directory = scratchDirectory()
        let container = PersistentContainer(name: "Nested", model: stackModel, strategy: .nested, options: options(directory))
        let contexts = try #require(container.contexts as? NestedContexts)  // the strategy is not part of the type
        #expect(container.viewContext.parent === contexts.rootContext)
        #expect(container.newBackgroundContext().parent === contexts.rootContext)
        try container.start()

        // Hold the root's background write when it starts.
        let gate = SaveGate(contexts.rootContext)
        let background = container.newBackgroundContext()
        let id: ManagedObjectID = try await background.perform {
            let note = Note(context: background)
            note.title = "a"
            try background.save()
            return note.objectID
        }
        // Saved into the root; a permanent ID already; not yet in the store.
        #expect(!id.isTemporaryID)
        #expect(try storedTitles(container.persistentStoreCoordinator) == [])
        gate.release()
        // The view context's fetches go through the root, so they include what the root holds.
        #expect(try await fetchedTitles(in: container.viewContext) == ["a"])
        try await container.flush()
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["a"])

        // Loaded objects are refreshed once the root has written the change.
        let holder = try await load([id], into: container.viewContext)
        try await background.perform {
            try #require(try background.existingObject(with: id) as? Note).title = "b"
            try background.save()   // the same context edits what it inserted: its ID is permanent
        }
        try await container.flush()
        #expect(try await loadedTitle(id, in: container.viewContext) == "b")
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["b"])
        _ = holder

        try container.detach(persistentStores: container.persistentStores)
        #expect(try titlesOnDisk(at: defaultStoreURL("Nested", in: directory)) == ["b"])
    }

    @Test func viewSavesReachTheStoreInTheBackgroundAndCanBeEditedAgain() async throws {
        let container = try PersistentContainer(name: "Nested", model: stackModel, strategy: .nested,
                                                options: options(scratchDirectory())).start()
        let view = container.viewContext
        let holder = Holder()
        try await view.perform {
            let note = Note(context: view)
            note.title = "first"
            holder.objects = [note]
            try view.save()
        }
        try await container.flush()
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["first"])
        try await view.perform {
            (holder.objects[0] as! Note).title = "second"
            try view.save()
        }
        try await container.flush()
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["second"])
    }

    @Test func aFailingRootSaveIsReportedAndFlushThrowsIt() async throws {
        let log = ErrorLog()
        let container = PersistentContainer(name: "Nested", model: stackModel, strategy: .nested,
                                            options: options(scratchDirectory(), errors: log))
        // Not started: the root's write cannot find a store.
        try await saveNotes(["a"], in: container)
        await #expect(throws: StackError.self) { try await container.flush() }
        #expect(log.all.count == 1)
        #expect(log.all.first?.description.contains("Nested.root") == true)
        #expect(log.all.first?.description.contains("has not been started") == true)
        // The changes wait in the root; once started, flush writes them.
        try container.start()
        try await container.flush()
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["a"])
    }
}
