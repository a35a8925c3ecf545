import Foundation
import PropertyBased
import Testing
@testable import GranarySync

/// M32 on random histories with a cloud: devices edit (the generators of
/// `LedgerConvergencePropertyTests`), publish every event, and catch up from the cloud; at random moments
/// one of them rebases (a baseline of its ledger, then the removal of the events every present device has
/// and of the baselines it dominates), sometimes two in a row without seeing each other's baseline, and one
/// device stays away across several rebases. At every moment each removed event is covered by a baseline
/// still in the cloud, and in the end every device holds the ledger, and the reference's graph, of the
/// whole history without rebases.
@Suite struct BaselineConvergencePropertyTests {
    struct Cloud {
        var removed: Set<EventID> = []
        var baselines: [Baseline] = []
    }

    static func check(seed: Int, steps: Int) {
        var simulation = LedgerConvergencePropertyTests.Simulation(seed: seed)
        var g = SplitMix(seed: seed ^ 0xC10D)
        var cloud = Cloud()
        let count = simulation.devices.count
        // One device is away for a stretch in the middle: it holds nothing back meanwhile (inactive).
        let away = Int.random(in: 0..<count, using: &g)
        let awayFrom = steps / 4, awayUntil = steps * 3 / 4
        var rebases = 0

        func catchUp(_ device: Int, _ g: inout SplitMix) {
            for baseline in cloud.baselines.shuffled(using: &g)
            where !baseline.vector.isCovered(by: simulation.views[device].delivery.integrated) {
                simulation.views[device].join(baseline)
                simulation.devices[device].learn(baseline)
            }
            // Chosen before any arrives: learning an event marks its past known, which must still come.
            let arriving = simulation.events.filter { !cloud.removed.contains($0.id) && !simulation.devices[device].knows($0.meta) }
            for event in arriving.shuffled(using: &g) {
                simulation.devices[device].learn(event)
                simulation.views[device].receive(event)
            }
        }

        func rebase(_ device: Int, now step: Int, _ g: inout SplitMix) {
            let view = simulation.views[device]
            let vector = view.delivery.integrated
            let covered = simulation.events.filter { vector[$0.id.store] >= $0.id.revision }
            let countOfBaseline = max(covered.map(\.meta.globalCount).max() ?? 0,
                                      cloud.baselines.filter { $0.vector.isCovered(by: vector) }.map(\.globalCount).max() ?? 0)
            let baseline = Baseline(id: UUID(uuid: g.storeID().uuid.uuid), writer: simulation.devices[device].store,
                                    globalCount: countOfBaseline, vector: vector, ledger: view.ledger)
            var cutoff = vector
            for other in 0..<count where other != device && !(other == away && (awayFrom..<awayUntil).contains(step)) {
                cutoff = cutoff.met(with: simulation.views[other].delivery.integrated)
            }
            cloud.baselines = cloud.baselines.filter { !$0.vector.isCovered(by: vector) } + [baseline]
            for event in simulation.events where cutoff[event.id.store] >= event.id.revision { cloud.removed.insert(event.id) }
            rebases += 1
        }

        for step in 0..<steps {
            var device = Int.random(in: 0..<count, using: &g)
            if device == away && (awayFrom..<awayUntil).contains(step) { device = (device + 1) % count }
            switch Int.random(in: 0..<20, using: &g) {
            case 0..<5: catchUp(device, &g)
            case 5..<7: simulation.fuseCollisions(on: device)
            case 7..<9:
                rebase(device, now: step, &g)
                // Sometimes a second device rebases before it has seen the first one's baseline.
                if Bool.random(using: &g) { rebase((device + 1) % count, now: step, &g) }
            default: simulation.edit(on: device)
            }
            for id in cloud.removed {
                #expect(cloud.baselines.contains { $0.vector[id.store] >= id.revision },
                        "seed \(seed), step \(step): \(id) was removed and no baseline in the cloud covers it")
            }
        }
        for _ in 0..<2 { for device in 0..<count { catchUp(device, &g) } }

        let events = simulation.events
        let expected = integrated(events).ledger
        let reference = ReferenceMergeModel(schema: libraryLedgerSchema).projection(of: events)
        for device in 0..<count {
            #expect(simulation.views[device].delivery.waiting.isEmpty, "seed \(seed): device \(device) has events waiting")
            #expect(simulation.views[device].ledger == expected, "seed \(seed): device \(device)'s ledger differs after \(rebases) rebases")
            #expect(simulation.view(device) == reference, "seed \(seed): device \(device)'s graph differs from the reference's")
        }
    }

    @Test func devicesThatRebaseAndCatchUpFromBaselinesConverge_M32() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int.max)) { seed in
            Self.check(seed: seed, steps: 60)
        }
    }

    @Test func longHistoriesWithManyRebasesConvergeToo_M32() async {
        await propertyCheck(count: 15, input: Gen.int(in: 0...Int.max)) { seed in
            Self.check(seed: seed, steps: 160)
        }
    }
}
