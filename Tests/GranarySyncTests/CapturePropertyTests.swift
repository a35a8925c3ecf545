import Foundation
import Granary
import PropertyBased
import Testing
@testable import GranarySync

/// Random saves on a real store, captured at random moments, the event store reopened now and then:
/// after every capture the ledger's projection (what the other devices build from this device's events)
/// equals the store's graph. The store itself is the reference.
@Suite struct CapturePropertyTests {
    static let entities = ["Author", "Book", "Tag", "Shelf", "Person", "Passport"]

    /// The live objects of `entity` in `context`.
    static func objects(_ entity: String, in context: ManagedObjectContext) throws -> [ManagedObject] {
        var request = FetchRequest<ManagedObject>(entityName: entity)
        request.sortKeys = [SortKey(CaptureFixture.gid)]
        return try context.fetch(request)
    }

    static func randomChange(_ device: CaptureDevice, _ context: ManagedObjectContext, _ g: inout SplitMix) throws {
        let entity = entities.randomElement(using: &g) ?? "Book"
        let existing = try objects(entity, in: context)
        let pick = { (g: inout SplitMix, list: [ManagedObject]) in list.isEmpty ? nil : list[Int.random(in: 0..<list.count, using: &g)] }
        switch Int.random(in: 0..<10, using: &g) {
        case 0...2:
            // A gid from a small pool, not live now: deleted ones come back (M13 within a window).
            let live = Set(existing.compactMap { try? $0.value(forKey: CaptureFixture.gid) as? String })
            let free = (0..<6).map { "\(entity.prefix(1).lowercased())\($0)" }.filter { !live.contains($0) }
            guard let gid = free.randomElement(using: &g) else { return }
            let object = try device.insert(entity, [CaptureFixture.gid: gid], in: context)
            try setAttribute(object, &g)
        case 3:
            guard let object = pick(&g, existing) else { return }
            context.delete(object)
        case 4, 5:
            guard let object = pick(&g, existing) else { return }
            try setAttribute(object, &g)
        default:
            guard let object = pick(&g, existing) else { return }
            try relate(object, device, context, &g)
        }
    }

    static func setAttribute(_ object: ManagedObject, _ g: inout SplitMix) throws {
        let value = Bool.random(using: &g) ? nil : "v\(Int.random(in: 0..<5, using: &g))"
        switch object.entity.name {
        case "Author", "Tag", "Person": try object.setValue(value, forKey: "name")
        case "Book":
            if Bool.random(using: &g) { try object.setValue(value, forKey: "title") } else {
                try object.setValue(Int64.random(in: -2...2, using: &g), forKey: "year")
            }
        case "Shelf": try object.setValue(value, forKey: "label")
        case "Passport": try object.setValue(value, forKey: "number")
        default: break
        }
    }

    static func relate(_ object: ManagedObject, _ device: CaptureDevice, _ context: ManagedObjectContext, _ g: inout SplitMix) throws {
        func any(_ entity: String, _ g: inout SplitMix) throws -> ManagedObject? {
            let list = try objects(entity, in: context)
            return list.isEmpty || Int.random(in: 0..<5, using: &g) == 0 ? nil : list[Int.random(in: 0..<list.count, using: &g)]
        }
        func some(_ entity: String, _ g: inout SplitMix) throws -> [ManagedObject] {
            try objects(entity, in: context).filter { _ in Bool.random(using: &g) }
        }
        switch object.entity.name {
        case "Book":
            if Bool.random(using: &g) { try object.setValue(try any("Author", &g), forKey: "author") } else {
                try object.setValue(Set(try some("Tag", &g)), forKey: "tags")
            }
        case "Author": try object.setValue(Set(try some("Book", &g)), forKey: "books")
        case "Tag":
            guard let book = try any("Book", &g) else { return }
            if Bool.random(using: &g) { try object.add([book], toRelationship: "books") } else { try object.remove([book], fromRelationship: "books") }
        case "Shelf": try object.setValue(try some("Book", &g).shuffled(using: &g), forKey: "books")
        case "Person": try object.setValue(try any("Passport", &g), forKey: "passport")
        case "Passport": try object.setValue(try any("Person", &g), forKey: "holder")
        default: break
        }
    }

    static func check(seed: Int, steps: Int) throws {
        var g = SplitMix(seed: seed)
        let device = try CaptureDevice()
        var captured = 0
        for step in 0..<steps {
            try device.save { context in
                for _ in 0..<Int.random(in: 1...3, using: &g) { try randomChange(device, context, &g) }
            }
            // A relaunch between captures: the token, the map and the ledger must survive it.
            if Int.random(in: 0..<8, using: &g) == 0 { try device.reopenEventStore() }
            if Int.random(in: 0..<3, using: &g) == 0 || step == steps - 1 {
                if try device.recorder.capture() != nil { captured += 1 }
                let projection = try device.ledgerProjection(), graph = try device.storeGraph()
                #expect(projection == graph, "seed \(seed), step \(step)\nledger:\n\(projection)\nstore:\n\(graph)")
                if projection != graph { return }
            }
        }
        #expect(try device.recorder.capture() == nil, "seed \(seed): a capture right after one finds nothing")
        #expect(try device.localEvents().count == captured)
    }

    @Test func theLedgerProjectionEqualsTheStoreAfterEveryCapture() async {
        await propertyCheck(count: 40, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try Self.check(seed: seed, steps: 30) }
        }
    }
}
