import Foundation
import Testing
@testable import Granary

/// Versioned models: the Tasks fixture (three versions with lightweight-migratable changes, the third
/// current) and bundles written on the fly for ordering and current-version rules.
///
/// Tasks, version by version:
/// - "Tasks": Task (title, priority Integer 16 0…5 default 0, done default NO, created?) ->
///   Category (label) by `category`/`tasks`.
/// - "Tasks 2": Category renamed Project (renamingIdentifier "Category"), `Task.title` renamed `name`
///   (renamingIdentifier "title"), `Task.category` renamed `project` (renamingIdentifier "category");
///   new optional `notes`, new required `status` with default "open"; new entity Tag (unique `name`)
///   with `Task.tag` (to-one) / `Tag.tasks`.
/// - "Tasks 3": `priority` widened to Integer 32, new index `byPriority` (descending), `Task.tag`
///   becomes the to-many `Task.tags` (renamingIdentifier "tag"). Renaming identifiers stay on the
///   renamed elements, as Xcode keeps them.
@Suite struct XcodeModelBundleTests {
    private static let currentVersionPlist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>_XCCurrentVersionName</key>
            <string>%@</string>
        </dict>
        </plist>
        """

    private func writeBundle(versions: [String], current: String?, _ label: String = #function) throws -> URL {
        let bundle = try XcodeFixtures.scratchDirectory(label).appendingPathComponent("M.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        for version in versions {
            let model = XcodeFixtures.model(entity: #"        <attribute name="v\#(version.filter(\.isNumber))" optional="YES" attributeType="String"/>"#)
            try XcodeFixtures.writePackage(model, named: version, in: bundle)
        }
        if let current {
            let plist = Self.currentVersionPlist.replacingOccurrences(of: "%@", with: current)
            try Data(plist.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        }
        return bundle
    }

    @Test func versionsComeOldestFirstWithTheCurrentOneMarked() throws {
        let tasks = try XcodeFixtures.tasks()
        #expect(tasks.versionNames == ["Tasks", "Tasks 2", "Tasks 3"])
        #expect(tasks.versions.map(\.versionIdentifier) == ["Tasks", "Tasks 2", "Tasks 3"])
        #expect(tasks.currentVersionName == "Tasks 3" && tasks.currentVersionIndex == 2)
        #expect(tasks.currentVersion === tasks.versions[2])
        #expect(tasks.versionsThroughCurrent.count == 3)
        #expect(Set(tasks.versions.map(\.versionHash)).count == 3, "each version changes what is stored")
        // The model loader picks the same current version.
        let current = try ManagedObjectModel(contentsOf: XcodeFixtures.url("Tasks.xcdatamodeld"))
        #expect(current.versionIdentifier == "Tasks 3")
        #expect(current.versionHash == tasks.currentVersion.versionHash)
    }

    @Test func eachTasksVersionHoldsItsChanges() throws {
        let tasks = try XcodeFixtures.tasks()
        let (v1, v2, v3) = (tasks.versions[0], tasks.versions[1], tasks.versions[2])
        #expect(v1.entities.map(\.name) == ["Category", "Task"])
        #expect(v2.entities.map(\.name) == ["Project", "Tag", "Task"])
        #expect(v1.entity(named: "Task")?.attributesByName["priority"]?.type == .integer16)
        #expect(v3.entity(named: "Task")?.attributesByName["priority"]?.type == .integer32)
        #expect(v2.entity(named: "Task")?.attributesByName["notes"]?.isOptional == true)
        #expect(v2.entity(named: "Task")?.attributesByName["status"]?.defaultValue as? String == "open")
        #expect(v2.entity(named: "Task")?.relationshipsByName["tag"]?.isToMany == false)
        let tags = try #require(v3.entity(named: "Task")?.relationshipsByName["tags"])
        #expect(tags.isToMany && tags.renamingIdentifier == "tag" && tags.inverseName == "tasks")
        #expect(v3.inverseRelationship(of: tags)?.isToMany == true)
        #expect(StorageMapping(model: v2).entity(named: "Task")?.indexNames == [])
        #expect(StorageMapping(model: v3).entity(named: "Task")?.indexNames == ["Task_byPriority"])
    }

    @Test func versionNumbersOrderAsNumbers() throws {
        let bundle = try XcodeModelBundle(
            contentsOf: writeBundle(versions: ["M 10", "M 2", "M", "M 9"], current: "M 2.xcdatamodel"))
        #expect(bundle.versionNames == ["M", "M 2", "M 9", "M 10"])
        #expect(bundle.currentVersionName == "M 2")
        #expect(bundle.versionsThroughCurrent.map(\.versionIdentifier) == ["M", "M 2"])
        #expect(bundle.version(named: "M 10")?.entity(named: "Thing")?.attributesByName["v10"] != nil)
        #expect(bundle.version(named: "M 3") == nil)

        #expect(XcodeModelBundle.naturalOrder("Model", "Model 2"))
        #expect(XcodeModelBundle.naturalOrder("Model 9", "Model 10"))
        #expect(!XcodeModelBundle.naturalOrder("Model 10", "Model 9"))
        #expect(XcodeModelBundle.naturalOrder("Model 2", "Model 2 copy"))
        #expect(XcodeModelBundle.naturalOrder("v1.9", "v1.10"))
        #expect(!XcodeModelBundle.naturalOrder("Model 2", "Model 2"))
        #expect(XcodeModelBundle.naturalOrder("M 99999999999999999999998", "M 99999999999999999999999"))
    }

    @Test func aSingleVersionNeedsNoCurrentVersionFile() throws {
        let bundle = try XcodeModelBundle(contentsOf: writeBundle(versions: ["Only"], current: nil))
        #expect(bundle.versionNames == ["Only"] && bundle.currentVersionName == "Only")
        // A bare package counts as a bundle of one.
        XcodeFixtures.registerLibraryTransformables()
        let package = try XcodeModelBundle(contentsOf: XcodeFixtures.url("Library.xcdatamodel"), classes: [:])
        #expect(package.versionNames == ["Library"] && package.currentVersionIndex == 0)
    }

    @Test func theCurrentVersionMustBeKnown() throws {
        let several = try writeBundle(versions: ["M", "M 2"], current: nil)
        #expect {
            try XcodeModelBundle(contentsOf: several)
        } throws: { error in
            guard case .noCurrentVersion(let location, let reason) = error as? XcodeModelError else { return false }
            return location.path == several.path && reason.contains("M, M 2") && reason.contains(".xccurrentversion")
        }
        #expect(throws: XcodeModelError.self) { try ManagedObjectModel(contentsOf: several) }

        let missing = try writeBundle(versions: ["M", "M 2"], current: "M 3.xcdatamodel")
        #expect {
            try ManagedObjectModel(contentsOf: missing)
        } throws: { error in
            guard case .noCurrentVersion(let location, let reason) = error as? XcodeModelError else { return false }
            return location.path.hasSuffix(".xccurrentversion") && reason.contains("M 3.xcdatamodel")
        }

        let empty = try writeBundle(versions: [], current: nil)
        #expect {
            try XcodeModelBundle(contentsOf: empty)
        } throws: { error in
            guard case .noCurrentVersion(_, let reason) = error as? XcodeModelError else { return false }
            return reason.contains("no .xcdatamodel")
        }
    }

    @Test func aBrokenVersionFailsTheBundleAndNamesItsFile() throws {
        let bundle = try writeBundle(versions: ["M", "M 2"], current: "M 2.xcdatamodel")
        let broken = XcodeFixtures.model(entity: #"        <attribute name="size" attributeType="Integer 8"/>"#)
        try XcodeFixtures.writePackage(broken, named: "M", in: bundle)
        // The current version alone still loads.
        #expect(try ManagedObjectModel(contentsOf: bundle).versionIdentifier == "M 2")
        #expect {
            try XcodeModelBundle(contentsOf: bundle)
        } throws: { error in
            guard let error = error as? XcodeModelError else { return false }
            return error.location.path.hasSuffix("M.xcdatamodel/contents") && error.line == 4
        }
    }

    @Test func classesMustBindAnEntityInSomeVersion() throws {
        let tasks = try XcodeFixtures.url("Tasks.xcdatamodeld")
        // Category exists only in the first version: binding it is fine for the bundle…
        let bundle = try XcodeModelBundle(contentsOf: tasks, classes: ["Category": LibraryAuthor.self])
        #expect(bundle.versions[0].entity(named: "Category")?.objectType == LibraryAuthor.self)
        #expect(bundle.currentVersion.entity(for: LibraryAuthor.self) == nil)
        // …but not for the current version alone, and a typo binds nothing anywhere.
        #expect(throws: XcodeModelError.self) {
            try ManagedObjectModel(contentsOf: tasks, classes: ["Category": LibraryAuthor.self])
        }
        #expect {
            try XcodeModelBundle(contentsOf: tasks, classes: ["Tsk": LibraryAuthor.self])
        } throws: { error in
            guard case .unknownClass(_, let name) = error as? XcodeModelError else { return false }
            return name == "Tsk"
        }
    }
}
