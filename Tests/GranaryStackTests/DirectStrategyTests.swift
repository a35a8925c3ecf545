import Foundation
import Granary
import GranaryStack
import Testing

@Suite struct DirectStrategyTests {
    @Test func aBackgroundSaveIsOnDiskAtOnceAndMergedIntoTheViewContext() async throws {
        let directory = scratchDirectory()
        let container = try PersistentContainer(name: "Direct", model: stackModel, strategy: .direct, options: options(directory)).start()
        let view = container.viewContext
        let ids = try await saveNotes(["a"], in: container)
        let holder = try await load(ids, into: view)
        // In the store as soon as save() returned.
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["a"])

        try await rename(ids[0], to: "b", in: container)
        try await saveNotes(["c"], in: container)
        // The merge was queued on the view context's queue during the save: by its next turn it has run.
        #expect(try await loadedTitle(ids[0], in: view) == "b")
        #expect(try await fetchedTitles(in: view) == ["b", "c"])
        _ = holder

        try container.detach(persistentStores: container.persistentStores)
        #expect(try titlesOnDisk(at: defaultStoreURL("Direct", in: directory)) == ["b", "c"])
    }

    @Test func theMergeKeepsTheViewContextsUnsavedEditsOnTop() async throws {
        let container = try PersistentContainer(name: "Direct", model: stackModel, options: options(scratchDirectory())).start()
        let view = container.viewContext
        let ids = try await saveNotes(["a"], in: container, rank: 1)
        let holder = try await load(ids, into: view)
        try await view.perform { (holder.objects[0] as! Note).rank = 5 }
        try await rename(ids[0], to: "renamed", in: container)
        try await container.flush()
        let (title, rank, hasChanges) = try await view.perform {
            let note = holder.objects[0] as! Note
            return (note.title, note.rank, view.hasChanges)
        }
        #expect(title == "renamed" && rank == 5 && hasChanges)
        try await view.perform { try view.save() }
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["renamed"])
    }

    /// A view-context save that meets a background save it has not merged yet resolves the conflict
    /// with the view context's merge policy.
    @Test(arguments: [MergePolicy.mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .error])
    func viewContextConflictsFollowItsMergePolicy(policy: MergePolicy) async throws {
        let strategy = DirectStrategy(viewMergePolicy: policy)
        let container = try PersistentContainer(name: "Direct", model: stackModel, strategy: strategy, options: options(scratchDirectory())).start()
        let view = container.viewContext
        #expect(view.mergePolicy == policy)
        let ids = try await saveNotes(["a"], in: container, rank: 1)
        let background = container.newBackgroundContext()
        #expect(background.mergePolicy == .mergeByPropertyObjectTrump)
        let outcome: String = try await view.perform {
            let note = try #require(try view.existingObject(with: ids[0]) as? Note)
            note.title = "from view"
            note.rank = 2
            // The background save lands while this block runs: its merge waits behind it in the queue.
            try background.performAndWait {
                let theirs = try #require(try background.existingObject(with: ids[0]) as? Note)
                theirs.title = "from background"
                try background.save()
            }
            do {
                try view.save()
                return "\(note.title) \(note.rank)"
            } catch let ContextError.mergeConflicts(conflicts) {
                return "conflicts \(conflicts.count)"
            }
        }
        switch policy {
        case .mergeByPropertyStoreTrump: #expect(outcome == "from background 2")
        case .mergeByPropertyObjectTrump: #expect(outcome == "from view 2")
        default: #expect(outcome == "conflicts 1")
        }
    }

    @Test func aPrivateQueueViewContextWorksWithoutTheMainQueue() async throws {
        let container = try PersistentContainer(name: "Direct", model: stackModel,
                                                options: options(scratchDirectory(), queue: .privateQueue)).start()
        #expect(container.viewContext.concurrencyType == .privateQueue)
        let ids = try await saveNotes(["a"], in: container)
        let holder = try await load(ids, into: container.viewContext)
        try await rename(ids[0], to: "b", in: container)
        try await container.flush()
        // performAndWait from this (non-main) thread, no main queue involved.
        let title = container.viewContext.performAndWait { (holder.objects[0] as! Note).title }
        #expect(title == "b")
    }
}
