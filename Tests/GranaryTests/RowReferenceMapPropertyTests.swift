import Foundation
import GranaryStorage
import PropertyBased
import Testing

@testable import Granary

/// The graph pass files rows in `RowReferenceMap`, an open-addressing table with backward-shift
/// removal. Random inserts, overwrites, removals and lookups, over keys crowded into few buckets and
/// keys spread wide, in rows and in columns of rows, must leave it holding what a dictionary would.
@Suite struct RowReferenceMapPropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    static func randomKey(_ r: inout Random) -> (UInt64, Int64) {
        let ref = RowReference(table: TableID(rawValue: UInt32(r.int(3))), key: r.int(3) == 0 ? Int64(bitPattern: r.next()) : Int64(r.int(64)))
        return r.bool() ? RowReferenceMap.key(ref) : RowReferenceMap.key(ref, column: r.int(4))
    }

    struct Key: Hashable {
        let high: UInt64
        let low: Int64
    }

    static func check(seed: Int) {
        var r = Random(state: UInt64(seed))
        var map = RowReferenceMap(capacity: r.int(40))
        var expected: [Key: Int] = [:]
        for step in 0..<(50 + r.int(1500)) {
            let key = randomKey(&r)
            let k = Key(high: key.0, low: key.1)
            switch r.int(5) {
            case 0, 1:
                let value = r.int(1000)
                map[key] = value
                expected[k] = value
            case 2:
                map[key] = nil
                expected[k] = nil
            default:
                #expect(map[key] == expected[k], "seed \(seed), step \(step)")
            }
            #expect(map.count == expected.count, "seed \(seed), step \(step)")
        }
        for (k, value) in expected { #expect(map[(k.high, k.low)] == value, "seed \(seed), at the end") }
    }

    @Test func theMapHoldsWhatADictionaryWould() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int.max)) { seed in
            Self.check(seed: seed)
        }
    }

    @Test func aSetOfReferencesAnswersAsASetWould() {
        var r = Random(state: 7)
        let refs = (0..<500).map { _ in RowReference(table: TableID(rawValue: UInt32(r.int(2))), key: Int64(r.int(300))) }
        var set = RowReferenceSet(refs.prefix(200))
        var expected = Set(refs.prefix(200))
        for ref in refs.dropFirst(200) {
            if r.bool() { set.insert(ref); expected.insert(ref) } else { set.remove(ref); expected.remove(ref) }
        }
        for ref in refs { #expect(set.contains(ref) == expected.contains(ref), "\(ref)") }
    }
}
