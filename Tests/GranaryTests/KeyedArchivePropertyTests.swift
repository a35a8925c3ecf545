import Foundation
import Testing

@testable import Granary

/// Random nested property-list values — every class Core Data's default transformer allows — set on a
/// `secureUnarchiveFromData` attribute, saved, and read back after the store is reopened: each reads back
/// exactly (compared as `ArchivedValue`, the plain reference), and with its Swift type when its members
/// share one (`[String]` stays `[String]`).
@Suite struct KeyedArchivePropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    static let model: ManagedObjectModel = {
        try! ManagedObjectModel {
            Entity("Holder") {
                Attribute("serial", .integer64)
                Attribute("value", .secureUnarchiveFromData, optional: true)
            }
        }
    }()

    static func scalar(_ r: inout Random) -> ArchivedValue {
        switch r.int(8) {
        case 0: return .string(r.pick(["", "a", "é😀", "plist", String(repeating: "x", count: 20), "\u{0}"]))
        case 1: return .int(r.pick([0, 1, -1, 255, 256, 65_536, Int64.max, Int64.min, Int64(r.int(1 << 40))]))
        case 2: return .double(r.pick([0, -0.0, 1.5, -2.25e300, 1e-300, Double(r.int(1_000)) / 7]))
        case 3: return .bool(r.bool())
        case 4: return .date(Date(timeIntervalSinceReferenceDate: r.pick([0, -1e9, 1.25, Double(r.int(1 << 30)) / 3])))
        case 5: return .data(Data((0..<r.int(20)).map { _ in UInt8(r.int(256)) }))
        case 6: return .url(r.pick([URL(string: "https://example.com/a?b=c#d")!, URL(string: "file:///tmp/x%20y")!,
                                    URL(string: "mailto:a@b.org")!, URL(string: "https://example.org/%C3%A9/\(r.int(99))")!]))
        default: return .uuid(UUID(uuid: (UInt8(r.int(256)), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, UInt8(r.int(256)))))
        }
    }

    /// A random value; collections nest up to `depth` levels. Sets and dictionary keys hold one scalar type.
    static func value(_ r: inout Random, depth: Int) -> ArchivedValue {
        guard depth > 0, r.int(3) == 0 else { return scalar(&r) }
        let count = r.int(6)
        switch r.int(4) {
        case 0:
            return .array((0..<count).map { _ in value(&r, depth: depth - 1) })
        case 1:
            // Homogeneous on purpose half the time, so typed collections are exercised.
            let kind = r.int(8)
            return .array((0..<count).map { _ in r.bool() ? scalar(&r) : scalar(of: kind, &r) })
        case 2:
            let kind = r.int(8)
            return .set(Set((0..<count).map { _ in scalar(of: kind, &r) }))
        default:
            let kind = r.int(8)
            var entries: [ArchivedValue: ArchivedValue] = [:]
            for _ in 0..<count { entries[scalar(of: kind, &r)] = value(&r, depth: depth - 1) }
            return .dictionary(entries)
        }
    }

    static func scalar(of kind: Int, _ r: inout Random) -> ArchivedValue {
        while true {
            let candidate = scalar(&r)
            if candidate.scalarKind == scalar(kindIndex: kind) { return candidate }
        }
    }

    static func scalar(kindIndex: Int) -> String {
        ["String", "Int", "Double", "Bool", "Date", "Data", "URL", "UUID"][kindIndex]
    }

    static func check(seed: Int) throws {
        var r = Random(state: UInt64(truncatingIfNeeded: seed))
        let expected = (0..<6).map { _ in r.int(5) == 0 ? nil : value(&r, depth: 4) }
        let url = scratchURL("keyedArchive\(seed)")
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .durable, at: url)
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try context.performAndWait {
                for (serial, value) in expected.enumerated() {
                    let holder = try EntityDescription.insertNewObject(forEntityName: "Holder", into: context)
                    try holder.setValue(serial, forKey: "serial")
                    try holder.setValue(value?.swiftValue, forKey: "value")
                }
                try context.save()
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let holders = try context.fetch(FetchRequest<ManagedObject>(entityName: "Holder"))
            #expect(holders.count == expected.count, "seed \(seed)")
            for holder in holders {
                let serial = try #require(try holder.value(forKey: "serial") as? Int64)
                let stored = try holder.value(forKey: "value")
                let want = expected[Int(serial)]
                let got = try stored.flatMap { try ArchivedValue(swift: $0) }
                #expect(got == want, "seed \(seed), object \(serial): \(String(describing: want)) read back as \(String(describing: stored))")
                if case .array(let items)? = want, let first = items.first?.scalarKind, items.allSatisfy({ $0.scalarKind == first }) {
                    let type = stored.map { ObjectIdentifier(Swift.type(of: $0)) }
                    #expect(type != ObjectIdentifier([any Sendable].self), "seed \(seed): a homogeneous array of \(first) reads back typed")
                }
            }
        }
    }

    @Test func randomPropertyListValuesRoundTripThroughSaveAndReopen() async {
        await SeededPropertyRuns.run(environmentPrefix: "KEYED_ARCHIVE", label: "keyed archive round trip") { seed, _ in
            try Self.check(seed: seed)
        }
    }

    @Test func fixedSeedsStayGreen() throws {
        for seed in 0..<10 { try Self.check(seed: seed) }
    }
}
