import Foundation
import Granary
import Testing
@testable import GranarySync

/// A leech's first merge (§8.3 steps 4–6): the seed closure sees the ledger with the cloud's events
/// applied, its changes become the seed event, and its mapped rows are kept, updated or deleted by the
/// same projection as everything else, in one save.
@Suite struct MergeSeedTests {
    let lem = ObjectKey("Author", "lem"), solaris = ObjectKey("Book", "s"), mine = ObjectKey("Tag", "mine")

    /// The app's store before leeching: Lem (known to the cloud) and a tag of its own; their rows.
    func localData(in stack: MergeTestStack) throws -> (lem: Int64, tag: Int64) {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: stack.appCoordinator)
        return try context.performAndWait {
            let author = ManagedObject(entity: stack.model.entity(named: "Author")!, insertInto: context)
            try author.setValue("Lem (local)", forKey: "name")
            let tag = ManagedObject(entity: stack.model.entity(named: "Tag")!, insertInto: context)
            try tag.setValue("mine", forKey: "name")
            try context.save()
            return (try #require(author.objectID.primaryKey), try #require(tag.objectID.primaryKey))
        }
    }

    func cloudEvents() -> [Event] {
        var a = LedgerTestDevice(store: orderedStores[0])
        return [a.record([.insert(lem, ["name": .string("Stanisław Lem")]),
                          .insert(solaris, ["title": .string("Solaris")], toOnes: ["author": lem])])]
    }

    @Test func theSeedsRowsAreKeptAndTakeTheCloudsValues() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        let rows = try localData(in: stack)
        for event in cloudEvents() { try stack.eventStore.importEvent(event) }
        var sawCloud = false
        let token = try #require(stack.appCoordinator.currentPersistentHistoryToken(fromStores: [stack.appStore]))
        let outcome = try stack.integrator().integrate(try stack.eventStore.events(withStatus: .downloaded), seed: { overlay throws(SyncError) in
            sawCloud = overlay.object(self.lem) != nil
            return MergeIntegrator.Seed(changes: [.insert(self.mine, ["name": .string("mine")])],
                                        localKeys: [self.lem: rows.lem, self.mine: rows.tag], historyToken: try HistoryReader.encode(token))
        }, leechState: .leeched)
        #expect(sawCloud, "the seed closure did not see the cloud's events")
        let seed = try #require(outcome.seedEvent)
        #expect(seed.id.revision == 1 && seed.meta.vector[orderedStores[0]] == 1)
        #expect(try stack.eventStore.events(withStatus: .localUnexported).first == seed)
        let state = try stack.eventStore.state()
        let encoded = try HistoryReader.encode(token)
        #expect(state.leechState == .leeched && state.historyToken == encoded)
        // The app's rows stay: Lem's under the cloud's values, the tag as it was.
        #expect(try stack.eventStore.localKey(for: lem) == rows.lem)
        #expect(try stack.eventStore.localKey(for: mine) == rows.tag)
        let graph = try stack.storeGraph()
        #expect(graph.objects[lem]?.attributes["name"] == .some(.string("Stanisław Lem")))
        #expect(graph.objects[lem]?.toManys["books"] == [solaris])
        #expect(graph.objects[mine] != nil)
        try expectStoreMatchesLedger(stack)
    }

    /// `.excludeLocalData`: local rows the cloud does not know are mapped under keys no event inserts, so
    /// the projection deletes them.
    @Test func aRowMappedToAKeyNoEventInsertedIsDeleted() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        let rows = try localData(in: stack)
        for event in cloudEvents() { try stack.eventStore.importEvent(event) }
        let stray = ObjectKey("Tag", "random-1")
        let outcome = try stack.integrator().integrate(try stack.eventStore.events(withStatus: .downloaded), seed: { _ throws(SyncError) in
            MergeIntegrator.Seed(localKeys: [self.lem: rows.lem, stray: rows.tag])
        }, leechState: .leeched)
        #expect(outcome.changes.deleted.count == 1)
        #expect(try stack.storeGraph().objects.keys.sorted() == [solaris, lem].sorted())
        #expect(try stack.eventStore.localKey(for: stray) == nil)
        try expectStoreMatchesLedger(stack)
    }
}
