import Foundation
import PropertyBased
import Testing
@testable import GranarySync

@Suite struct EventPositionTests {
    @Test func theGlobalCountOrdersFirstAndTheStoreIDBreaksTies() {
        let a = StoreID(canonical: "00000000-0000-0000-0000-00000000000A")!
        let b = StoreID(canonical: "00000000-0000-0000-0000-00000000000B")!
        #expect(EventPosition(globalCount: 1, store: b) < EventPosition(globalCount: 2, store: a))
        #expect(EventPosition(globalCount: 2, store: a) < EventPosition(globalCount: 2, store: b))
        #expect(!(EventPosition(globalCount: 2, store: a) < EventPosition(globalCount: 2, store: a)))
    }

    @Test func positionsAreATotalOrderThatRoundTripsThroughJSON() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            let stores = (0..<3).map { _ in g.storeID() }
            let positions = (0..<20).map { _ in
                EventPosition(globalCount: Int64.random(in: 0...5, using: &g), store: stores.randomElement(using: &g)!)
            }
            for x in positions {
                for y in positions {
                    // Exactly one of <, ==, > holds.
                    #expect([x < y, x == y, y < x].filter { $0 }.count == 1, "seed \(seed): \(x) \(y)")
                }
            }
            let decoded = try? EventPayloadCoding.decode([EventPosition].self, from: EventPayloadCoding.encode(positions), name: "t")
            #expect(decoded == positions, "seed \(seed)")
        }
    }

    @Test func aPositionIsWrittenAsCountAndStore() throws {
        let store = StoreID(canonical: "6F1C0000-0000-4000-8000-000000000001")!
        let json = String(decoding: try EventPayloadCoding.encode(EventPosition(globalCount: 40, store: store)), as: UTF8.self)
        #expect(json == #"[40,"6F1C0000-0000-4000-8000-000000000001"]"#)
        #expect(throws: EventFileError.self) {
            try EventPayloadCoding.decode(EventPosition.self, from: Data(#"[40,"6F1C0000-0000-4000-8000-000000000001",1]"#.utf8), name: "t")
        }
    }
}
