import Foundation
import PropertyBased
import Testing
@testable import GranarySync

/// Random sequences of local events, imports, exports, merge steps, ledger saves and ID mappings against
/// a plain in-memory reference, with the store closed and reopened at random points: after every step
/// the store reads exactly what the reference holds.
@Suite struct EventStorePropertyTests {
    /// What the store should hold.
    struct Reference {
        var state: EventStoreState
        var events: [EventID: (event: Event, status: EventStatus)] = [:]
        var ledger = Ledger()
        var localKeys: [ObjectKey: Int64] = [:]

        func events(_ status: EventStatus) -> [Event] {
            events.values.filter { $0.status == status }.map(\.event).sorted { $0.meta.position < $1.meta.position }
        }
    }

    static func check(seed: Int, steps: Int) throws {
        // Not the simulation's seed, so this store's ID is none of its devices'.
        var g = SplitMix(seed: seed ^ 0x0E5E_7570)
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let directory = scratch.appendingPathComponent("events.granary")
        let own = g.storeID()
        var store = try EventStore.open(at: directory, creatingWith: own)
        var reference = Reference(state: EventStoreState(storeID: own))

        // Other devices' events, with fuses, deletes and member changes: a rich ledger to round-trip.
        var simulation = LedgerConvergencePropertyTests.Simulation(seed: seed)
        simulation.run(steps: 30)
        var remote = simulation.events
        var integrator = LedgerIntegrator()
        var nextLocalKey: Int64 = 1
        var ownKeys = 0

        /// Marks integrated in one step what the integrator just took in, with the whole ledger.
        func commitIntegrated(_ ids: [EventID], token: Data?) throws {
            let objects = Array(integrator.ledger.objects.values)
            try store.commit(EventStoreStep(integrated: ids, ledgerObjects: objects, historyToken: token))
            for id in ids {
                reference.events[id]?.status = .integrated
                reference.state.integrated[id.store] = max(reference.state.integrated[id.store], id.revision)
            }
            for object in objects { reference.ledger.update(object.key) { $0 = object } }
            if let token { reference.state.historyToken = token }
        }

        for step in 0..<steps {
            switch Int.random(in: 0..<16, using: &g) {
            case 0..<3:
                // A local event, integrated with its ledger change and a history token in one commit.
                ownKeys += 1
                let meta = try store.nextLocalMeta()
                #expect(meta.id.revision == reference.state.nextRevision, "seed \(seed) step \(step)")
                #expect(meta.globalCount == reference.state.maxGlobalCount + 1, "seed \(seed) step \(step): M2")
                let event = Event(meta: meta, timestamp: Date(timeIntervalSinceReferenceDate: Double(step)),
                                  changes: [.insert(ObjectKey("Author", "own\(ownKeys)"), ["name": .string("n\(step)")])])
                let ready = integrator.receive(event)
                let token = Data("token \(step)".utf8)
                let others = ready.filter { $0 != event.id }
                try store.recordLocalEvent(event, with: EventStoreStep(integrated: others,
                                                                       ledgerObjects: Array(integrator.ledger.objects.values),
                                                                       historyToken: token))
                reference.events[event.id] = (event, .localUnexported)
                reference.state.nextRevision += 1
                reference.state.maxGlobalCount = meta.globalCount
                reference.state.integrated[own] = meta.id.revision
                for id in others {
                    reference.events[id]?.status = .integrated
                    reference.state.integrated[id.store] = max(reference.state.integrated[id.store], id.revision)
                }
                for object in integrator.ledger.objects.values { reference.ledger.update(object.key) { $0 = object } }
                reference.state.historyToken = token
            case 3..<6:
                // A download: a new remote event, or one already stored again (M6).
                if remote.isEmpty || (!reference.events.isEmpty && Int.random(in: 0..<4, using: &g) == 0) {
                    guard let known = reference.events.values.randomElement(using: &g)?.event else { continue }
                    #expect(try store.importEvent(known) == false, "seed \(seed) step \(step): re-import")
                } else {
                    let event = remote.remove(at: Int.random(in: 0..<remote.count, using: &g))
                    #expect(try store.importEvent(event), "seed \(seed) step \(step): import")
                    reference.events[event.id] = (event, .downloaded)
                    reference.state.maxGlobalCount = max(reference.state.maxGlobalCount, event.meta.globalCount)
                }
            case 6..<9:
                // A merge step: one downloaded event handed to the ledger; what becomes ready is integrated.
                guard let event = reference.events(.downloaded).randomElement(using: &g) else { continue }
                let ready = integrator.receive(event)
                try commitIntegrated(ready, token: Bool.random(using: &g) ? Data("merge \(step)".utf8) : nil)
            case 9..<11:
                let unexported = reference.events(.localUnexported)
                guard !unexported.isEmpty else { continue }
                let chosen = Array(unexported.shuffled(using: &g).prefix(Int.random(in: 1...unexported.count, using: &g)))
                try store.markExported(chosen.map(\.id))
                for event in chosen { reference.events[event.id]?.status = .exported }
            case 11:
                // A whole-ledger save, sometimes of an empty ledger (which keeps the ID map).
                let ledger = Bool.random(using: &g) ? integrator.ledger : Ledger()
                try store.saveLedger(ledger)
                reference.ledger = ledger
            case 12:
                let entity = ["Author", "Book", "Tag"].randomElement(using: &g)!
                let key = ObjectKey(entity, "m\(Int.random(in: 0..<6, using: &g))")
                let leech: LeechStateChoice = .random(using: &g)
                try store.commit(EventStoreStep(localKeys: [key: nextLocalKey], leechState: leech.state))
                reference.localKeys[key] = nextLocalKey
                if let state = leech.state { reference.state.leechState = state }
                nextLocalKey += 1
            default:
                try store.close()
                store = try EventStore.open(at: directory)
            }
            try compare(store, reference, "seed \(seed) step \(step)")
        }
        try store.close()
        store = try EventStore.open(at: directory)
        try compare(store, reference, "seed \(seed) after the last reopen")
        try store.close()
    }

    enum LeechStateChoice: CaseIterable {
        case unchanged, seeding, leeched, registered
        var state: LeechState? {
            switch self {
            case .unchanged: nil
            case .seeding: .seeding
            case .leeched: .leeched
            case .registered: .registered
            }
        }
        static func random(using g: inout SplitMix) -> Self { allCases.randomElement(using: &g)! }
    }

    static func compare(_ store: EventStore, _ reference: Reference, _ context: String) throws {
        #expect(try store.state() == reference.state, "\(context): state")
        for status in EventStatus.allCases {
            #expect(try store.events(withStatus: status) == reference.events(status), "\(context): \(status) events")
        }
        for (id, entry) in reference.events { #expect(try store.status(of: id) == entry.status, "\(context): \(id)") }
        // Each store's newest event: cached after the first call and kept by the commits that follow.
        let newest = Dictionary(grouping: reference.events.values.map(\.event), by: \.id.store)
            .mapValues { $0.max { $0.id.revision < $1.id.revision }!.meta }
        #expect(try store.newestEventPerStore().mapValues(\.meta) == newest, "\(context): newest events")
        #expect(try store.loadLedger() == reference.ledger, "\(context): ledger")
        for (key, localKey) in reference.localKeys {
            #expect(try store.localKey(for: key) == localKey, "\(context): \(key)")
            #expect(try store.objectKey(entity: key.entity, localKey: localKey) == key, "\(context): local key \(localKey)")
        }
    }

    @Test func theStoreReadsWhatTheReferenceHoldsAcrossReopens() async {
        await propertyCheck(count: 25, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self, "seed \(seed)") { try Self.check(seed: seed, steps: 60) }
        }
    }
}
