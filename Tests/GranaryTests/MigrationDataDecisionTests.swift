import Foundation
import Testing
@testable import Granary

/// Changes whose fate depends on the stored objects (a required value added without a default, an
/// optional property made required, a new minimum count) are decided on the data, as Core Data
/// decides them: an empty store or one whose objects comply migrates; otherwise every failing object
/// is listed and the store is left as it was.
@Suite struct MigrationDataDecisionTests {
    static let v1 = try! ManagedObjectModel(version: "1") {
        Entity("Person") {
            Attribute("name", .string)
            Attribute("email", .string, optional: true)
        }
    }

    /// Expects opening `store` with `model` to fail validation with exactly these (property, reason)
    /// pairs, and the store to be untouched and still readable with its own model.
    func expectRefused(_ store: MigrationHarness, with model: ManagedObjectModel, options: PersistentStore.Options = .init(),
                       failures expected: [(String, ValidationError.Reason)], oldModel: ManagedObjectModel, count: Int) throws {
        let before = try store.files()
        #expect {
            try store.open(model, options: options) { _, _ in }
        } throws: { error in
            guard case MigrationError.validationFailed(_, _, let failures, let total) = error else { return false }
            return total == expected.count && failures.count == total
                && failures.map(\.property).sorted() == expected.map(\.0).sorted()
                && zip(failures.sorted { $0.property < $1.property }, expected.sorted { $0.0 < $1.0 }).allSatisfy { $0.reason == $1.1 }
                && failures.allSatisfy { $0.objectURI.hasPrefix("x-granary://") && "\(error)".contains("object \($0.key)") }
        }
        #expect(try store.files() == before)
        try store.open(oldModel) { persistentStore, context throws in
            #expect(persistentStore.migrationReport == nil)
            #expect(try context.all("Person", sortedBy: "name").count == count)
        }
    }

    @Test func aRequiredAttributeWithoutDefaultMigratesAnEmptyStoreAndNamesEveryObjectOtherwise() throws {
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("email", .string, optional: true)
                Attribute("born", .date)
            }
        }
        let empty = MigrationHarness("empty-\(#function)")
        try empty.write(Self.v1) { _ in }
        try empty.open(v2) { persistentStore, context in
            let report = try #require(persistentStore.migrationReport)
            let change = try #require(report.changes[0].first { $0.property == "born" })
            #expect(change.isInferable && change.dataRequirement != nil)
            #expect(change.description.contains("migrates if the stored objects allow it"))
            try context.insert("Person", ["name": "Ada", "born": Date(timeIntervalSince1970: 0)])
            try context.save()
        }

        let full = MigrationHarness()
        try full.write(Self.v1) { context in
            for name in ["Ada", "Alan", "Grace"] { try context.insert("Person", ["name": name]) }
        }
        try expectRefused(full, with: v2, failures: [("born", .missing), ("born", .missing), ("born", .missing)], oldModel: Self.v1, count: 3)
    }

    @Test func anOptionalAttributeMadeRequiredMigratesWhenEveryObjectHasAValue() throws {
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("email", .string)
            }
        }
        let good = MigrationHarness("good-\(#function)")
        try good.write(Self.v1) { context in
            try context.insert("Person", ["name": "Ada", "email": "ada@example.com"])
            try context.insert("Person", ["name": "Alan", "email": "alan@example.com"])
        }
        try good.open(v2) { persistentStore, context throws in
            #expect(persistentStore.migrationReport?.rowsWritten == 2)
            #expect(try context.all("Person", sortedBy: "name").map { try $0.get("email", as: String.self) } == ["ada@example.com", "alan@example.com"])
        }

        let bad = MigrationHarness()
        try bad.write(Self.v1) { context in
            try context.insert("Person", ["name": "Ada", "email": "ada@example.com"])
            try context.insert("Person", ["name": "Alan"])
            try context.insert("Person", ["name": "Grace"])
        }
        try expectRefused(bad, with: v2, failures: [("email", .missing), ("email", .missing)], oldModel: Self.v1, count: 3)
    }

    /// A progressive migration stages its rows; a failure in a later step leaves the store as well.
    @Test func aFailureInALaterStepOfAProgressiveMigrationWritesNothing() throws {
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("email", .string, optional: true)
                Attribute("age", .integer64, optional: true)
            }
        }
        let v3 = try ManagedObjectModel(version: "3") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("email", .string)
                Attribute("age", .integer64, optional: true)
            }
        }
        let store = MigrationHarness()
        try store.write(Self.v1) { context in try context.insert("Person", ["name": "Alan"]) }
        var options = PersistentStore.Options()
        options.migration.versions = [Self.v1, v2]
        try expectRefused(store, with: v3, options: options, failures: [("email", .missing)], oldModel: Self.v1, count: 1)
    }

    @Test func aRequiredToOneAddedNeedsAnEmptyStoreAndARequiredToManyWithoutMinimumDoesNot() throws {
        let withGroup = { (toMany: Bool, minCount: Int) in
            try ManagedObjectModel(version: "2") {
                Entity("Person") {
                    Attribute("name", .string)
                    Attribute("email", .string, optional: true)
                    if toMany {
                        Relationship("groups", toMany: "Group", inverse: "members", optional: false, minCount: minCount)
                    } else {
                        Relationship("group", to: "Group", inverse: "members", optional: false)
                    }
                }
                Entity("Group") {
                    Attribute("title", .string)
                    Relationship("members", toMany: "Person", inverse: toMany ? "groups" : "group")
                }
            }
        }
        // Core Data's rule: a non-optional to-many is held to its counts only, and an empty one is
        // valid with minCount 0. So existing people, who have no groups, migrate.
        let people = MigrationHarness("tomany-\(#function)")
        try people.write(Self.v1) { context in
            for name in ["Ada", "Alan"] { try context.insert("Person", ["name": name]) }
        }
        try people.open(try withGroup(true, 0)) { persistentStore, context throws in
            #expect(persistentStore.migrationReport?.changes[0].allSatisfy { $0.dataRequirement == nil } == true)
            let all = try context.all("Person", sortedBy: "name")
            #expect(try all.allSatisfy { try $0.get("groups", as: Set<ManagedObject>.self)?.isEmpty == true })
        }
        // With a minimum of 1, each person is listed as having too few.
        let counted = MigrationHarness("min-\(#function)")
        try counted.write(Self.v1) { context in
            for name in ["Ada", "Alan"] { try context.insert("Person", ["name": name]) }
        }
        try expectRefused(counted, with: try withGroup(true, 1), failures: [("groups", .tooFew(count: 0, minimum: 1)), ("groups", .tooFew(count: 0, minimum: 1))],
                          oldModel: Self.v1, count: 2)
        // A required to-one: existing people have no group.
        try expectRefused(counted, with: try withGroup(false, 0), failures: [("group", .missing), ("group", .missing)], oldModel: Self.v1, count: 2)
        // An empty store migrates to it.
        let empty = MigrationHarness("empty-\(#function)")
        try empty.write(Self.v1) { _ in }
        try empty.open(try withGroup(false, 0)) { persistentStore, _ in #expect(persistentStore.migrationReport != nil) }
    }

    @Test func aRelationshipMadeRequiredMigratesWhenEveryObjectHasADestination() throws {
        let model = { (optional: Bool, version: String) in
            try ManagedObjectModel(version: version) {
                Entity("Pet") {
                    Attribute("name", .string)
                    Relationship("owner", to: "Owner", inverse: "pets", optional: optional)
                }
                Entity("Owner") {
                    Attribute("name", .string)
                    Relationship("pets", toMany: "Pet", inverse: "owner")
                }
            }
        }
        let v1 = try model(true, "1")
        let v2 = try model(false, "2")
        let store = MigrationHarness()
        try store.write(v1) { context in
            let ada = try context.insert("Owner", ["name": "Ada"])
            try context.insert("Pet", ["name": "Rex", "owner": ada])
            try context.insert("Pet", ["name": "Stray"])
        }
        let before = try store.files()
        #expect {
            try store.open(v2) { _, _ in }
        } throws: { error in
            guard case MigrationError.validationFailed(_, _, let failures, 1) = error else { return false }
            return failures.map(\.entity) == ["Pet"] && failures.map(\.property) == ["owner"]
        }
        #expect(try store.files() == before)
        // Give the stray an owner with the old model; now it migrates.
        try store.write(v1) { context in
            let stray = try #require(try context.all("Pet", sortedBy: "name").first { try $0.get("name", as: String.self) == "Stray" })
            try stray.setValue(try context.all("Owner", sortedBy: "name").first, forKey: "owner")
        }
        try store.open(v2) { persistentStore, context throws in
            #expect(persistentStore.migrationReport?.rowsWritten == 3)
            #expect(try context.all("Pet", sortedBy: "name").allSatisfy { try $0.get("owner", as: ManagedObject.self) != nil })
        }
    }
}
