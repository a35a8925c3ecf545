import Foundation
import Granary
import Testing
@testable import GranarySync

/// The seed of a leech (§8.3 steps 3–5, M28): local objects judged against the cloud's ledger.
@Suite struct SeedTests {
    typealias Fixture = CaptureFixture

    static func book(_ gid: String) -> ObjectKey { ObjectKey("Book", gid) }
    static func tag(_ gid: String) -> ObjectKey { ObjectKey("Tag", gid) }

    static func builder(_ device: CaptureDevice) -> SeedBuilder {
        SeedBuilder(coordinator: device.sync, store: device.syncStore, eventStore: device.eventStore, schema: device.schema,
                    identifiers: device.identifiers)
    }

    /// The cloud of M28's example, made by a real device A: Book c1 "Food" tagged t1, and c3 inserted then
    /// deleted; returned as the ledger of its events, with the events.
    static func cloud() throws -> (Ledger, [Event]) {
        let a = try CaptureDevice(storeID: orderedStores[1])
        try a.save { context in
            let c1 = try a.insert("Book", [Fixture.gid: "c1", "title": "Food"], in: context)
            try c1.setValue(Set([try a.insert("Tag", [Fixture.gid: "t1", "name": "milk"], in: context)]), forKey: "tags")
            try a.insert("Book", [Fixture.gid: "c3", "title": "Old"], in: context)
        }
        let first = try #require(try a.recorder.capture())
        try a.save { $0.delete(try a.object("Book", "c3", in: $0)) }
        let second = try #require(try a.recorder.capture())
        var integrator = LedgerIntegrator()
        integrator.receive(first)
        integrator.receive(second)
        return (integrator.ledger, [first, second])
    }

    /// B's local data: c1 "Groceries" tagged t2, c2, and c3.
    static func leecher() throws -> CaptureDevice {
        let b = try CaptureDevice(storeID: orderedStores[2])
        try b.save { context in
            let c1 = try b.insert("Book", [Fixture.gid: "c1", "title": "Groceries"], in: context)
            try c1.setValue(Set([try b.insert("Tag", [Fixture.gid: "t2", "name": "eggs"], in: context)]), forKey: "tags")
            try b.insert("Book", [Fixture.gid: "c2", "title": "Tools"], in: context)
            try b.insert("Book", [Fixture.gid: "c3", "title": "Old, locally"], in: context)
        }
        return b
    }

    @Test func m28TheCloudWinsAndLocalOnlyObjectsAndMembersAreSeeded() throws {
        let (overlay, cloudEvents) = try Self.cloud()
        let b = try Self.leecher()
        let tokenBefore = try b.recorder.history.currentToken()
        let seed = try Self.builder(b).build(overlay: overlay, policy: .mergeAllData)
        #expect(seed.historyToken == tokenBefore)
        #expect(seed.changes.map(\.key) == [Self.book("c1"), Self.book("c2"), Self.tag("t2")])
        #expect(seed.changes[0] == ObjectChange(key: Self.book("c1"), kind: .update, memberAdds: ["tags": [.init(member: Self.tag("t2"))]]),
                "known and live: only the members the cloud lacks; its title stays the cloud's")
        #expect(seed.changes[1].kind == .insert)
        #expect(seed.changes[1].attributes["title"] == .some(.string("Tools")))
        #expect(seed.changes[2].kind == .insert)
        #expect(Set(seed.localKeys.keys) == [Self.book("c1"), Self.book("c2"), Self.book("c3"), Self.tag("t2")],
                "every local object is mapped, c3 too (known only as deleted)")

        // The seed as an event after the cloud's: the graph of M28's example.
        var integrator = LedgerIntegrator()
        for event in cloudEvents { integrator.receive(event) }
        let seedEvent = Event(meta: EventMeta(id: EventID(store: orderedStores[2], revision: 1),
                                              globalCount: integrator.nextGlobalCount, vector: integrator.delivery.integrated),
                              changes: seed.changes)
        #expect(integrator.receive(seedEvent) == [seedEvent.id])
        let projection = Projection(of: integrator.ledger, schema: b.schema)
        #expect(projection.objects[Self.book("c1")]?.attributes["title"] == .some(.string("Food")))
        #expect(projection.objects[Self.book("c1")]?.toManys["tags"] == [Self.tag("t1"), Self.tag("t2")])
        #expect(projection.objects[Self.book("c2")] != nil)
        #expect(projection.objects[Self.book("c3")] == nil, "the cloud's delete wins")
    }

    @Test func intoAnEmptyCloudEveryObjectIsSeeded() throws {
        let b = try Self.leecher()
        let seed = try Self.builder(b).build(overlay: Ledger(), policy: .mergeAllData)
        #expect(seed.changes.map(\.key) == [Self.book("c1"), Self.book("c2"), Self.book("c3"), Self.tag("t2")])
        #expect(seed.changes.allSatisfy { $0.kind == .insert })
        #expect(seed.changes.first?.memberAdds == ["tags": [.init(member: Self.tag("t2"))]])
        #expect(seed.localKeys.count == 4)
    }

    @Test func twoLocalObjectsWithOneGlobalIDAreSeededAsTwoKeys() throws {
        let b = try Self.leecher()
        try b.save { try b.insert("Book", [Fixture.gid: "c2", "title": "Tools, again"], in: $0) }
        let seed = try Self.builder(b).build(overlay: Ledger(), policy: .mergeAllData)
        #expect(seed.changes.count == 5)
        #expect(seed.changes.filter { $0.key == Self.book("c2") }.count == 1)
        #expect(seed.localKeys.count == 5, "every row mapped, each under its own key")
        let books = seed.localKeys.filter { $0.key.entity == "Book" }
        #expect(Set(books.values).count == books.count)
    }

    @Test func theFirstCaptureAfterTheSeedSendsWhatWasSavedAfterItsToken() throws {
        let b = try Self.leecher()
        let seed = try Self.builder(b).build(overlay: Ledger(), policy: .mergeAllData)
        // A save after T0, as one made while the leech read the store would be.
        try b.save { try b.object("Book", "c1", in: $0).setValue("Changed", forKey: "title") }
        // The seed recorded as the leech's finalize does: event, ledger, map and T0 in one commit.
        let event = Event(meta: try b.eventStore.nextLocalMeta(), changes: seed.changes)
        var ledger = Ledger()
        LedgerIntegrator.apply(event, to: &ledger)
        try b.eventStore.recordLocalEvent(event, with: EventStoreStep(ledgerObjects: Array(ledger.objects.values), localKeys: seed.localKeys,
                                                                      historyToken: try HistoryReader.encode(seed.historyToken)))
        let next = try #require(try b.recorder.capture())
        #expect(next.changes == [ObjectChange(key: Self.book("c1"), kind: .update, attributes: ["title": .string("Changed")])])
        #expect(try b.ledgerProjection() == b.storeGraph())
    }

    @Test func excludeLocalDataSeedsNothingAndMapsUnknownObjectsUnderKeysTheCloudLacks() throws {
        let (overlay, _) = try Self.cloud()
        let b = try Self.leecher()
        let seed = try Self.builder(b).build(overlay: overlay, policy: .excludeLocalData)
        #expect(seed.changes.isEmpty)
        #expect(seed.localKeys.count == 4, "every local object is mapped, so the merge can delete the unknown ones")
        #expect(seed.localKeys[Self.book("c1")] != nil)
        #expect(seed.localKeys[Self.book("c3")] != nil)
        #expect(seed.localKeys[Self.book("c2")] == nil && seed.localKeys[Self.tag("t2")] == nil)
        let projection = Projection(of: overlay, schema: b.schema)
        for key in seed.localKeys.keys where key != Self.book("c1") {
            #expect(projection.objects[key] == nil, "\(key) projects as not existing: the merge deletes its row")
        }
    }

    @Test func anOrderedToManyOfAKnownObjectGetsTheLocalMembersAfterTheCloudsOnes() throws {
        let a = try CaptureDevice(storeID: orderedStores[1])
        try a.save { context in
            let shelf = try a.insert("Shelf", [Fixture.gid: "s1"], in: context)
            try shelf.setValue([try a.insert("Book", [Fixture.gid: "b1"], in: context)], forKey: "books")
        }
        var integrator = LedgerIntegrator()
        integrator.receive(try #require(try a.recorder.capture()))
        let b = try CaptureDevice(storeID: orderedStores[2])
        try b.save { context in
            let shelf = try b.insert("Shelf", [Fixture.gid: "s1"], in: context)
            try shelf.setValue([try b.insert("Book", [Fixture.gid: "b2"], in: context), try b.insert("Book", [Fixture.gid: "b1"], in: context)],
                               forKey: "books")
        }
        let seed = try Self.builder(b).build(overlay: integrator.ledger, policy: .mergeAllData)
        #expect(seed.changes.first { $0.key == ObjectKey("Shelf", "s1") }?.memberAdds
                == ["books": [.init(member: Self.book("b2"), orderKey: 1)]])
    }
}
