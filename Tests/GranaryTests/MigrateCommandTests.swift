import Foundation
import Testing
@testable import Granary

/// `granary migrate`, run as the real executable on a store written with the Tasks fixture's first
/// version.
@Suite struct MigrateCommandTests {
    func run(_ arguments: [String]) throws -> ChildProcess.Outcome {
        try ChildProcess.run("granary", arguments)
    }

    func tasksStore() throws -> (MigrationHarness, XcodeModelBundle, String) {
        let path = try XcodeFixtures.url("Tasks.xcdatamodeld").path
        let bundle = try XcodeModelBundle(contentsOf: URL(fileURLWithPath: path))
        let store = MigrationHarness()
        try store.write(bundle.versions[0]) { context in
            for i in 0..<3 { try context.insert("Task", ["title": "task \(i)", "priority": Int16(i)]) }
        }
        return (store, bundle, path)
    }

    @Test func showsTheChangesThenMigratesWithProgress() throws {
        let (store, bundle, model) = try tasksStore()
        let before = try store.files()
        let dry = try run(["migrate", store.url.path, "--model", model, "--dry-run"])
        #expect(dry.status == 0, "\(dry.err)")
        #expect(dry.out.contains("model Tasks → Tasks 3"))
        #expect(dry.out.contains("step 1: Tasks → Tasks 2"))
        #expect(dry.out.contains("attribute Task.title renamed to name"))
        #expect(dry.out.contains("step 2: Tasks 2 → Tasks 3"))
        #expect(dry.out.contains("attribute Task.priority changed type from integer16 to integer32"))
        #expect(dry.out.contains("dry run: nothing written"))
        #expect(try store.files() == before)

        let real = try run(["migrate", store.url.path, "--model", model])
        #expect(real.status == 0, "\(real.err)")
        #expect(real.out.contains("migrated: 3 objects written, 0 dropped"))
        #expect(real.err.contains("step 1/2: Task") && real.err.contains("switched to the migrated store"))
        try store.open(bundle.currentVersion) { persistentStore, context throws in
            #expect(persistentStore.migrationReport == nil)
            #expect(try context.all("Task", sortedBy: "name").map { try $0.get("name", as: String.self) } == ["task 0", "task 1", "task 2"])
        }
        let again = try run(["migrate", store.url.path, "--model", model])
        #expect(again.status == 0 && again.out.contains("already at model Tasks 3"))
    }

    @Test func migratesToANamedVersion() throws {
        let (store, bundle, model) = try tasksStore()
        let result = try run(["migrate", store.url.path, "--model", model, "--version", "Tasks 2"])
        #expect(result.status == 0, "\(result.err)")
        try store.open(try #require(bundle.version(named: "Tasks 2"))) { persistentStore, _ in
            #expect(persistentStore.migrationReport == nil)
        }
    }

    @Test func badInputGivesAOneLineMessageAndChangesNothing() throws {
        let (store, _, model) = try tasksStore()
        let before = try store.files()
        let noVersion = try run(["migrate", store.url.path, "--model", model, "--version", "Tasks 9"])
        #expect(noVersion.status == 1 && noVersion.err.contains("has no version named 'Tasks 9'"))
        let noModel = try run(["migrate", store.url.path, "--model", "/nonexistent/Model.xcdatamodel"])
        #expect(noModel.status == 1 && noModel.err.hasPrefix("granary: cannot load the model"))
        let noStore = try run(["migrate", "/nonexistent/store.granary", "--model", model])
        #expect(noStore.status == 1 && noStore.err.contains("no store at /nonexistent/store.granary"))

        // A model that changes a type inference cannot change: listed, marked, refused.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("granary-cli-\(UUID().uuidString)/Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23G93" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                <entity name="Task" representedClassName="Task" syncable="YES" codeGenerationType="class">
                    <attribute name="title" attributeType="Date"/>
                </entity>
            </model>
            """.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let refused = try run(["migrate", store.url.path, "--model", folder.path])
        #expect(refused.status == 1)
        #expect(refused.out.contains("✗ attribute Task.title changed type from string to date"))
        #expect(refused.err.contains("cannot be inferred (marked ✗); the store was not changed"))
        #expect(try store.files() == before)
    }

    @Test func aMappingModelAndAnAcknowledgedRemovalAreTakenFromTheCommandLine() throws {
        let bundlePath = try XcodeFixtures.url("Corpus/MigrateMappingModel.xcdatamodeld").path
        let mappingPath = try XcodeFixtures.url("Corpus/MigrateMappingModel.xcmappingmodel").path
        let bundle = try XcodeModelBundle(contentsOf: URL(fileURLWithPath: bundlePath))
        let store = MigrationHarness()
        try store.write(bundle.versions[0]) { context in try context.insert("Person", ["name": "Ada", "city": "London"]) }
        let result = try run(["migrate", store.url.path, "--model", bundlePath, "--mapping-model", mappingPath])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("migrated by the mapping model"))
        try store.open(bundle.versions[1]) { _, context throws in
            let address = try #require(try context.all("Person", sortedBy: "name").first?.get("address", as: ManagedObject.self))
            #expect(try address.get("city", as: String.self) == "London")
        }

        let renamedPath = try XcodeFixtures.url("Corpus/MigrateUnannouncedRename.xcdatamodeld").path
        let renamed = try XcodeModelBundle(contentsOf: URL(fileURLWithPath: renamedPath))
        let notes = MigrationHarness("notes-\(#function)")
        try notes.write(renamed.versions[0]) { context in try context.insert("Note", ["body": "hello"]) }
        let refused = try run(["migrate", notes.url.path, "--model", renamedPath, "--version", "MigrateUnannouncedRename 2"])
        #expect(refused.status == 1 && refused.out.contains("✗ attribute Note.body removed"))
        let acknowledged = try run(["migrate", notes.url.path, "--model", renamedPath, "--version", "MigrateUnannouncedRename 2",
                                    "--acknowledge-removal", "Note.body"])
        #expect(acknowledged.status == 0, "\(acknowledged.err)")
    }
}
