import Foundation
import PropertyBased
import Testing
@testable import GranarySync

/// M3, M5, M6, M7 on random histories: devices make inserts, edits, deletes, member adds and removes,
/// global-ID collisions and fuses while exchanging events; the ledger, fed the whole event set in random
/// orders, always projects the same graph, and it is the reference model's.
@Suite struct LedgerConvergencePropertyTests {
    static let pools: [String: [String]] = [
        "Author": ["a1", "a2", "a3", "a4"], "Book": ["b1", "b2", "b3", "b4"], "Tag": ["t1", "t2", "t3"],
        "Shelf": ["s1", "s2"], "Person": ["p1", "p2", "p3"], "Passport": ["q1", "q2", "q3"],
    ]
    static let entities = pools.keys.sorted()

    struct Simulation {
        var g: SplitMix
        var devices: [LedgerTestDevice]
        var views: [LedgerIntegrator]
        var events: [Event] = []

        init(seed: Int) {
            var g = SplitMix(seed: seed)
            let count = Int.random(in: 2...3, using: &g)
            devices = (0..<count).map { _ in LedgerTestDevice(store: g.storeID()) }
            self.g = g
            views = Array(repeating: LedgerIntegrator(), count: count)
        }

        func view(_ device: Int) -> Projection { Projection(of: views[device].ledger, schema: libraryLedgerSchema) }

        mutating func run(steps: Int) {
            for _ in 0..<steps {
                let device = Int.random(in: 0..<devices.count, using: &g)
                switch Int.random(in: 0..<20, using: &g) {
                case 0..<5: exchange(into: device)
                case 5..<7: fuseCollisions(on: device)
                default: edit(on: device)
                }
            }
        }

        /// Delivers to `device` what another knows, or part of it, in a random order (its ledger must hold
        /// back what arrives early).
        mutating func exchange(into device: Int) {
            let source = Int.random(in: 0..<devices.count, using: &g)
            var wanted = devices[source].known
            if Bool.random(using: &g) {
                let store = devices[source].store
                wanted = RevisionVector()
                let revision = Int64.random(in: 0...devices[source].known[store], using: &g)
                if let cut = events.first(where: { $0.meta.id == EventID(store: store, revision: revision) }) {
                    wanted = cut.meta.vector
                    wanted[store] = revision
                }
            }
            let arriving = events.filter { wanted[$0.meta.id.store] >= $0.meta.id.revision && !devices[device].knows($0.meta) }
            for event in arriving.shuffled(using: &g) {
                devices[device].learn(event)
                views[device].receive(event)
            }
        }

        mutating func record(_ changes: [ObjectChange], on device: Int) {
            guard !changes.isEmpty else { return }
            let event = devices[device].record(changes)
            views[device].receive(event)
            events.append(event)
        }

        /// Fuses Authors of equal name in the device's view, as the uniqueness resolver will (M22, M23).
        mutating func fuseCollisions(on device: Int) {
            let authors = view(device).objects.filter { $0.key.entity == "Author" }
            var byName: [String: [ObjectKey]] = [:]
            for (key, object) in authors {
                if case let .string(name)?? = object.attributes["name"] { byName[name, default: []].append(key) }
            }
            var changes: [ObjectChange] = []
            for name in byName.keys.sorted() {
                let keys = byName[name]!.sorted()
                for loser in keys.dropFirst() { changes.append(.fuse(loser, into: keys[0])) }
            }
            record(changes, on: device)
        }

        mutating func randomKey(_ entity: String) -> ObjectKey {
            ObjectKey(entity, LedgerConvergencePropertyTests.pools[entity]!.randomElement(using: &g)!)
        }

        mutating func value(for attribute: String) -> SyncValue? {
            switch attribute {
            case "name": return Bool.random(using: &g) ? .string("Lem") : .string("Le Guin")
            case "year": return Int.random(in: 0..<4, using: &g) == 0 ? nil : .integer(Int64.random(in: 1950...1953, using: &g))
            default: return .string(["x", "y", "z", "w"].randomElement(using: &g)!)
            }
        }

        mutating func existing(_ entity: String, in view: Projection) -> ObjectKey? {
            view.objects.keys.filter { $0.entity == entity }.sorted().randomElement(using: &g)
        }

        mutating func relationshipValues(_ entity: String, of owner: ObjectKey, in view: Projection, all: Bool) -> ObjectChange {
            let shape = libraryLedgerSchema.entities[entity]!
            var change = ObjectChange(key: ObjectKey(entity, ""), kind: .update)
            for name in shape.attributes.sorted() where all || Bool.random(using: &g) { change.attributes[name] = value(for: name) }
            for (name, relationship) in shape.toOnes.sorted(by: { $0.key < $1.key }) where all || Bool.random(using: &g) {
                change.toOnes[name] = Bool.random(using: &g) ? existing(relationship.destination, in: view) : nil
            }
            for (name, relationship) in shape.toManys.sorted(by: { $0.key < $1.key }) {
                for _ in 0..<Int.random(in: 0...2, using: &g) {
                    // Removes mostly of present members, as a capture records them; sometimes of others.
                    let present = view.objects[owner]?.toManys[name] ?? []
                    let member = !all && !present.isEmpty && Bool.random(using: &g)
                        ? present.randomElement(using: &g) : existing(relationship.destination, in: view)
                    guard let member else { continue }
                    let orderKey = relationship.isOrdered ? Double(Int.random(in: 0...3, using: &g)) : nil
                    if !all && Bool.random(using: &g) {
                        change.memberRemoves[name, default: []].append(member)
                    } else if !(change.memberAdds[name] ?? []).contains(where: { $0.member == member }) {
                        change.memberAdds[name, default: []].append(.member(member, at: orderKey))
                    }
                }
            }
            return change
        }

        mutating func edit(on device: Int) {
            let view = view(device)
            var changes: [ObjectChange] = []
            var touched: Set<ObjectKey> = []
            for _ in 0..<Int.random(in: 1...3, using: &g) {
                let entity = LedgerConvergencePropertyTests.entities.randomElement(using: &g)!
                let key = randomKey(entity)
                guard !touched.contains(key) else { continue }
                touched.insert(key)
                let exists = view.objects[key] != nil
                let roll = Int.random(in: 0..<10, using: &g)
                var change: ObjectChange
                if !exists {
                    // Sometimes an update or delete of a key this device does not hold (M12).
                    if roll == 0 {
                        change = ObjectChange(key: key, kind: Bool.random(using: &g) ? .delete : .update)
                        change.attributes = change.kind == .update ? ["\(libraryLedgerSchema.entities[entity]!.attributes[0])": .string("ghost")] : [:]
                    } else {
                        change = relationshipValues(entity, of: key, in: view, all: true)
                        change.kind = .insert
                    }
                } else if roll < 2 {
                    change = .delete(key)
                } else if roll < 3 {
                    change = relationshipValues(entity, of: key, in: view, all: true)
                    change.kind = .replacingInsert
                } else {
                    change = relationshipValues(entity, of: key, in: view, all: false)
                    change.kind = .update
                }
                change.key = key
                changes.append(change)
            }
            record(changes, on: device)
        }
    }

    static func check(seed: Int, steps: Int) {
        var simulation = Simulation(seed: seed)
        simulation.run(steps: steps)
        let events = simulation.events
        let reference = ReferenceMergeModel(schema: libraryLedgerSchema).projection(of: events)

        // M3: causality respects position, and positions are unique.
        #expect(Set(events.map(\.meta.position)).count == events.count, "seed \(seed): two events share a position")
        for x in events { for e in events where x.meta.happensBefore(e.meta) {
            #expect(x.meta.position < e.meta.position, "seed \(seed): \(x.meta) → \(e.meta) but not earlier")
        } }

        // M5, M7: any arrival order gives the reference's graph, with nothing left waiting. Random causal
        // orders integrate in the order they arrive; shuffled ones make the ledger hold events back.
        var g = SplitMix(seed: seed ^ 0x5EED)
        let firstLedger = integrated(events).ledger
        for order in 0..<5 {
            let arrival = order == 0 ? events : order < 3 ? randomCausalOrder(events, &g) : events.shuffled(using: &g)
            let (projection, waiting) = ledgerProjection(arrival)
            // The Overview's third property: the same events make an equal ledger, not only an equal graph.
            #expect(integrated(arrival).ledger == firstLedger, "seed \(seed), order \(order): the ledgers differ")
            #expect(waiting == 0, "seed \(seed), order \(order): \(waiting) events still waiting")
            #expect(projection == reference, "seed \(seed), order \(order): ledger\n\(projection)\nreference\n\(reference)")
            if projection != reference { break }
        }
        // M6: every event received twice changes nothing.
        let (twice, _) = ledgerProjection(events + events.reversed())
        #expect(twice == reference, "seed \(seed): receiving every event twice changed the graph")
        // The devices' own ledgers, built incrementally while they edited, converge once they know everything.
        for device in simulation.devices.indices {
            for event in events { simulation.views[device].receive(event) }
            #expect(simulation.view(device) == reference, "seed \(seed): device \(device) diverges after the final exchange")
            #expect(simulation.views[device].ledger == integrated(events).ledger, "seed \(seed): device \(device)'s ledger differs")
        }
    }

    /// A random order in which every event comes after everything that happens before it.
    static func randomCausalOrder(_ events: [Event], _ g: inout SplitMix) -> [Event] {
        var remaining = events, order: [Event] = []
        while !remaining.isEmpty {
            let ready = remaining.indices.filter { index in
                !remaining.contains { $0.meta.happensBefore(remaining[index].meta) }
            }
            order.append(remaining.remove(at: ready.randomElement(using: &g)!))
        }
        return order
    }

    @Test func everyArrivalOrderGivesTheReferenceGraph() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            Self.check(seed: seed, steps: 40)
        }
    }

    @Test func longHistoriesConvergeToo() async {
        await propertyCheck(count: 40, input: Gen.int(in: 0...Int.max)) { seed in
            Self.check(seed: seed, steps: 100)
        }
    }
}
