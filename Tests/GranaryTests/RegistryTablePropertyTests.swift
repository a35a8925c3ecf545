import Foundation
import PropertyBased
import Testing

@testable import Granary

/// A context's registry files objects by ID in blocks of consecutive numbers (`IDSlotMap`) rather than
/// in a dictionary. Random inserts, removals, re-keyings, lookups and sweeps, over dense runs of
/// numbers and scattered ones (negative ones too) in several scopes, must leave it holding exactly what
/// a dictionary would.
@Suite struct RegistryTablePropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    static let model = try! ManagedObjectModel { Entity("Item") { Attribute("n", .integer64) } }
    static let scopes: [ManagedObjectID.Scope] = [
        .of(entityName: "Item", store: nil),
        .of(entityName: "Item", store: UUID()),
        .of(entityName: "Other", store: UUID()),
    ]

    static func randomID(_ r: inout Random) -> ManagedObjectID {
        let number: Int64
        switch r.int(4) {
        case 0, 1: number = Int64(r.int(40))  // a dense run: shares blocks
        case 2: number = Int64(bitPattern: r.next())  // anywhere, negative ones too
        default: number = Int64(r.int(5000)) - 2500
        }
        return ManagedObjectID(scope: r.pick(scopes), key: number)
    }

    static func check(seed: Int) throws {
        var r = Random(state: UInt64(seed))
        var table = ObjectTable<IDSlotMap>()
        // The reference: which object each ID has (by identity, so that it holds no reference), the
        // objects held outside the table, and each object's ID.
        var expected: [ManagedObjectID: ObjectIdentifier] = [:]
        var held: [ObjectIdentifier: ManagedObject] = [:]
        var idOf: [ObjectIdentifier: ManagedObjectID] = [:]
        var known: [ManagedObjectID] = []
        let entity = model.entitiesByName["Item"]!

        func someID() -> ManagedObjectID { known.isEmpty || r.int(3) == 0 ? randomID(&r) : r.pick(known) }

        for step in 0..<(20 + r.int(400)) {
            let context = "seed \(seed), step \(step)"
            switch r.int(10) {
            case 0...3:
                let id = someID()
                let object = ManagedObject(entity: entity, insertInto: nil)
                if let old = expected[id] { held[old] = nil; idOf[old] = nil }
                table.insert(object, forKey: id)
                expected[id] = ObjectIdentifier(object)
                idOf[ObjectIdentifier(object)] = id
                // Half the objects are held outside the table, as fetched objects a caller keeps.
                if r.bool() { held[ObjectIdentifier(object)] = object }
                known.append(id)
            case 4:
                let id = someID()
                let removed = table.removeValue(forKey: id)
                #expect(removed.map(ObjectIdentifier.init) == expected[id], "\(context)")
                if let old = expected.removeValue(forKey: id) { held[old] = nil; idOf[old] = nil }
            case 5:
                let old = someID()
                let new = randomID(&r)
                table.rekey(old, to: new)
                if let object = expected.removeValue(forKey: old) {
                    if let displaced = expected[new] { held[displaced] = nil; idOf[displaced] = nil }
                    expected[new] = object
                    idOf[object] = new
                    known.append(new)
                }
            case 6:
                let id = someID()
                let live = table.liveObject(forKey: id)
                if let object = expected[id], held[object] != nil {
                    #expect(live.map(ObjectIdentifier.init) == object, "\(context)")
                } else {
                    #expect(live == nil, "\(context)")
                    if let object = expected.removeValue(forKey: id) { idOf[object] = nil }
                }
            case 7:
                table.removeObjectsHeldOnlyHere { idOf[ObjectIdentifier($0)]! }
                for (id, object) in expected where held[object] == nil {
                    expected[id] = nil
                    idOf[object] = nil
                }
            case 8:
                // Let go of some held objects: only the table keeps them now.
                for object in Array(held.keys) where r.int(3) == 0 { held[object] = nil }
            default:
                table.reserveCapacity(table.count + r.int(300))
            }
            #expect(table.count == expected.count, "\(context)")
            for id in known.suffix(30) {
                #expect(table[id].map(ObjectIdentifier.init) == expected[id], "\(context): \(id)")
            }
            #expect(Set(table.values.map(ObjectIdentifier.init)) == Set(expected.values), "\(context)")
        }
    }

    @Test func theRegistryTableHoldsWhatADictionaryWould() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try Self.check(seed: seed) }
        }
    }

    @Test func fixedSeedsStayGreen() throws {
        for seed in 0..<100 { try Self.check(seed: seed) }
    }
}
