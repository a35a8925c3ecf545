import Foundation
import Granary
import GranaryStack
import Testing

@Suite struct MixedStrategyTests {
    @Test func aBackgroundSaveIsOnDiskAtOnceAndMergedThroughTheRootIntoTheView() async throws {
        let directory = scratchDirectory()
        let container = try PersistentContainer(name: "Mixed", model: stackModel, strategy: .mixed, options: options(directory)).start()
        let contexts = try #require(container.contexts as? MixedContexts)  // the strategy is not part of the type
        #expect(container.viewContext.parent === contexts.rootContext)
        #expect(container.newBackgroundContext().parent == nil)
        let view = container.viewContext
        let ids = try await saveNotes(["a"], in: container)
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["a"])
        let holder = try await load(ids, into: view)

        try await rename(ids[0], to: "b", in: container)
        try await saveNotes(["c"], in: container)
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["b", "c"])
        try await container.flush()
        #expect(try await loadedTitle(ids[0], in: view) == "b")
        #expect(try await fetchedTitles(in: view) == ["b", "c"])
        _ = holder

        try container.detach(persistentStores: container.persistentStores)
        #expect(try titlesOnDisk(at: defaultStoreURL("Mixed", in: directory)) == ["b", "c"])
    }

    @Test func viewSavesGoThroughTheRootInTheBackground() async throws {
        let container = try PersistentContainer(name: "Mixed", model: stackModel, strategy: .mixed,
                                                options: options(scratchDirectory())).start()
        let view = container.viewContext
        let root = try #require(container.contexts as? MixedContexts).rootContext
        let gate = SaveGate(root)
        let holder = Holder()
        try await view.perform {
            let note = Note(context: view)
            note.title = "first"
            holder.objects = [note]
            try view.save()  // returns without waiting for the root's write, which is held
        }
        #expect(try storedTitles(container.persistentStoreCoordinator) == [])
        gate.release()
        try await container.flush()
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["first"])
        // Edited again after the root wrote it: the ID obtained before the first save still holds.
        try await view.perform {
            (holder.objects[0] as! Note).title = "second"
            try view.save()
        }
        try await container.flush()
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["second"])
        // A background edit of the same object merges back into the view context.
        let id = try await view.perform { holder.objects[0].objectID }
        try await rename(id, to: "third", in: container)
        try await container.flush()
        #expect(try await loadedTitle(id, in: view) == "third")
    }
}
