import Foundation
import Granary
import GranaryStack
import Testing

@Suite struct IndependentStrategyTests {
    @Test func theViewContextGoesStaleUntilRefreshedWhileTheStoreIsUpToDate() async throws {
        let directory = scratchDirectory()
        let container = try PersistentContainer(name: "Independent", model: stackModel, strategy: .independent,
                                                options: options(directory)).start()
        let view = container.viewContext
        #expect(!view.automaticallyMergesChangesFromParent)
        let ids = try await saveNotes(["a"], in: container)
        let holder = try await load(ids, into: view)

        try await rename(ids[0], to: "b", in: container)
        try await container.flush()
        // On disk and in the store at once; the loaded object in the view context is stale.
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["b"])
        #expect(try await loadedTitle(ids[0], in: view) == "a")
        // Refreshing brings it up to date.
        try await view.perform { view.refreshAllObjects() }
        #expect(try await loadedTitle(ids[0], in: view) == "b")

        // New objects show up in the next fetch, which also reloads what it returns.
        try await rename(ids[0], to: "c", in: container)
        try await saveNotes(["d"], in: container)
        #expect(try await loadedTitle(ids[0], in: view) == "b")
        #expect(try await fetchedTitles(in: view) == ["c", "d"])
        #expect(try await loadedTitle(ids[0], in: view) == "c")

        // A deleted object stays loaded (stale) until refreshed.
        try await container.performBackgroundTask { context in
            context.delete(try context.existingObject(with: ids[0]))
            try context.save()
        }
        #expect(try await loadedTitle(ids[0], in: view) == "c")
        _ = holder

        try container.detach(persistentStores: container.persistentStores)
        #expect(try titlesOnDisk(at: defaultStoreURL("Independent", in: directory)) == ["d"])
    }

    @Test func aStaleViewEditLosesToTheStoreByDefault() async throws {
        let container = try PersistentContainer(name: "Independent", model: stackModel, strategy: .independent,
                                                options: options(scratchDirectory())).start()
        let view = container.viewContext
        let ids = try await saveNotes(["a"], in: container)
        let holder = try await load(ids, into: view)
        try await rename(ids[0], to: "from background", in: container)
        let title = try await view.perform {
            let note = holder.objects[0] as! Note
            note.title = "from view"
            note.rank = 7
            try view.save()  // store-trump: the title changed in the store since it was read
            return "\(note.title) \(note.rank)"
        }
        #expect(title == "from background 7")
    }
}
