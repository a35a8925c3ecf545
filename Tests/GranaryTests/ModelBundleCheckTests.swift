import Foundation
import Testing
@testable import Granary

/// `ModelBundleCheck` and `granary model check`: each version loads or not with its problems and
/// warnings, and each pair of consecutive versions gets a verdict, without any store.
@Suite struct ModelBundleCheckTests {
    static func corpus(_ name: String) throws -> URL {
        try XcodeFixtures.url("Corpus/\(name)")
    }

    /// A bundle of three versions: the second does not load (two problems), so both pairs go unchecked.
    static func brokenBundle() throws -> URL {
        let bundle = scratchURL("check-\(UUID().uuidString)").appendingPathComponent("Broken.xcdatamodeld")
        let header = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="23231" systemVersion="24A335" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            """
        let versions = [
            "Broken": #"<entity name="Item" syncable="YES"><attribute name="name" attributeType="String"/></entity>"#,
            "Broken 2": #"<entity name="Item" syncable="YES"><attribute name="name" attributeType="Strang"/><attribute name="size" attributeType="Integer 99"/></entity>"#,
            "Broken 3": #"<entity name="Item" syncable="YES"><attribute name="name" attributeType="String"/><attribute name="size" optional="YES" attributeType="Integer 32"/></entity>"#,
        ]
        for (name, body) in versions {
            let folder = bundle.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try "\(header)\n\(body)\n</model>\n".write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Broken 3.xcdatamodel</string></dict></plist>
            """.write(to: bundle.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        return bundle
    }

    @Test func eachPairGetsAVerdict() throws {
        let required = try ModelBundleCheck(contentsOf: try Self.corpus("MigrateRequiredAdded.xcdatamodeld"))
        #expect(required.versions.map(\.loads) == [true, true, true] && required.versions.map(\.isCurrent) == [false, false, true])
        guard case .needsDataCheck(let changes) = required.steps[0].verdict else {
            Issue.record("expected a data check, got \(required.steps[0].verdict)")
            return
        }
        #expect(changes.map(\.kind) == [.attributeMadeRequired, .relationshipMadeRequired])
        guard case .migratesByInference = required.steps[1].verdict else { Issue.record("\(required.steps[1].verdict)"); return }
        #expect(!required.hasRefusals)

        let renamed = try ModelBundleCheck(contentsOf: try Self.corpus("MigrateUnannouncedRename.xcdatamodeld"))
        guard case .refused(let reasons) = renamed.steps[0].verdict else { Issue.record("\(renamed.steps[0].verdict)"); return }
        #expect(reasons.count == 1 && reasons[0].contains("Note.body removed") && reasons[0].contains("'text'"))
        #expect(renamed.hasRefusals)
        // The renaming identifier of version 3 carries text on to content.
        guard case .migratesByInference = renamed.steps[1].verdict else { Issue.record("\(renamed.steps[1].verdict)"); return }
        // The app's acknowledgement turns the refusal into a migration.
        let acknowledged = try ModelBundleCheck(contentsOf: try Self.corpus("MigrateUnannouncedRename.xcdatamodeld"),
                                                options: MigrationOptions(acknowledgedRemovals: ["Note.body"]))
        #expect(!acknowledged.hasRefusals)

        let mapped = try ModelBundleCheck(contentsOf: try Self.corpus("MigrateMappingModel.xcdatamodeld"),
                                          options: MigrationOptions(mappingModels: [try MappingModel(contentsOf: try Self.corpus("MigrateMappingModel.xcmappingmodel"))]))
        guard case .migratesByMappingModel(let path) = mapped.steps[0].verdict else { Issue.record("\(mapped.steps[0].verdict)"); return }
        #expect(path.hasSuffix("MigrateMappingModel.xcmappingmodel"))
    }

    @Test func aVersionThatDoesNotLoadIsReportedWithEveryProblemAndItsPairsGoUnchecked() throws {
        let check = try ModelBundleCheck(contentsOf: try Self.brokenBundle())
        #expect(check.versions.map(\.name) == ["Broken", "Broken 2", "Broken 3"])
        #expect(check.versions.map(\.loads) == [true, false, true])
        #expect(check.versions[1].problems.count == 2)
        #expect(check.steps.map(\.verdict.isRefusal) == [true, true])
        guard case .notChecked(let reason) = check.steps[0].verdict else { Issue.record("\(check.steps[0].verdict)"); return }
        #expect(reason == "Broken 2 does not load")
        #expect(check.hasRefusals)
        // A bundle that loads checks the same through XcodeModelBundle.
        let bundle = try XcodeModelBundle(contentsOf: try Self.corpus("MigrateEmptyToMany.xcdatamodeld"))
        let loaded = ModelBundleCheck(bundle: bundle)
        #expect(loaded.steps.map(\.verdict.isRefusal) == [false, false] && loaded.versions.count == 3)
    }

    // MARK: granary model check

    func run(_ arguments: [String]) throws -> ChildProcess.Outcome {
        try ChildProcess.run("granary", ["model", "check"] + arguments)
    }

    @Test func theCommandPrintsVersionsAndPairsAndExitsZeroWhenAllMigrate() throws {
        let result = try run([try Self.corpus("MigrateRequiredAdded.xcdatamodeld").path])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("3 version(s), current MigrateRequiredAdded 3"))
        #expect(result.out.contains("version MigrateRequiredAdded 2: loads"))
        #expect(result.out.contains("MigrateRequiredAdded → MigrateRequiredAdded 2: migrates by inference if the stored objects allow it"))
        #expect(result.out.contains("? attribute Book.isbn made required"))
        #expect(result.out.contains("MigrateRequiredAdded 2 → MigrateRequiredAdded 3: migrates by inference"))
        // Mapping models beside the bundle are found and used.
        let mapped = try run([try Self.corpus("MigrateMappingModel.xcdatamodeld").path])
        #expect(mapped.status == 0, "\(mapped.err)")
        #expect(mapped.out.contains("MigrateMappingModel → MigrateMappingModel 2: migrates by the mapping model"))
    }

    @Test func theCommandExitsOneAndSaysWhyWhenSomethingIsRefused() throws {
        let renamed = try run([try Self.corpus("MigrateUnannouncedRename.xcdatamodeld").path])
        #expect(renamed.status == 1)
        #expect(renamed.out.contains("MigrateUnannouncedRename → MigrateUnannouncedRename 2: refused"))
        #expect(renamed.out.contains("✗ attribute Note.body removed"))
        #expect(renamed.err.contains("granary: 0 version(s) do not load, 1 pair(s) of versions would not migrate"))
        let acknowledged = try run([try Self.corpus("MigrateUnannouncedRename.xcdatamodeld").path, "--acknowledge-removal", "Note.body"])
        #expect(acknowledged.status == 0, "\(acknowledged.out)")

        let broken = try run([try Self.brokenBundle().path])
        #expect(broken.status == 1)
        #expect(broken.out.contains("version Broken 2: does not load (2 problem(s))"))
        #expect(broken.out.contains("Broken → Broken 2: not checked: Broken 2 does not load"))
        #expect(broken.err.contains("1 version(s) do not load, 2 pair(s)"))

        let missing = try run(["/nonexistent/Model.xcdatamodeld"])
        #expect(missing.status == 1 && missing.err.contains("no model at /nonexistent/Model.xcdatamodeld"))
    }
}
