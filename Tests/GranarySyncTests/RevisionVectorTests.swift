import Foundation
import PropertyBased
import Testing
@testable import GranarySync

@Suite struct RevisionVectorTests {
    static func randomVector(_ g: inout SplitMix, stores: [StoreID]) -> RevisionVector {
        var vector = RevisionVector()
        for store in stores where Bool.random(using: &g) { vector[store] = Int64.random(in: 0...4, using: &g) }
        return vector
    }

    @Test func zeroEntriesAreNotKeptSoEqualCoverageIsEqualValue() {
        let a = StoreID.random(), b = StoreID.random()
        var vector = RevisionVector([a: 3, b: 0])
        #expect(vector == RevisionVector([a: 3]))
        vector[a] = 0
        #expect(vector == RevisionVector())
        #expect(vector[b] == 0)
    }

    @Test func happensBeforeIsStrictCoverage() {
        let a = StoreID.random(), b = StoreID.random()
        let x = RevisionVector([a: 1]), y = RevisionVector([a: 2, b: 1]), z = RevisionVector([b: 2])
        #expect(x.happensBefore(y))
        #expect(!y.happensBefore(x))
        #expect(!x.happensBefore(x))
        #expect(x.isConcurrent(with: z) && z.isConcurrent(with: x))
        #expect(!x.isConcurrent(with: y))
        #expect(RevisionVector().happensBefore(x))
    }

    @Test func joinIsTheLeastUpperBoundAndMeetTheGreatestLowerBound() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            let stores = (0..<4).map { _ in g.storeID() }
            let x = Self.randomVector(&g, stores: stores), y = Self.randomVector(&g, stores: stores)
            let z = Self.randomVector(&g, stores: stores)
            let join = x.joined(with: y), meet = x.met(with: y)
            #expect(join == y.joined(with: x) && meet == y.met(with: x), "seed \(seed): commutative")
            #expect(x.joined(with: y).joined(with: z) == x.joined(with: y.joined(with: z)), "seed \(seed): associative")
            #expect(x.joined(with: x) == x && x.met(with: x) == x, "seed \(seed): idempotent")
            #expect(x.isCovered(by: join) && y.isCovered(by: join), "seed \(seed): upper bound")
            #expect(meet.isCovered(by: x) && meet.isCovered(by: y), "seed \(seed): lower bound")
            // Least: any vector covering both covers the join; greatest: any covered by both is covered by the meet.
            if x.isCovered(by: z) && y.isCovered(by: z) { #expect(join.isCovered(by: z), "seed \(seed)") }
            if z.isCovered(by: x) && z.isCovered(by: y) { #expect(z.isCovered(by: meet), "seed \(seed)") }
            for store in stores {
                #expect(join[store] == max(x[store], y[store]) && meet[store] == min(x[store], y[store]), "seed \(seed)")
            }
        }
    }

    @Test func happensBeforeIsAStrictPartialOrder() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int.max)) { seed in
            var g = SplitMix(seed: seed)
            let stores = (0..<3).map { _ in g.storeID() }
            let vectors = (0..<8).map { _ in Self.randomVector(&g, stores: stores) }
            for x in vectors {
                #expect(!x.happensBefore(x), "seed \(seed): irreflexive")
                for y in vectors {
                    #expect(!(x.happensBefore(y) && y.happensBefore(x)), "seed \(seed): asymmetric")
                    // Exactly one relation: before, after, equal or concurrent.
                    let relations = [x.happensBefore(y), y.happensBefore(x), x == y, x.isConcurrent(with: y)]
                    #expect(relations.filter { $0 }.count == 1, "seed \(seed): \(x) \(y)")
                    for z in vectors where x.happensBefore(y) && y.happensBefore(z) {
                        #expect(x.happensBefore(z), "seed \(seed): transitive")
                    }
                }
            }
        }
    }

    @Test func aVectorRoundTripsAsASortedJSONObject() throws {
        let a = StoreID(canonical: "A0000000-0000-4000-8000-000000000000")!
        let b = StoreID(canonical: "B0000000-0000-4000-8000-000000000000")!
        let vector = RevisionVector([b: 2, a: 7])
        let json = try EventPayloadCoding.encode(vector)
        #expect(String(decoding: json, as: UTF8.self) == #"{"A0000000-0000-4000-8000-000000000000":7,"B0000000-0000-4000-8000-000000000000":2}"#)
        #expect(try EventPayloadCoding.decode(RevisionVector.self, from: json, name: "t") == vector)
    }

    @Test func decodingRefusesForeignKeysAndNonPositiveRevisions() {
        for text in [#"{"a0000000-0000-4000-8000-000000000000":1}"#, #"{"A0000000-0000-4000-8000-000000000000":0}"#,
                     #"{"A0000000-0000-4000-8000-000000000000":-3}"#, #"{"x":1}"#, #"[1]"#] {
            #expect(throws: EventFileError.self, "\(text)") {
                try EventPayloadCoding.decode(RevisionVector.self, from: Data(text.utf8), name: "t")
            }
        }
    }
}
