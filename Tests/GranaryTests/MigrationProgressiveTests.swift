import Foundation
import Testing
@testable import Granary

/// Progressive migration across several versions, custom steps, and the migrator used on its own.
@Suite struct MigrationProgressiveTests {
    /// v1 `title` → v2 `name` (renamed) → v3 `label` (renamed again) with `rank` widened and `note`
    /// added. Straight from v1 to v3 inference fails (v3's `label` names `name`, which v1 lacks), so
    /// only the step-by-step path works.
    static func versions() throws -> [ManagedObjectModel] {
        let v1 = try ManagedObjectModel(version: "1") {
            Entity("Task") {
                Attribute("title", .string)
                Attribute("rank", .integer16)
            }
        }
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Task") {
                Attribute("name", .string, renamingIdentifier: "title")
                Attribute("rank", .integer16)
            }
        }
        let v3 = try ManagedObjectModel(version: "3") {
            Entity("Task") {
                Attribute("label", .string, renamingIdentifier: "name")
                Attribute("rank", .integer64)
                Attribute("note", .string, optional: true)
            }
        }
        return [v1, v2, v3]
    }

    func write(_ model: ManagedObjectModel, titles: [String], key: String) throws -> MigrationHarness {
        let store = MigrationHarness()
        try store.write(model) { context in
            for (i, title) in titles.enumerated() { try context.insert("Task", [key: title, "rank": Int16(i)]) }
        }
        return store
    }

    @Test func aStoreOfAnyOlderVersionIsMigratedStepByStep() throws {
        let versions = try Self.versions()
        var options = PersistentStore.Options()
        options.migration.versions = Array(versions.dropLast())
        for (start, key) in [(0, "title"), (1, "name")] {
            let store = try write(versions[start], titles: ["a", "b"], key: key)
            try store.open(versions[2], options: options) { persistentStore, context throws in
                let report = try #require(persistentStore.migrationReport)
                #expect(report.path == Array(["1", "2", "3"].dropFirst(start)))
                let tasks = try context.all("Task", sortedBy: "label")
                #expect(try tasks.map { try $0.get("label", as: String.self) } == ["a", "b"])
                #expect(try tasks.map { try $0.get("rank", as: Int64.self) } == [0, 1])
            }
        }
    }

    @Test func withoutTheVersionsTheRecordedModelIsUsedAndAnImpossibleJumpIsRefused() throws {
        let versions = try Self.versions()
        // v2 → v3 is inferable from the store's own record of v2.
        let fromTwo = try write(versions[1], titles: ["x"], key: "name")
        try fromTwo.open(versions[2]) { persistentStore, context throws in
            #expect(try #require(persistentStore.migrationReport).path == ["2", "3"])
            #expect(try context.all("Task", sortedBy: "label").first?.get("label", as: String.self) == "x")
        }
        // v1 → v3 directly is not: the error names the change.
        let fromOne = try write(versions[0], titles: ["x"], key: "title")
        #expect {
            try fromOne.open(versions[2]) { _, _ in }
        } throws: { error in
            // v3's `label` may be v1's `title` renamed; nothing says so, so its data is not dropped.
            guard case MigrationError.unannouncedRenames(let from, let to, let renames) = error else { return false }
            return from == "1" && to == "3"
                && renames == [UnannouncedRename(kind: .attribute, entity: "Task", removed: "title", added: ["label", "note"])]
        }
    }

    @Test func aStoreThatRecordsNoModelNeedsItsVersionListed() throws {
        let versions = try Self.versions()
        let store = try write(versions[1], titles: ["x"], key: "name")
        try store.forgetModelRecord()
        #expect {
            try store.open(versions[2]) { _, _ in }
        } throws: { error in
            guard case MigrationError.unknownSourceModel(_, let hash) = error else { return false }
            return hash == versions[1].versionHash
        }
        var options = PersistentStore.Options()
        options.migration.versions = versions
        try store.open(versions[2], options: options) { persistentStore, _ throws in
            #expect(try #require(persistentStore.migrationReport).path == ["2", "3"])
        }
    }

    @Test func aStoreWithoutAModelRecordGetsOneWhenOpenedWithItsOwnModel() throws {
        let versions = try Self.versions()
        let store = try write(versions[1], titles: ["x"], key: "name")
        try store.forgetModelRecord()
        try store.open(versions[1]) { persistentStore, _ in
            #expect(persistentStore.metadata.userInfo[StoredModel.metadataKey] != nil)
        }
        // The record is enough for the next migration.
        try store.open(versions[2]) { persistentStore, _ throws in
            #expect(try #require(persistentStore.migrationReport).path == ["2", "3"])
        }
    }

    @Test func aCustomStepTransformsWhatInferenceCannot() throws {
        let v1 = try ManagedObjectModel(version: "1") {
            Entity("Person") {
                Attribute("fullName", .string)
                Attribute("age", .string)
            }
            Entity("Draft") { Attribute("text", .string) }
        }
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Person") {
                Attribute("first", .string)
                Attribute("last", .string)
                Attribute("age", .integer64)
            }
        }
        let store = MigrationHarness()
        try store.write(v1) { context in
            try context.insert("Person", ["fullName": "Ada Lovelace", "age": "36"])
            try context.insert("Person", ["fullName": "Alan Turing", "age": "41"])
            try context.insert("Person", ["fullName": "Nobody", "age": "?"])
            try context.insert("Draft", ["text": "scrap"])
        }
        let step = MigrationStep(from: v1, to: v2) {
            EntityMigration.transform("Person") { old, new in
                let parts = (old["fullName"] as? String ?? "").split(separator: " ")
                guard parts.count == 2, let age = Int64(old["age"] as? String ?? "") else { return new.discard() }
                new["first"] = String(parts[0])
                new["last"] = String(parts[1])
                new["age"] = age
            }
            EntityMigration.remove("Draft")
        }
        var options = PersistentStore.Options()
        options.migration.steps = [step]
        options.migration.shouldInferMappingModelAutomatically = false
        try store.open(v2, options: options) { persistentStore, context throws in
            let report = try #require(persistentStore.migrationReport)
            #expect(report.rowsWritten == 2 && report.rowsDropped == 2)
            let people = try context.all("Person", sortedBy: "first")
            #expect(try people.map { try $0.get("last", as: String.self) } == ["Lovelace", "Turing"])
            #expect(try people.map { try $0.get("age", as: Int64.self) } == [36, 41])
        }
    }

    @Test func aCustomStepThatLeavesARequiredValueOutFailsNamingTheObjectAndWritesNothing() throws {
        let v1 = try ManagedObjectModel(version: "1") { Entity("Person") { Attribute("age", .string) } }
        let v2 = try ManagedObjectModel(version: "2") { Entity("Person") { Attribute("age", .integer64) } }
        let store = MigrationHarness()
        try store.write(v1) { context in try context.insert("Person", ["age": "old"]) }
        let before = try store.files()
        var options = PersistentStore.Options()
        options.migration.steps = [MigrationStep(from: v1, to: v2) {
            EntityMigration.transform("Person") { old, new in new["age"] = Int64(old["age"] as? String ?? "") }
        }]
        #expect {
            try store.open(v2, options: options) { _, _ in }
        } throws: { error in
            guard case MigrationError.invalidObject(let entity, _, let reason) = error else { return false }
            return entity == "Person" && reason.contains("age")
        }
        #expect(try store.files() == before)
        // A transform that throws is reported with the object.
        struct Refused: Error {}
        options.migration.steps = [MigrationStep(from: v1, to: v2) {
            EntityMigration.transform("Person") { _, _ in throw Refused() }
        }]
        #expect {
            try store.open(v2, options: options) { _, _ in }
        } throws: { error in
            if case MigrationError.transformFailed(let entity, _, let underlying) = error { return entity == "Person" && underlying.contains("Refused") }
            return false
        }
    }

    @Test func theMigratorPlansWithoutWritingAndMigratesAStoreOnItsOwn() throws {
        let versions = try Self.versions()
        let store = try write(versions[0], titles: ["a"], key: "title")
        let migrator = StoreMigrator(model: versions[2], options: MigrationOptions(versions: versions))
        let before = try store.files()
        let plan = try migrator.plan(forStoreAt: store.url)
        #expect(plan.isNeeded && plan.path == ["1", "2", "3"] && plan.problems.isEmpty)
        #expect(plan.changes.map { $0.map(\.description) } == [
            ["attribute Task.title renamed to name"],
            ["attribute Task.name renamed to label", "attribute Task.rank changed type from integer16 to integer64", "attribute Task.note added"],
        ])
        #expect(try store.files() == before)
        let report = try #require(try migrator.migrateStore(at: store.url))
        #expect(report.rowsWritten == 1)
        #expect(try migrator.migrateStore(at: store.url) == nil)
        #expect(try !migrator.plan(forStoreAt: store.url).isNeeded)
        try store.open(versions[2]) { persistentStore, context throws in
            #expect(persistentStore.migrationReport == nil)
            #expect(try context.all("Task", sortedBy: "label").count == 1)
        }
    }

    @Test func duplicateVersionsAreRefused() throws {
        let versions = try Self.versions()
        let store = try write(versions[0], titles: ["a"], key: "title")
        var options = PersistentStore.Options()
        options.migration.versions = [versions[0], versions[0]]
        #expect {
            try store.open(versions[2], options: options) { _, _ in }
        } throws: { error in
            if case MigrationError.invalidVersions = error { return true }
            return false
        }
    }
}
