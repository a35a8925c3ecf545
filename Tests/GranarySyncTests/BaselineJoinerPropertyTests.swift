import Foundation
import PropertyBased
import Testing
@testable import GranarySync

/// M32 on random histories (the generators of `LedgerConvergencePropertyTests`): a baseline of one
/// causally complete set of events joined with the ledger of another gives exactly the ledger, and the
/// reference model's graph, of integrating their union; two and three concurrent baselines join in any
/// order to the same; joining what a device already has changes nothing.
@Suite struct BaselineJoinerPropertyTests {
    /// A causally complete subset: a prefix of a random causal order, with the vector naming it.
    static func causalPrefix(_ events: [Event], _ g: inout SplitMix) -> (events: [Event], vector: RevisionVector) {
        let order = LedgerConvergencePropertyTests.randomCausalOrder(events, &g)
        let prefix = Array(order.prefix(Int.random(in: 0...order.count, using: &g)))
        var vector = RevisionVector()
        for event in prefix { vector[event.id.store] = max(vector[event.id.store], event.id.revision) }
        return (prefix, vector)
    }

    static func baseline(of events: [Event], _ vector: RevisionVector, writer: StoreID) -> Baseline {
        let integrator = integrated(events)
        return Baseline(writer: writer, globalCount: events.map(\.meta.globalCount).max() ?? 0, vector: vector,
                        ledger: integrator.ledger)
    }

    static func union(_ a: [Event], _ b: [Event]) -> [Event] {
        var seen = Set(a.map(\.id))
        return a + b.filter { seen.insert($0.id).inserted }
    }

    static func check(seed: Int, steps: Int) {
        var simulation = LedgerConvergencePropertyTests.Simulation(seed: seed)
        simulation.run(steps: steps)
        let events = simulation.events
        let model = ReferenceMergeModel(schema: libraryLedgerSchema)
        var g = SplitMix(seed: seed ^ 0xBA5E)
        let writer = g.storeID()

        let (e1, v1) = causalPrefix(events, &g)
        let (e2, v2) = causalPrefix(events, &g)
        let (e3, v3) = causalPrefix(events, &g)
        let b1 = baseline(of: e1, v1, writer: writer), b2 = baseline(of: e2, v2, writer: writer)
        let b3 = baseline(of: e3, v3, writer: writer)

        // A baseline of E1 joined into the ledger of E2 is the ledger of E1 ∪ E2, and its graph the reference's.
        let both = union(e1, e2)
        var ledger = b2.ledger
        let vector = BaselineJoiner.join(b1, into: &ledger, integrated: v2)
        #expect(ledger == integrated(both).ledger, "seed \(seed): baseline of E1 joined with E2 is not the ledger of E1 ∪ E2")
        #expect(vector == v1.joined(with: v2), "seed \(seed): the joined vector is not the maximum")
        #expect(Projection(of: ledger, schema: libraryLedgerSchema) == model.projection(of: both),
                "seed \(seed): the joined graph differs from the reference's for E1 ∪ E2")

        // Two concurrent baselines, either order; then a third, in any grouping.
        let joined12 = BaselineJoiner.join(b1, b2), joined21 = BaselineJoiner.join(b2, b1)
        #expect(joined12 == joined21, "seed \(seed): joining two baselines depends on their order")
        #expect(joined12.globalCount == max(b1.globalCount, b2.globalCount), "seed \(seed): the count is not the maximum")
        let all3 = union(both, e3)
        let left = BaselineJoiner.join(joined12, b3), right = BaselineJoiner.join(b1, BaselineJoiner.join(b2, b3))
        #expect(left.ledger == integrated(all3).ledger, "seed \(seed): three baselines do not join to the ledger of their union")
        #expect(left.ledger == right.ledger && left.vector == right.vector, "seed \(seed): joining three baselines depends on grouping")

        // Idempotent: a device holding part of the baseline's events, or all of them, or the baseline itself.
        let (sub, subVector) = causalPrefix(e1, &g)
        var device = integrated(sub).ledger
        _ = BaselineJoiner.join(b1, into: &device, integrated: subVector)
        #expect(device == b1.ledger, "seed \(seed): a device holding some covered events does not end with the baseline's ledger")
        _ = BaselineJoiner.join(b1, into: &device, integrated: v1)
        #expect(device == b1.ledger, "seed \(seed): joining a baseline twice changed the ledger")

        // A device's own ledger (built while it edited, with events waiting) joined with a baseline, then
        // everything else integrated on top, converges with the full history.
        let deviceIndex = Int.random(in: 0..<simulation.views.count, using: &g)
        var deviceLedger = simulation.views[deviceIndex].ledger
        var deviceVector = simulation.views[deviceIndex].delivery.integrated
        deviceVector = BaselineJoiner.join(b1, into: &deviceLedger, integrated: deviceVector)
        for event in LedgerConvergencePropertyTests.randomCausalOrder(events, &g)
        where deviceVector[event.id.store] < event.id.revision {
            LedgerIntegrator.apply(event, to: &deviceLedger)
            deviceVector[event.id.store] = event.id.revision
        }
        #expect(deviceLedger == integrated(events).ledger, "seed \(seed): baseline then the remaining events differs from all events")

        // The file form carries the ledger exactly, in several parts when they are small.
        do {
            let parts = try BaselineFileTests.roundTrip(b1, maximumPayload: 6000)
            #expect(parts.baseline == b1, "seed \(seed): the baseline does not survive its files")
        } catch {
            Issue.record("seed \(seed): the baseline could not be written and read back: \(error)")
        }
    }

    @Test func joiningBaselinesIsIntegratingTheirEvents_M32() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int.max)) { seed in
            Self.check(seed: seed, steps: 40)
        }
    }

    @Test func longHistoriesJoinToo_M32() async {
        await propertyCheck(count: 20, input: Gen.int(in: 0...Int.max)) { seed in
            Self.check(seed: seed, steps: 100)
        }
    }
}
