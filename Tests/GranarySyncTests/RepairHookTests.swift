import Foundation
import Granary
import Testing
@testable import GranarySync

/// The article's example 7: `Book.author` is required and `Author.books` cascades. A deletes Lem and
/// Solaris (its cascade) while B adds Fiasco to Lem; merging A's delete leaves Fiasco without its
/// required author. Repairs become changes of the merge event (M24); a merge that stays invalid saves
/// nothing and its events wait (M25).
@Suite struct RepairHookTests {
    let lem = ObjectKey("Author", "lem"), solaris = ObjectKey("Book", "s"), fiasco = ObjectKey("Book", "f")
    let unknown = ObjectKey("Author", "author-unknown")

    struct Scenario {
        let a1: Event, b1: Event, a2: Event
    }

    func scenario() -> Scenario {
        var a = LedgerTestDevice(store: orderedStores[0]), b = LedgerTestDevice(store: orderedStores[1])
        let a1 = a.record([.insert(lem, ["name": .string("Lem")]),
                           .insert(solaris, ["title": .string("Solaris")], toOnes: ["author": lem])])
        b.learn(a1)
        let b1 = b.record([.insert(fiasco, ["title": .string("Fiasco")], toOnes: ["author": lem])])
        let a2 = a.record([.delete(lem), .delete(solaris)])
        return Scenario(a1: a1, b1: b1, a2: a2)
    }

    func stack(in directory: URL, storeID: StoreID = orderedStores[3]) throws -> MergeTestStack {
        try MergeTestStack(model: try libraryModel(authorBooksRule: .cascade, bookAuthorRequired: true), in: directory, storeID: storeID)
    }

    /// Gives every book without an author the author "Unknown", in `reparation`; returns how many.
    static func repair(_ merging: ManagedObjectContext, _ reparation: ManagedObjectContext) -> Int {
        let books = merging.performAndWait { merging.updatedObjects.filter { $0.entity.name == "Book" }.map(\.objectID) }
        return reparation.performAndWait {
            var repaired = 0
            for id in books {
                let book = reparation.object(with: id)
                guard (try? book.value(forKey: "author")) as? ManagedObject == nil else { continue }
                let author = ManagedObject(entity: reparation.model!.entity(named: "Author")!, insertInto: reparation)
                try? author.setValue("Unknown", forKey: "name")
                try? book.setValue(author, forKey: "author")
                repaired += 1
            }
            return repaired
        }
    }

    static func repairingIntegrator(_ stack: MergeTestStack) -> MergeIntegrator {
        var integrator = stack.integrator()
        integrator.newGlobalID = { object in
            (try? object.value(forKey: "name")) as? String == "Unknown" ? "author-unknown" : UUID().uuidString
        }
        return integrator
    }

    @Test func m24RepairsInTheShouldSaveHookAreSavedAndSentToPeers() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let events = scenario()
        let c = try stack(in: scratch.appendingPathComponent("c"), storeID: orderedStores[2])
        defer { c.close() }
        try c.merge([events.a1, events.b1])
        var integrator = Self.repairingIntegrator(c)
        var repaired = 0
        integrator.hooks.shouldSave = { merging, reparation in
            repaired = Self.repair(merging, reparation)
            return true
        }
        let outcome = try c.merge([events.a2], with: integrator)
        #expect(repaired == 1)
        let event = try #require(outcome.mergeEvent)
        #expect(event.changes.map(\.key) == [unknown, fiasco])
        #expect(event.changes.first?.kind == .insert && event.changes.first?.attributes["name"] == .some(.string("Unknown")))
        #expect(event.changes.last?.kind == .update && event.changes.last?.toOnes == ["author": unknown])
        let graph = try c.storeGraph()
        #expect(graph.objects[fiasco]?.toOnes["author"] == .some(unknown))
        #expect(graph.objects[lem] == nil && graph.objects[solaris] == nil)
        try expectStoreMatchesLedger(c)
        #expect(try c.eventStore.localKey(for: unknown) != nil, "the repair's new object is mapped")

        // A peer integrating A's and B's events with C's merge events shows the same repaired graph.
        let d = try stack(in: scratch.appendingPathComponent("d"))
        defer { d.close() }
        let fromC = try c.eventStore.events(withStatus: .localUnexported)
        #expect(fromC.last == event)
        try d.merge([events.a1, events.b1, events.a2] + fromC)
        #expect(normalized(try d.storeGraph()) == normalized(graph))
    }

    @Test func m25AMergeThatStaysInvalidSavesNothingAndItsEventsWait() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let events = scenario()
        let c = try stack(in: scratch)
        defer { c.close() }
        try c.merge([events.a1, events.b1])
        let graphBefore = try c.storeGraph(), ledgerBefore = try c.eventStore.loadLedger(), stateBefore = try c.eventStore.state()
        var failedWith: SyncError?
        var integrator = c.integrator()
        integrator.hooks.didFailToSave = { _, error, _ in
            failedWith = error
            return false
        }
        #expect {
            try c.merge([events.a2], with: integrator)
        } throws: { error in
            guard case let SyncError.mergeValidationFailed(problems) = error else { return false }
            return problems.contains { $0.propertyName == "author" && $0.reason == .missing }
        }
        #expect(failedWith != nil, "the did-fail hook was not called")
        #expect(try c.storeGraph() == graphBefore)
        #expect(try c.eventStore.loadLedger() == ledgerBefore)
        #expect(try c.eventStore.state() == stateBefore)
        #expect(try c.eventStore.status(of: events.a2.id) == .downloaded)

        // A later merge whose hook repairs integrates the waiting event.
        var repairing = Self.repairingIntegrator(c)
        repairing.hooks.didFailToSave = { merging, _, reparation in Self.repair(merging, reparation) > 0 }
        let outcome = try repairing.integrate(try c.eventStore.events(withStatus: .downloaded))
        #expect(outcome.integrated == [events.a2.id])
        #expect(outcome.mergeEvent?.changes.map(\.key) == [unknown, fiasco])
        try expectStoreMatchesLedger(c)
    }

    @Test func m25ADidFailHookThatRepairsNothingFailsTheMerge() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let events = scenario()
        let c = try stack(in: scratch)
        defer { c.close() }
        try c.merge([events.a1, events.b1])
        var calls = 0
        var integrator = c.integrator()
        integrator.hooks.didFailToSave = { _, _, _ in
            calls += 1
            return true
        }
        #expect(throws: SyncError.self) { try c.merge([events.a2], with: integrator) }
        #expect(calls == 1, "the did-fail hook retries once")
        #expect(try c.eventStore.status(of: events.a2.id) == .downloaded)
    }

    @Test func m24AShouldSaveHookSayingNoCancelsTheMerge() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let events = scenario()
        let c = try stack(in: scratch)
        defer { c.close() }
        var integrator = c.integrator()
        integrator.hooks.shouldSave = { _, _ in false }
        #expect {
            try c.merge([events.a1], with: integrator)
        } throws: { error in
            if case SyncError.mergeCancelled = error { return true }
            return false
        }
        #expect(try c.storeGraph().objects.isEmpty)
        #expect(try c.eventStore.status(of: events.a1.id) == .downloaded)
        #expect(try c.eventStore.loadLedger() == Ledger())
    }
}
