import Foundation
import Granary
import PropertyBased
import Testing
@testable import GranarySync

/// Objects colliding on a uniqueness constraint are fused into the earliest created, with the
/// relationships of both (M22), and devices finding the same collision record the same fuse (M23).
@Suite struct UniquenessFusionTests {
    let a7f = ObjectKey("Author", "a-7f"), bc2 = ObjectKey("Author", "b-c2")
    let solaris = ObjectKey("Book", "s"), fiasco = ObjectKey("Book", "f")

    /// The article's example 5: A1 and B1 each insert an Author "Lem" with one book.
    func collidingEvents() -> (Event, Event) {
        var a = LedgerTestDevice(store: orderedStores[0]), b = LedgerTestDevice(store: orderedStores[1])
        let a1 = a.record([.insert(a7f, ["name": .string("Lem")]),
                           .insert(solaris, ["title": .string("Solaris")], toOnes: ["author": a7f])])
        let b1 = b.record([.insert(bc2, ["name": .string("Lem")]),
                           .insert(fiasco, ["title": .string("Fiasco")], toOnes: ["author": bc2])])
        return (a1, b1)
    }

    @Test func m22CollidingObjectsAreFusedWithTheRelationshipsOfBoth() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(uniqueAuthorName: true), in: scratch)
        defer { stack.close() }
        let (a1, b1) = collidingEvents()
        let outcome = try stack.merge([a1, b1])
        // A1 and B1 share count 1; A's store ID sorts first, so a-7f is the earlier insert and survives.
        #expect(outcome.mergeEvent?.changes == [ObjectChange(key: bc2, kind: .fuse(survivor: a7f))])
        let graph = try stack.storeGraph()
        #expect(graph.objects.keys.filter { $0.entity == "Author" } == [a7f])
        #expect(graph.objects[a7f]?.toManys["books"] == [fiasco, solaris])
        #expect(graph.objects[fiasco]?.toOnes["author"] == .some(a7f))
        try expectStoreMatchesLedger(stack)
    }

    /// The store already holds B's Lem when A's arrives: the app's object stays (same row), now under the
    /// survivor's key, with both books; no second row is made and none is deleted.
    /// A merge in a model with uniqueness constraints reads only the keys its events name, unless the
    /// store holds another object with a touched object's values: then the whole ledger, and a fuse.
    @Test func m22ConstrainedModelsReadTheWholeLedgerOnlyForAPossibleCollision() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(uniqueAuthorName: true, oneToOne: false), in: scratch)
        defer { stack.close() }
        var b = LedgerTestDevice(store: orderedStores[1])
        try stack.merge([b.record([.insert(bc2, ["name": .string("Lem")])])])
        // An edit that keeps the name, and a new author of another name: nothing can collide.
        let edit = try stack.merge([b.record([.update(bc2, ["name": .string("Lem")]),
                                              .insert(ObjectKey("Author", "c-01"), ["name": .string("Dick")])])])
        #expect(edit.integrated.count == 1)
        #expect(!edit.readWholeLedger)
        // A's Lem, made before B's: the store's Lem is outside the slice, and is found.
        var a = LedgerTestDevice(store: orderedStores[0])
        let collision = try stack.merge([a.record([.insert(a7f, ["name": .string("Lem")])])])
        #expect(collision.readWholeLedger)
        #expect(collision.mergeEvent?.changes == [ObjectChange(key: bc2, kind: .fuse(survivor: a7f))])
        #expect(try stack.storeGraph().objects.keys.filter { $0.entity == "Author" }.sorted() == [ObjectKey("Author", "c-01"), a7f].sorted())
        try expectStoreMatchesLedger(stack)
    }

    @Test func m22TheStoresObjectIsKeptWhenItsKeyLosesTheFuse() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(uniqueAuthorName: true), in: scratch)
        defer { stack.close() }
        let (a1, b1) = collidingEvents()
        try stack.merge([b1])
        let row = try #require(try stack.eventStore.localKey(for: bc2))
        let outcome = try stack.merge([a1])
        #expect(outcome.changes.deleted.isEmpty)
        #expect(outcome.mergeEvent?.changes.map(\.key) == [bc2])
        #expect(try stack.eventStore.localKey(for: a7f) == row)
        #expect(try stack.eventStore.localKey(for: bc2) == nil)
        let graph = try stack.storeGraph()
        #expect(graph.objects.keys.filter { $0.entity == "Author" } == [a7f])
        #expect(graph.objects[a7f]?.toManys["books"] == [fiasco, solaris])
        try expectStoreMatchesLedger(stack)

        // A later update of the loser, from a device that never merged the fuse, applies to the survivor.
        let b2 = Event(meta: EventMeta(id: EventID(store: orderedStores[1], revision: 2), globalCount: 5, vector: RevisionVector()),
                       changes: [.update(bc2, ["name": .string("Stanisław Lem")])])
        #expect(try stack.merge([b2]).integrated == [b2.id])
        #expect(try stack.storeGraph().objects[a7f]?.attributes["name"] == .some(.string("Stanisław Lem")))
        try expectStoreMatchesLedger(stack)
    }

    /// Two devices merging the same colliding events record equal fuse changes, and each integrating the
    /// other's changes nothing more (M23).
    @Test func m23DevicesFusingTheSameCollisionRecordTheSameFuse() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let model = try libraryModel(uniqueAuthorName: true)
        let c = try MergeTestStack(model: model, in: scratch.appendingPathComponent("c"), storeID: orderedStores[2])
        defer { c.close() }
        let d = try MergeTestStack(model: model, in: scratch.appendingPathComponent("d"), storeID: orderedStores[3])
        defer { d.close() }
        let (a1, b1) = collidingEvents()
        let fromC = try #require(try c.merge([a1, b1]).mergeEvent)
        let fromD = try #require(try d.merge([b1, a1]).mergeEvent)
        #expect(fromC.changes == fromD.changes)
        let cAfter = try c.merge([fromD]), dAfter = try d.merge([fromC])
        #expect(cAfter.changes.isEmpty && dAfter.changes.isEmpty)
        #expect(cAfter.mergeEvent?.changes.isEmpty ?? true)
        #expect(normalized(try c.storeGraph()) == normalized(try d.storeGraph()))
        try expectStoreMatchesLedger(c)
    }

    /// Random histories (authors often share a name) merged in random causal chunks into a store whose
    /// author names are unique: every merge saves (no constraint conflict), the store is the ledger's
    /// projection after each, and no two authors of the store share a name.
    /// With and without a one-to-one in the model: merges of the first read the whole ledger, of the
    /// second only the keys their events name, asking the store for collisions outside them.
    @Test(arguments: [true, false]) func m22RandomCollisionsAreAlwaysResolved(oneToOne: Bool) async throws {
        let model = try libraryModel(uniqueAuthorName: true, oneToOne: oneToOne)
        await propertyCheck(count: 20, input: Gen.int(in: 0...Int.max)) { seed in
            do { try Self.checkCollisions(seed: seed, model: model) } catch { Issue.record("seed \(seed): \(error)") }
        }
    }

    static func checkCollisions(seed: Int, model: ManagedObjectModel) throws {
        var simulation = LedgerConvergencePropertyTests.Simulation(seed: seed)
        simulation.run(steps: 30)
        var g = SplitMix(seed: seed ^ 0x22)
        let order = LedgerConvergencePropertyTests.randomCausalOrder(simulation.events, &g)
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: model, in: scratch)
        defer { stack.close() }
        var start = 0
        while start < order.count {
            let end = min(order.count, start + Int.random(in: 1...max(1, order.count / 3), using: &g))
            try stack.merge(Array(order[start..<end]))
            try expectStoreMatchesLedger(stack, "seed \(seed), after event \(end)")
            let names = try stack.storeGraph().objects.filter { $0.key.entity == "Author" }.compactMap { $0.value.attributes["name"] ?? nil }
            #expect(Set(names).count == names.count, "seed \(seed): authors share a name: \(names)")
            start = end
        }
    }

    /// Found by the property test above: an author takes the name another one of the store gives up in
    /// the same merge. The store writes the rename first (Granary orders a save's writes so).
    @Test func anObjectMayTakeTheValueAnotherGivesUpInOneMerge() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(uniqueAuthorName: true), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0])
        try stack.merge([a.record([.insert(bc2, ["name": .string("Le Guin")])])])
        let outcome = try stack.merge([a.record([.update(bc2, ["name": .string("Lem")]), .insert(a7f, ["name": .string("Le Guin")])])])
        #expect(outcome.attempts == 1 && outcome.mergeEvent?.changes.isEmpty == true)
        let graph = try stack.storeGraph()
        #expect(graph.objects[bc2]?.attributes["name"] == .some(.string("Lem")) && graph.objects[a7f]?.attributes["name"] == .some(.string("Le Guin")))
    }

    /// Two authors swapping names in one merge: no collision in the projection, and the save writes the
    /// swap (Granary breaks the cycle of unique writes), so the merge does not end in `storeBusy`.
    @Test func twoObjectsSwappingValuesInOneMergeSave() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(uniqueAuthorName: true), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0])
        try stack.merge([a.record([.insert(a7f, ["name": .string("Lem")]), .insert(bc2, ["name": .string("Le Guin")])])])
        let outcome = try stack.merge([a.record([.update(a7f, ["name": .string("Le Guin")]), .update(bc2, ["name": .string("Lem")])])])
        #expect(outcome.attempts == 1)
        let graph = try stack.storeGraph()
        #expect(graph.objects[a7f]?.attributes["name"] == .some(.string("Le Guin")) && graph.objects[bc2]?.attributes["name"] == .some(.string("Lem")))
    }

    /// A sub-entity shares its parent's constraint (as Granary checks it): a Person and an Employee of
    /// one name collide and are fused, so the save does not fail on the store's constraint.
    @Test func subEntitiesCollideUnderTheirParentsConstraint() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Person") {
                Attribute("name", .string, optional: true)
                Unique("name")
            }
            Entity("Employee", parent: "Person") {
                Attribute("salary", .integer64, optional: true)
            }
        }
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: model, in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0]), b = LedgerTestDevice(store: orderedStores[1])
        let person = ObjectKey("Person", "p1"), employee = ObjectKey("Employee", "e1")
        let outcome = try stack.merge([a.record([.insert(person, ["name": .string("Ann")])]),
                                       b.record([.insert(employee, ["name": .string("Ann"), "salary": .integer(10)])])])
        #expect(outcome.mergeEvent?.changes == [ObjectChange(key: employee, kind: .fuse(survivor: person))])
        #expect(outcome.attempts == 1)
        try expectStoreMatchesLedger(stack)
    }

    /// Objects with a nil among the constrained values never collide.
    @Test func nilValuesAreExemptFromFusing() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(uniqueAuthorName: true), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0])
        let outcome = try stack.merge([a.record([.insert(a7f, ["name": nil]), .insert(bc2, ["name": nil])])])
        #expect(outcome.mergeEvent?.changes.isEmpty == true)
        #expect(try stack.storeGraph().objects.count == 2)
    }
    /// M22 with M15: two devices' data files of the same bytes have different names, yet the values
    /// collide; the objects are fused, and the store's constraint does not fail the save.
    @Test func largeValuesCollideByContentWhoeverWroteTheirFiles() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Blob") {
                Attribute("x", .binaryData, optional: true)
                Unique("x")
            }
        }
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: model, in: scratch)
        defer { stack.close() }
        let bytes = SplitMix(seed: 41).bytesOf(SyncConstants.inlineDataLimit + 1)
        let fromA = LargeValues.record(of: bytes, writer: orderedStores[0]), fromB = LargeValues.record(of: bytes, writer: orderedStores[1])
        #expect(fromA.name != fromB.name)
        try stack.eventStore.storeDataFiles([fromA, fromB])
        var a = LedgerTestDevice(store: orderedStores[0]), b = LedgerTestDevice(store: orderedStores[1])
        let first = ObjectKey("Blob", "1"), second = ObjectKey("Blob", "2")
        let outcome = try stack.merge([a.record([.insert(first, ["x": .dataFile(fromA.name)])]),
                                       b.record([.insert(second, ["x": .dataFile(fromB.name)])])])
        #expect(outcome.mergeEvent?.changes == [ObjectChange(key: second, kind: .fuse(survivor: first))])
        let graph = try stack.storeGraph()
        #expect(graph.objects.keys.sorted() == [first])
        #expect(graph.objects[first]?.attributes["x"] == .some(.data(bytes)))
    }
}
