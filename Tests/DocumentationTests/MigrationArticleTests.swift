import Foundation
import Granary
import Testing

/// The code of the article "Migrating a store".
@Suite struct MigrationArticleTests {
    /// A store written by the first version of the Tasks fixture: a category and a task in it.
    func writeFirstVersionStore(at storeURL: URL, bundle: XcodeModelBundle) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: bundle.versions[0])
        let store = try coordinator.addPersistentStore(type: .durable, at: storeURL)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let category = ManagedObject(entity: bundle.versions[0].entity(named: "Category")!, insertInto: context)
            try category.setValue("Home", forKey: "label")
            let task = ManagedObject(entity: bundle.versions[0].entity(named: "Task")!, insertInto: context)
            try task.setValue("Water the plants", forKey: "title")
            try task.setValue(category, forKey: "category")
            try context.save()
        }
        try coordinator.remove(store)
    }

    @Test func aStoreFollowsItsModelThroughEveryVersion() throws {
        let storeURL = scratchStore("Tasks")
        defer { removeScratch(storeURL) }
        let modelURL = tasksBundleURL
        try writeFirstVersionStore(at: storeURL, bundle: try XcodeModelBundle(contentsOf: modelURL))

        // snippet: migration-plan
        let bundle = try XcodeModelBundle(contentsOf: modelURL)
        let plan = try StoreMigrator(model: bundle.currentVersion).plan(forStoreAt: storeURL)
        for change in plan.changes.joined() { print(change) }   // e.g. "entity Category renamed to Project"
        // end-snippet
        #expect(plan.isNeeded)
        #expect(plan.changes.joined().contains { $0.kind == .entityRenamed(from: "Category") && $0.entity == "Project" })

        do {  // `print` records here, and is Swift's own below
            let printed = Printed()
            let print: @Sendable (String) -> Void = { printed.append($0) }
            // snippet: migration-metadata
            let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .durable, at: storeURL)
            if !bundle.currentVersion.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
                print("the store needs migrating")   // back it up, tell the user, then add it
            }
            // end-snippet
            #expect(printed.lines == ["the store needs migrating"])
            #expect(bundle.versions[0].isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        }

        // snippet: migration-automatic
        let coordinator = PersistentStoreCoordinator(managedObjectModel: bundle.currentVersion)
        var options = PersistentStore.Options()
        options.migration.versions = bundle.versionsThroughCurrent   // oldest first: migrate step by step
        options.migration.progress = { print("\($0.entity ?? "") \($0.rowsCompleted)/\($0.rowCount)") }
        let store = try coordinator.addPersistentStore(type: .durable, at: storeURL, options: options)
        print(store.migrationReport?.path ?? [])                     // ["Tasks", "Tasks 2", "Tasks 3"]
        // end-snippet
        #expect(store.migrationReport?.path == ["Tasks", "Tasks 2", "Tasks 3"])
        #expect(bundle.currentVersion.isConfiguration(withName: nil, compatibleWithStoreMetadata: coordinator.metadata(for: store)))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let (name, project) = try context.performAndWait {
            let task = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Task")).first)
            return (try task.value(forKey: "name") as? String,
                    try (task.value(forKey: "project") as? ManagedObject)?.value(forKey: "label") as? String)
        }
        #expect(name == "Water the plants")
        #expect(project == "Home")
    }

    @Test func aCustomStepDoesWhatInferenceCannot() throws {
        let storeURL = scratchStore("People")
        defer { removeScratch(storeURL) }
        let v1 = try ManagedObjectModel(version: "1") {
            Entity("Person") {
                Attribute("fullName", .string)
                Attribute("age", .string)
            }
            Entity("Draft") { Attribute("text", .string) }
        }
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Person") {
                Attribute("first", .string, optional: true)
                Attribute("age", .integer64, optional: true)
            }
        }
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: v1)
            let store = try coordinator.addPersistentStore(type: .durable, at: storeURL)
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try context.performAndWait {
                let ada = ManagedObject(entity: v1.entity(named: "Person")!, insertInto: context)
                try ada.setValue("Ada Lovelace", forKey: "fullName")
                try ada.setValue("36", forKey: "age")
                try ManagedObject(entity: v1.entity(named: "Draft")!, insertInto: context).setValue("…", forKey: "text")
                try context.save()
            }
            try coordinator.remove(store)
        }
        var options = PersistentStore.Options()
        options.migration.versions = [v1]
        // snippet: migration-custom-step
        options.migration.steps = [MigrationStep(from: v1, to: v2) {
            EntityMigration.transform("Person") { old, new in
                let parts = (old["fullName"] as? String ?? "").split(separator: " ")
                new["first"] = parts.first.map(String.init)
                new["age"] = Int64(old["age"] as? String ?? "")       // a type change
            }
            EntityMigration.remove("Draft")                              // or new.discard() per object
        }]
        // end-snippet
        let coordinator = PersistentStoreCoordinator(managedObjectModel: v2)
        try coordinator.addPersistentStore(type: .durable, at: storeURL, options: options)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let (first, age) = try context.performAndWait {
            let person = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Person")).first)
            return (try person.value(forKey: "first") as? String, try person.value(forKey: "age") as? Int64)
        }
        #expect(first == "Ada")
        #expect(age == 36)
    }

    @Test func aChangeInferenceCannotDoLeavesTheStoreAsItWas() throws {
        let storeURL = scratchStore("People")
        defer { removeScratch(storeURL) }
        let v1 = try ManagedObjectModel(version: "1") { Entity("Person") { Attribute("age", .string) } }
        let v2 = try ManagedObjectModel(version: "2") { Entity("Person") { Attribute("age", .integer64) } }
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: v1)
            try coordinator.remove(try coordinator.addPersistentStore(type: .durable, at: storeURL))
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: v2)
        // snippet: migration-refused
        do {
            try coordinator.addPersistentStore(type: .durable, at: storeURL)
        } catch MigrationError.cannotInferMapping(let from, let to, let problems) {
            print("\(from) → \(to) needs a custom step: \(problems)")   // the store is untouched
        }
        // end-snippet
        #expect(coordinator.persistentStores.isEmpty)
    }

    @Test func aMappingModelAndItsPoliciesAreGivenInTheOptions() throws {
        let mappingURL = tasksBundleURL.deletingLastPathComponent().appendingPathComponent("Corpus/MigrateMappingModel.xcmappingmodel")
        var options = PersistentStore.Options()
        // snippet: migration-mapping-model
        options.migration.mappingModels = [try MappingModel(contentsOf: mappingURL)]
        options.migration.migrationPolicies["MyApp.AddressPolicy"] = EntityMigrationPolicy(functions: [
            "normalized:": { arguments in (arguments.first as? String)?.capitalized },
        ])
        // end-snippet
        #expect(options.migration.mappingModels.first?.entityMappings.map(\.name) == ["PersonToPerson", "PersonToAddress"])
        #expect(try options.migration.migrationPolicies["MyApp.AddressPolicy"]?.functions["normalized:"]?(["london"]) as? String == "London")
    }

    @Test func aModelIsCheckedWithoutAStore() throws {
        let modelURL = tasksBundleURL
        let printed = Printed()
        let print: @Sendable (String) -> Void = { printed.append($0) }
        // snippet: migration-model-check
        let check = try ModelBundleCheck(contentsOf: modelURL, options: MigrationOptions(mappingModels: []))
        for step in check.steps { print("\(step.from) → \(step.to): \(step.verdict)") }
        // end-snippet
        #expect(printed.lines == ["Tasks → Tasks 2: migrates by inference", "Tasks 2 → Tasks 3: migrates by inference"])
    }
}
