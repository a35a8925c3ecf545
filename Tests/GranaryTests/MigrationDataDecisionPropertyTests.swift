import Foundation
import PropertyBased
import Testing
@testable import Granary

/// Random stores migrated across "optional made required" and "a to-many given a minimum count",
/// against a plain reference: the objects expected to fail are worked out from a dictionary, and the
/// migration must either keep every value (none fails) or list exactly those objects and leave every
/// value as it was.
@Suite struct MigrationDataDecisionPropertyTests {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func model(_ version: String, required: Bool) throws -> ManagedObjectModel {
        try ManagedObjectModel(version: version) {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("email", .string, optional: !required)
                Relationship("tags", toMany: "Tag", inverse: "people", optional: !required, minCount: required ? 1 : 0)
            }
            Entity("Tag") {
                Attribute("label", .string)
                Relationship("people", toMany: "Person", inverse: "tags")
            }
        }
    }

    func run(seed: Int) throws {
        var random = Generator(state: UInt64(bitPattern: Int64(seed)))
        let v1 = try Self.model("1", required: false)
        let v2 = try Self.model("2", required: true)
        // The reference: each person's email (or nil) and tag count.
        var reference: [String: (email: String?, tags: Int)] = [:]
        for i in 0..<Int.random(in: 0...8, using: &random) {
            reference["p\(i)"] = (Bool.random(using: &random) || Bool.random(using: &random) ? "p\(i)@x" : nil, Int.random(in: 0...2, using: &random))
        }
        let store = MigrationHarness("property-\(seed)")
        defer { try? FileManager.default.removeItem(at: store.url) }
        try store.write(v1) { context in
            let tags = try (0..<2).map { try context.insert("Tag", ["label": "t\($0)"]) }
            for (name, entry) in reference {
                try context.insert("Person", ["name": name, "email": entry.email, "tags": Set(tags.prefix(entry.tags))])
            }
        }
        var expected: [String: Set<String>] = [:]   // property → names expected to fail
        for (name, entry) in reference {
            if entry.email == nil { expected["email", default: []].insert(name) }
            if entry.tags == 0 { expected["tags", default: []].insert(name) }
        }
        let names: [Int64: String] = try store.open(v1) { _, context in
            Dictionary(uniqueKeysWithValues: try context.all("Person", sortedBy: "name").map {
                ($0.objectID.primaryKey ?? -1, try $0.get("name", as: String.self) ?? "")
            })
        }
        do {
            try store.open(v2) { _, context throws in
                #expect(expected.isEmpty, "seed \(seed): migrated although \(expected) should fail")
                let people = try context.all("Person", sortedBy: "name")
                #expect(people.count == reference.count)
                for person in people {
                    let name = try #require(try person.get("name", as: String.self))
                    #expect(try person.get("email", as: String.self) == reference[name]?.email, "seed \(seed)")
                    #expect(try person.get("tags", as: Set<ManagedObject>.self)?.count == reference[name]?.tags, "seed \(seed)")
                }
            }
        } catch MigrationError.validationFailed(_, _, let failures, let count) {
            var found: [String: Set<String>] = [:]
            for failure in failures { found[failure.property, default: []].insert(names[failure.key] ?? "?") }
            #expect(found == expected, "seed \(seed)")
            #expect(count == expected.values.reduce(0) { $0 + $1.count }, "seed \(seed)")
            // Untouched: the old version still reads every value.
            try store.open(v1) { persistentStore, context throws in
                #expect(persistentStore.migrationReport == nil)
                for person in try context.all("Person", sortedBy: "name") {
                    let name = try #require(try person.get("name", as: String.self))
                    #expect(try person.get("email", as: String.self) == reference[name]?.email, "seed \(seed)")
                }
            }
        }
    }

    @Test func aStoreMigratesExactlyWhenEveryObjectComplies() async {
        await propertyCheck(count: 25, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try run(seed: seed) }
        }
    }
}
