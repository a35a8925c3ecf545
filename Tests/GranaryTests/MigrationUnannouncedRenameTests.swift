import Foundation
import Testing
@testable import Granary

/// A removal beside a same-typed addition, with no renaming identifier between them, may be a rename:
/// inference refuses rather than drop the data, until the model says so or the app acknowledges it.
@Suite struct MigrationUnannouncedRenameTests {
    static let v1 = try! ManagedObjectModel(version: "1") {
        Entity("Person") {
            Attribute("name", .string)
            Attribute("town", .string, optional: true)
            Relationship("pets", toMany: "Pet", inverse: "owner")
        }
        Entity("Pet") {
            Attribute("name", .string)
            Relationship("owner", to: "Person", inverse: "pets")
        }
    }

    static func v2(renamingIdentifier: String? = nil) throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "2") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("city", .string, optional: true, renamingIdentifier: renamingIdentifier)
                Relationship("pets", toMany: "Pet", inverse: "owner")
            }
            Entity("Pet") {
                Attribute("name", .string)
                Relationship("owner", to: "Person", inverse: "pets")
            }
        }
    }

    func store() throws -> MigrationHarness {
        let store = MigrationHarness()
        try store.write(Self.v1) { context in
            let ada = try context.insert("Person", ["name": "Ada", "town": "London"])
            try context.insert("Pet", ["name": "Rex", "owner": ada])
        }
        return store
    }

    @Test func aSameTypedRemovalAndAdditionIsRefusedNamingBothAndTheFix() throws {
        let store = try store()
        let before = try store.files()
        #expect {
            try store.open(try Self.v2()) { _, _ in }
        } throws: { error in
            guard case MigrationError.unannouncedRenames("1", "2", let renames) = error else { return false }
            let text = "\(error)"
            return renames == [UnannouncedRename(kind: .attribute, entity: "Person", removed: "town", added: ["city"])]
                && renames[0].removalKey == "Person.town"
                && text.contains("'city'") && text.contains("Renaming ID") && text.contains("acknowledgedRemovals [\"Person.town\"]")
        }
        #expect(try store.files() == before)
        // The migrator's plan shows it as a problem too.
        let plan = try StoreMigrator(model: try Self.v2()).plan(forStoreAt: store.url)
        #expect(plan.problems.first?.changes.map(\.kind) == [.attributeRemoved])
    }

    @Test func aRenamingIdentifierCarriesTheData() throws {
        let store = try store()
        try store.open(try Self.v2(renamingIdentifier: "town")) { _, context throws in
            #expect(try context.all("Person", sortedBy: "name").first?.get("city", as: String.self) == "London")
        }
    }

    @Test func anAcknowledgedRemovalDropsTheDataAsCoreDataWould() throws {
        for acknowledge in [{ (o: inout MigrationOptions) in o.acknowledgedRemovals = ["Person.town"] },
                            { (o: inout MigrationOptions) in o.allowsUnannouncedRenames = true }] {
            let store = try store()
            var options = PersistentStore.Options()
            acknowledge(&options.migration)
            try store.open(try Self.v2(), options: options) { persistentStore, context throws in
                let changes = try #require(persistentStore.migrationReport).changes[0].map(\.description)
                #expect(changes.contains("attribute Person.town removed") && changes.contains("attribute Person.city added"))
                #expect(try context.all("Person", sortedBy: "name").first?.get("city", as: String.self) == nil)
            }
        }
        // Acknowledging another removal does not cover this one.
        let store = try store()
        var options = PersistentStore.Options()
        options.migration.acknowledgedRemovals = ["Person.name"]
        #expect(throws: MigrationError.self) { try store.open(try Self.v2(), options: options) { _, _ in } }
    }

    @Test func aRemovalBesideAnAdditionOfAnotherTypeIsNoRename() throws {
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("zip", .integer32, optional: true)
                Relationship("pets", toMany: "Pet", inverse: "owner")
            }
            Entity("Pet") {
                Attribute("name", .string)
                Relationship("owner", to: "Person", inverse: "pets")
            }
        }
        let store = try store()
        try store.open(v2) { persistentStore, _ in #expect(persistentStore.migrationReport?.rowsWritten == 2) }
    }

    @Test func entitiesAndRelationshipsAreCheckedToo() throws {
        // Pet becomes Animal with the same attributes; Person.pets becomes Person.animals.
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("town", .string, optional: true)
                Relationship("animals", toMany: "Animal", inverse: "owner")
            }
            Entity("Animal") {
                Attribute("name", .string)
                Relationship("owner", to: "Person", inverse: "animals")
            }
        }
        let store = try store()
        #expect {
            try store.open(v2) { _, _ in }
        } throws: { error in
            guard case MigrationError.unannouncedRenames(_, _, let renames) = error else { return false }
            return renames == [UnannouncedRename(kind: .entity, entity: "Pet", removed: "Pet", added: ["Animal"])]
        }
        // With the entity acknowledged, the relationship pair is no rename (its destination changed
        // with it), so the step migrates, dropping the pets.
        var options = PersistentStore.Options()
        options.migration.acknowledgedRemovals = ["Pet"]
        try store.open(v2, options: options) { persistentStore, _ in #expect(persistentStore.migrationReport?.rowsDropped == 1) }

        // A relationship renamed without identifier, to the same entity.
        let v3 = try ManagedObjectModel(version: "3") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("town", .string, optional: true)
                Relationship("companions", toMany: "Animal", inverse: "owner")
            }
            Entity("Animal") {
                Attribute("name", .string)
                Relationship("owner", to: "Person", inverse: "companions")
            }
        }
        #expect {
            try store.open(v3) { _, _ in }
        } throws: { error in
            guard case MigrationError.unannouncedRenames("2", "3", let renames) = error else { return false }
            return renames == [UnannouncedRename(kind: .relationship, entity: "Person", removed: "animals", added: ["companions"])]
        }
    }
}
