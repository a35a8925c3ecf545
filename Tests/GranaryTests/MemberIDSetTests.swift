import Foundation
@testable import Granary
import PropertyBased
import Testing

/// The member sets of inverse maintenance against `Set`: random inserts, removals and membership tests
/// of IDs of a few entities and stores, with many collisions in a small pool of numbers, answer as a
/// `Set` answers after every step.
@Suite struct MemberIDSetTests {
    @Test func randomEditsAnswerAsASetDoes() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int.max)) { seed in
            // SplitMix64 (shared with the derived-attribute suite), so that a failing seed replays.
            var g = DerivedAttributePropertyTests.Random(state: UInt64(truncatingIfNeeded: seed))
            let stores = [UUID(), UUID()]
            let pool = Int64.random(in: 1...300, using: &g)
            func randomID() -> ManagedObjectID {
                ManagedObjectID(entityName: ["Item", "Parent"].randomElement(using: &g)!, store: stores.randomElement(using: &g)!,
                                key: Int64.random(in: 0..<pool, using: &g))
            }
            let initial = (0..<Int.random(in: 0...40, using: &g)).map { _ in randomID() }
            var set = MemberIDSet(initial)
            var reference = Set(initial)
            for step in 0..<Int.random(in: 1...600, using: &g) {
                let id = randomID()
                switch Int.random(in: 0..<3, using: &g) {
                case 0: #expect(set.insert(id) == reference.insert(id).inserted, "seed \(seed) step \(step): insert")
                case 1:
                    set.remove(id)
                    reference.remove(id)
                default: break
                }
                #expect(set.contains(id) == reference.contains(id), "seed \(seed) step \(step): contains")
                #expect(set.count == reference.count, "seed \(seed) step \(step): count")
            }
            for id in reference { #expect(set.contains(id), "seed \(seed): lost a member") }
        }
    }
}

