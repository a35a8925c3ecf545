import Foundation
import Testing
@testable import Granary

/// A store written with the first version of the Tasks fixture (an Xcode `.xcdatamodeld` with three
/// versions) migrated to the current one, as an app ported from Apple platforms would.
@Suite struct MigrationXcodeModelTests {
    @Test func aStoreFollowsTheBundlesVersionsToTheCurrentOne() throws {
        let bundle = try XcodeModelBundle(contentsOf: try XcodeFixtures.url("Tasks.xcdatamodeld"))
        #expect(bundle.versionNames == ["Tasks", "Tasks 2", "Tasks 3"] && bundle.currentVersionName == "Tasks 3")
        let store = MigrationHarness()
        try store.write(bundle.versions[0]) { context in
            let home = try context.insert("Category", ["label": "Home"])
            try context.insert("Task", ["title": "Water plants", "priority": Int16(2), "category": home])
            try context.insert("Task", ["title": "Pay rent", "priority": Int16(5), "done": true, "category": home])
            try context.insert("Task", ["title": "Read", "priority": Int16(0)])
        }
        var options = PersistentStore.Options()
        options.migration.versions = bundle.versionsThroughCurrent
        try store.open(bundle.currentVersion, options: options) { persistentStore, context throws in
            let report = try #require(persistentStore.migrationReport)
            #expect(report.path == ["Tasks", "Tasks 2", "Tasks 3"])
            #expect(report.changes[0].map(\.description).contains("entity Category renamed to Project"))
            #expect(report.changes[0].map(\.description).contains("attribute Task.title renamed to name"))
            #expect(report.changes[1].map(\.description).contains("relationship Task.tag renamed to tags"))
            #expect(report.changes[1].map(\.description).contains("relationship Task.tags changed from to-one to to-many"))

            let tasks = try context.all("Task", sortedBy: "name")
            #expect(try tasks.map { try $0.get("name", as: String.self) } == ["Pay rent", "Read", "Water plants"])
            #expect(try tasks.map { try $0.get("priority", as: Int32.self) } == [5, 0, 2])
            #expect(try tasks.map { try $0.get("status", as: String.self) } == ["open", "open", "open"])
            #expect(try tasks.map { try $0.get("done", as: Bool.self) } == [true, false, false])
            let home = try #require(try context.all("Project", sortedBy: "label").first)
            #expect(try home.get("label", as: String.self) == "Home")
            #expect(try tasks[0].get("project", as: ManagedObject.self) === home)
            #expect(try tasks[1].get("project", as: ManagedObject.self) == nil)
            #expect(try home.get("tasks", as: Set<ManagedObject>.self)?.count == 2)

            // The new index answers priority queries.
            var request = FetchRequest<ManagedObject>(entityName: "Task")
            request.filter = try PredicateParser.parse("priority >= 2")
            #expect(try context.explain(request).explain.contains("byPriority"))
            #expect(try context.count(for: request) == 2)
            // Tags (new in version 2, to-many in version 3) work.
            let urgent = try context.insert("Tag", ["name": "urgent"])
            try tasks[0].setValue(Set([urgent]), forKey: "tags")
            try context.save()
            #expect(try urgent.get("tasks", as: Set<ManagedObject>.self) == [tasks[0]])
        }
    }

    @Test func aVersionTwoTagBecomesAOneElementSetOfTags() throws {
        let bundle = try XcodeModelBundle(contentsOf: try XcodeFixtures.url("Tasks.xcdatamodeld"))
        let v2 = try #require(bundle.version(named: "Tasks 2"))
        let store = MigrationHarness()
        try store.write(v2) { context in
            let tag = try context.insert("Tag", ["name": "work"])
            try context.insert("Task", ["name": "Report", "status": "doing", "tag": tag])
        }
        // No versions given: the store's own record of version 2 is the source.
        try store.open(bundle.currentVersion) { persistentStore, context throws in
            #expect(try #require(persistentStore.migrationReport).path == ["Tasks 2", "Tasks 3"])
            let task = try #require(try context.all("Task", sortedBy: "name").first)
            #expect(try task.get("status", as: String.self) == "doing")
            let tags = try #require(try task.get("tags", as: Set<ManagedObject>.self))
            #expect(try tags.map { try $0.get("name", as: String.self) } == ["work"])
        }
    }
}
