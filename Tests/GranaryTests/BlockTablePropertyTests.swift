import PropertyBased
import Testing

@testable import Granary

/// The registry's table of block starts (`BlockTable`) is open-addressed with its own hash. Random
/// finds and inserts of clustered and scattered keys, through several growths, must answer as a
/// dictionary does.
@Suite struct BlockTablePropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    struct Key: Hashable {
        let scope: UInt
        let run: Int64
    }

    static func check(seed: Int) {
        var r = Random(state: UInt64(seed))
        var table = BlockTable()
        var expected: [Key: Int] = [:]
        // Scope addresses as objects have them: aligned, a few apart, and near each other.
        let scopes: [UInt] = [0x7f00_0000_1000, 0x7f00_0000_1010, 0x5555_0000_0040, 16]
        func someKey() -> Key {
            let run: Int64
            switch r.int(3) {
            case 0: run = Int64(r.int(64))  // a scan's consecutive runs
            case 1: run = Int64(bitPattern: r.next()) >> 3  // anywhere, negative ones too
            default: run = Int64(r.int(100_000)) * 1024  // evenly strided: a weak hash collides here
            }
            return Key(scope: r.pick(scopes), run: run)
        }
        for step in 0..<(50 + r.int(3000)) {
            let key = someKey()
            switch r.int(6) {
            case 0, 1, 2:
                let start = r.int(1 << 20)
                let got = table.findOrInsert(scope: key.scope, run: key.run, start: start)
                let want = expected[key, default: start]
                expected[key] = want
                #expect(got == want, "seed \(seed), step \(step): insert \(key)")
            case 3:
                table.reserveCapacity(table.count + r.int(500))
            default:
                #expect(table.find(scope: key.scope, run: key.run) == expected[key], "seed \(seed), step \(step): find \(key)")
            }
            #expect(table.count == expected.count, "seed \(seed), step \(step)")
        }
        for (key, start) in expected {
            #expect(table.find(scope: key.scope, run: key.run) == start, "seed \(seed): \(key) after all steps")
        }
    }

    @Test func theBlockTableAnswersAsADictionaryWould() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max)) { seed in
            Self.check(seed: seed)
        }
    }
}
