import Foundation
import Granary
import PropertyBased
import Testing
@testable import GranarySync

/// Integration end to end on a real store (§10): after every merge the app's store holds exactly the
/// ledger's projection, compared by global ID through the ID map; the event store records what was
/// integrated and the merge event.
@Suite struct MergeIntegratorTests {
    let lem = ObjectKey("Author", "lem"), solaris = ObjectKey("Book", "s"), fiasco = ObjectKey("Book", "f")
    let sf = ObjectKey("Tag", "sf"), top = ObjectKey("Shelf", "top"), ann = ObjectKey("Person", "ann")
    let passport = ObjectKey("Passport", "q")

    @Test func theStoreIsTheLedgersProjectionAfterEachMerge() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0]), b = LedgerTestDevice(store: orderedStores[1])

        let a1 = a.record([
            .insert(lem, ["name": .string("Lem")]),
            .insert(solaris, ["title": .string("Solaris"), "year": .integer(1961)], toOnes: ["author": lem], adds: ["tags": [.member(sf)]]),
            .insert(sf, ["name": .string("sf")]),
            .insert(top, ["label": .string("top")], adds: ["books": [.member(solaris, at: 0)]]),
            .insert(ann, ["name": .string("Ann")]),
            .insert(passport, ["number": .string("42")], toOnes: ["holder": ann]),
        ])
        let first = try stack.merge([a1])
        #expect(first.integrated == [a1.id])
        #expect(first.changes.inserted.count == 6)
        try expectStoreMatchesLedger(stack, "after A1")
        #expect(try stack.storeGraph().objects[solaris]?.attributes["title"] == .some(.string("Solaris")))

        b.learn(a1)
        let b1 = b.record([
            .update(solaris, ["title": .string("Solaris!")]),
            .insert(fiasco, ["title": .string("Fiasco"), "year": .integer(1986)], toOnes: ["author": lem]),
            .update(top, adds: ["books": [.member(fiasco, at: 0), .member(solaris, at: 1)]]),
            .update(lem, ["name": .string("Stanisław Lem")]),
        ])
        // A, not knowing B1: the tag goes, the passport loses its holder.
        let a2 = a.record([.update(solaris, removes: ["tags": [sf]]), .delete(sf), .update(passport, toOnes: ["holder": nil])])
        let second = try stack.merge([b1])
        #expect(second.changes.inserted.count == 1 && second.changes.deleted.isEmpty)
        try expectStoreMatchesLedger(stack, "after B1")
        let third = try stack.merge([a2])
        #expect(third.changes.deleted.count == 1)
        try expectStoreMatchesLedger(stack, "after A2")

        let graph = try stack.storeGraph()
        #expect(graph.objects[top]?.toManys["books"] == [fiasco, solaris], "ordered members in their order keys' order (M19)")
        #expect(graph.objects[lem]?.toManys["books"] == [fiasco, solaris])
        #expect(graph.objects[ann]?.toOnes["passport"] == .some(nil))
        #expect(graph.objects[sf] == nil)
        // Every event integrated, each merge that integrated changes recorded a merge event.
        #expect(try stack.eventStore.events(withStatus: .downloaded).isEmpty)
        #expect(try stack.eventStore.events(withStatus: .integrated).map(\.id) == [a1.id, a2.id, b1.id], "in position order")
        #expect(try stack.eventStore.events(withStatus: .localUnexported).map(\.id.revision) == [1, 2, 3])
        let state = try stack.eventStore.state()
        #expect(state.integrated[orderedStores[0]] == 2 && state.integrated[orderedStores[1]] == 1 && state.pendingMergeID == nil)
    }

    @Test func aMergeOfNothingButEmptyEventsRecordsNoEvent() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0])
        let outcome = try stack.merge([a.record([])])
        #expect(outcome.integrated.count == 1 && outcome.mergeEvent == nil && outcome.changes.isEmpty)
        #expect(try stack.eventStore.events(withStatus: .localUnexported).isEmpty)
        #expect(try stack.eventStore.state().integrated[orderedStores[0]] == 1)
    }

    /// M6: an event given again after it was integrated changes nothing and commits nothing.
    @Test func m6AnEventIntegratedTwiceChangesNothing() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0])
        let a1 = a.record([.insert(lem, ["name": .string("Lem")])])
        try stack.merge([a1])
        let state = try stack.eventStore.state(), graph = try stack.storeGraph()
        let again = try stack.integrator().integrate([a1])
        #expect(again.integrated.isEmpty && again.mergeEvent == nil && again.changes.isEmpty)
        #expect(try stack.eventStore.state() == state)
        #expect(try stack.storeGraph() == graph)
    }

    @Test func anEventWhosePastIsMissingWaits() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0])
        let a1 = a.record([.insert(lem, ["name": .string("Lem")])])
        let a2 = a.record([.update(lem, ["name": .string("Lem!")])])
        let outcome = try stack.merge([a2])
        #expect(outcome.integrated.isEmpty && outcome.waiting == [a2.id])
        #expect(try stack.eventStore.status(of: a2.id) == .downloaded)
        let next = try stack.merge([a1])
        #expect(next.integrated == [a1.id, a2.id])
        #expect(try stack.storeGraph().objects[lem]?.attributes["name"] == .some(.string("Lem!")))
    }

    /// Random histories of the ledger's property test, merged into a store in random causal chunks: after
    /// each merge the store is the ledger's projection, and at the end it is the reference model's graph.
    @Test func theStoreFollowsTheLedgerThroughRandomMerges() async throws {
        let model = try libraryModel()
        #expect(LedgerSchema(model: model) == libraryLedgerSchema)
        await propertyCheck(count: 30, input: Gen.int(in: 0...Int.max)) { seed in
            do {
                try Self.check(seed: seed, model: model)
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    static func check(seed: Int, model: ManagedObjectModel) throws {
        var simulation = LedgerConvergencePropertyTests.Simulation(seed: seed)
        simulation.run(steps: 30)
        var g = SplitMix(seed: seed ^ 0x3E6)
        let order = LedgerConvergencePropertyTests.randomCausalOrder(simulation.events, &g)
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: model, in: scratch)
        defer { stack.close() }
        var start = 0
        while start < order.count {
            let end = min(order.count, start + Int.random(in: 1...max(1, order.count / 2), using: &g))
            try stack.merge(Array(order[start..<end]))
            try expectStoreMatchesLedger(stack, "seed \(seed), after event \(end) of \(order.count)")
            start = end
        }
        let reference = ReferenceMergeModel(schema: libraryLedgerSchema).projection(of: simulation.events)
        #expect(normalized(try stack.storeGraph()) == normalized(reference), "seed \(seed): the store is not the reference graph")
    }
}
