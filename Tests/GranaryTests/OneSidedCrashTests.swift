import Foundation
import Testing
@testable import Granary

/// A process linking and deleting through relationships without an inverse, killed with SIGKILL at
/// random moments: after reopening, every reference survives or goes with its save, none points at a
/// deleted tag, and each tag's hidden inverse lists exactly the notes that point at it.
@Suite(.serialized) struct OneSidedCrashTests {
    @Test(arguments: [1, 2, 3]) func killedWhileLinkingAndDeletingTheStoreReopensConsistent(_ seed: Int) throws {
        let url = scratchURL("onesidedcrash\(seed)")
        defer { try? FileManager.default.removeItem(at: url) }
        var saves = 0
        for round in 0..<2 {
            let outcome = try ChildProcess.run(
                "granary-crashtest", ["onesided", url.path, String(seed * 10 + round)], killAfter: 0.4 + Double(seed) * 0.3)
            #expect(outcome.reason == .uncaughtSignal, "the child stopped by itself: \(outcome.out)")
            saves += outcome.out.split(separator: "\n").filter { $0.hasPrefix("saved") }.count
            try check(url)
        }
        #expect(saves > 0, "the child never saved")
    }

    private func check(_ url: URL) throws {
        let engine = try Engine.open(.directory(url), options: .init(readOnly: true, createIfMissing: false))
        let metadata = engine.metadata
        #expect(engine.verify().isSound)
        try engine.close()
        let model = try #require(try StoredModel.from(metadata)).makeModel()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .durable, at: url)
        defer { try? coordinator.remove(store) }
        #expect(try TwoContextPropertyTests.danglingReferences(in: store).isEmpty)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let notes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
            let tags = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))
            var referrers: [String: [ManagedObjectID: Set<ManagedObjectID>]] = ["tag": [:], "tags": [:]]
            for note in notes {
                if let tag = try note.value(forKey: "tag") as? ManagedObject {
                    #expect(!tag.isDeleted && tags.contains(tag))
                    referrers["tag"]![tag.objectID, default: []].insert(note.objectID)
                }
                for tag in try note.value(forKey: "tags") as? Set<ManagedObject> ?? [] {
                    #expect(tags.contains(tag))
                    referrers["tags"]![tag.objectID, default: []].insert(note.objectID)
                }
            }
            for tag in tags {
                for key in ["tag", "tags"] {
                    let hidden = tag.values[tag.layout.indexByName["_inverse.Note.\(key)"]!] as? [ManagedObjectID] ?? []
                    #expect(Set(hidden) == referrers[key]![tag.objectID] ?? [], "the hidden inverse of \(key) disagrees")
                }
            }
        }
    }
}
