import Foundation
import PropertyBased
import Testing
@testable import GranarySync

/// Which downloaded events integrate now and why the others wait (§10.1, M5).
@Suite struct ReadinessCheckTests {
    static let a = orderedStores[0], b = orderedStores[1], c = orderedStores[2]

    static func event(_ store: StoreID, _ revision: Int64, count: Int64, vector: RevisionVector = RevisionVector(),
                      model: String? = nil) -> Event {
        Event(meta: EventMeta(id: EventID(store: store, revision: revision), globalCount: count, vector: vector),
              changes: [], modelHash: model)
    }

    @Test func M5_readyEventsComeInPositionOrderAndWaitingOnesSayForWhat() {
        let a1 = Self.event(Self.a, 1, count: 1)
        let b1 = Self.event(Self.b, 1, count: 2, vector: RevisionVector([Self.a: 1]))
        let a2 = Self.event(Self.a, 2, count: 3, vector: RevisionVector([Self.b: 1]))
        // c2 without c1; b3 without b2.
        let c2 = Self.event(Self.c, 2, count: 4)
        let b3 = Self.event(Self.b, 3, count: 6, vector: RevisionVector([Self.a: 2]))
        // Needs c1 through its vector.
        let a3 = Self.event(Self.a, 3, count: 7, vector: RevisionVector([Self.b: 1, Self.c: 1]))
        let result = ReadinessCheck.evaluate([a3, b3, c2, a2, b1, a1], integrated: RevisionVector(), knownModelHashes: [])
        #expect(result.ready.map(\.id) == [a1.id, b1.id, a2.id])
        #expect(result.waiting == [
            .init(id: c2.id, reason: .missingDependency(EventID(store: Self.c, revision: 1))),
            .init(id: b3.id, reason: .missingDependency(EventID(store: Self.b, revision: 2))),
            .init(id: a3.id, reason: .missingDependency(EventID(store: Self.c, revision: 1))),
        ])
        #expect(result.alreadyIntegrated.isEmpty)
    }

    /// M15: an event waits for its data files, and the events after it from its store wait for it.
    @Test func anEventWhoseDataFileIsNotHeldWaitsAndSoDoesWhatFollowsIt() {
        let file = CloudFileName.data(sha256: String(repeating: "ab", count: 32), store: Self.a)
        var a1 = Self.event(Self.a, 1, count: 1)
        a1.changes = [ObjectChange(key: ObjectKey("Document", "d"), kind: .insert, attributes: ["blob": .dataFile(file)])]
        let a2 = Self.event(Self.a, 2, count: 2)
        let b1 = Self.event(Self.b, 1, count: 3)
        let waiting = ReadinessCheck.evaluate([a1, a2, b1], integrated: RevisionVector(), knownModelHashes: [], heldDataFiles: [])
        #expect(waiting.ready.map(\.id) == [b1.id])
        #expect(waiting.waiting == [.init(id: a1.id, reason: .missingDataFile(file)),
                                    .init(id: a2.id, reason: .missingDependency(a1.id))])
        let arrived = ReadinessCheck.evaluate([a1, a2, b1], integrated: RevisionVector(), knownModelHashes: [], heldDataFiles: [file])
        #expect(arrived.ready.map(\.id) == [a1.id, a2.id, b1.id])
        #expect(arrived.waiting.isEmpty)
    }

    @Test func anEventOfAnUnknownModelWaitsAndSoDoesWhatDependsOnIt() {
        let a1 = Self.event(Self.a, 1, count: 1, model: "v2")
        let a2 = Self.event(Self.a, 2, count: 2, model: "v1")
        let b1 = Self.event(Self.b, 1, count: 3, model: "v1")
        let result = ReadinessCheck.evaluate([a1, a2, b1], integrated: RevisionVector(), knownModelHashes: ["v1"])
        #expect(result.ready.map(\.id) == [b1.id])
        #expect(result.waiting == [.init(id: a1.id, reason: .unknownModel(hash: "v2")),
                                   .init(id: a2.id, reason: .missingDependency(a1.id))])
        // Known once the app updates.
        let updated = ReadinessCheck.evaluate([a1, a2, b1], integrated: RevisionVector(), knownModelHashes: ["v1", "v2"])
        #expect(updated.ready.map(\.id) == [a1.id, a2.id, b1.id])
    }

    @Test func M6_downloadedCopiesOfIntegratedEventsAreSetAside() {
        let a1 = Self.event(Self.a, 1, count: 1), a2 = Self.event(Self.a, 2, count: 2)
        let result = ReadinessCheck.evaluate([a2, a1], integrated: RevisionVector([Self.a: 1]), knownModelHashes: [])
        #expect(result.alreadyIntegrated == [a1.id])
        #expect(result.ready.map(\.id) == [a2.id])
    }

    /// The reference is `CausalDelivery`, fed the same downloaded subset in any order: the ready set is
    /// exactly what it delivers, in position order, and everything else waits.
    @Test func M5_theReadySetIsWhatCausalDeliveryDelivers() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            var devices = (0..<3).map { i in LedgerTestDevice(store: orderedStores[i]) }
            var events: [Event] = []
            for _ in 0..<Int.random(in: 1...25, using: &g) {
                let d = Int.random(in: 0..<3, using: &g)
                // Learning an event learns its past too (its vector).
                if Bool.random(using: &g), let known = events.randomElement(using: &g) { devices[d].learn(known) }
                events.append(devices[d].record([]))
            }
            let integratedCount = Int.random(in: 0...events.count, using: &g)
            // A causally complete integrated set: what delivery makes of a prefix, replayed into a fresh
            // reference so that nothing of the prefix is left waiting in it.
            var prefixDelivery = CausalDelivery()
            var integratedEvents: [Event] = []
            for event in events.prefix(integratedCount) { integratedEvents += prefixDelivery.accept(event) }
            let integrated = prefixDelivery.integrated
            var reference = CausalDelivery()
            for event in integratedEvents { _ = reference.accept(event) }
            let downloaded = events.filter { !(integrated[$0.id.store] >= $0.id.revision) && Bool.random(using: &g) }.shuffled(using: &g)
            var delivered: [Event] = []
            for event in downloaded { delivered += reference.accept(event) }

            let result = ReadinessCheck.evaluate(downloaded, integrated: integrated, knownModelHashes: [])
            #expect(Set(result.ready.map(\.id)) == Set(delivered.map(\.id)), "seed \(seed)")
            #expect(result.ready.map(\.meta.position) == result.ready.map(\.meta.position).sorted(), "seed \(seed)")
            #expect(Set(result.waiting.map(\.id)) == Set(downloaded.map(\.id)).subtracting(delivered.map(\.id)), "seed \(seed)")
            // Integrating the ready ones in their order never violates M5.
            var check = CausalDelivery()
            for event in integratedEvents { _ = check.accept(event) }
            for event in result.ready { #expect(check.isReady(event.meta), "seed \(seed): \(event.id)"); _ = check.accept(event) }
        }
    }
}
