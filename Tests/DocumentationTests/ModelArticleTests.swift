import Foundation
import Granary
import Testing

/// The class the Xcode fixture's `Task` entity is bound to (a class named `Task` would hide Swift's).
final class TodoTask: ManagedObject {
    @Managed var name: String
    @Managed var priority: Int
    @Managed var done: Bool
}

/// The Tasks fixture of GranaryTests: three versions of one model, the third current.
let tasksBundleURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("GranaryTests/Fixtures/Tasks.xcdatamodeld")

/// The code of the article "Defining a model".
@Suite struct ModelArticleTests {
    func declaredModel() throws -> ManagedObjectModel {
        // snippet: model-dsl
        struct Address: Codable, Sendable {
            var street: String
            var city: String
        }

        let model = try ManagedObjectModel(version: "2") {
            Entity("Person", abstract: true) {
                Attribute("name", .string, validation: [.length(min: 1, max: 200)])
                Attribute("email", .string, optional: true, validation: [.regex(#"[^@]+@[^@]+"#)])
                Attribute("address", .transformable(Address.self), optional: true)
                Attribute("note", .string, optional: true, transient: true)         // never stored
                Unique("email")
            }
            Entity("Employee", parent: "Person") {
                Attribute("level", .integer16, defaultValue: 1, validation: [.range(min: 1, max: 9)])
                Attribute("salary", .decimal, defaultValue: Decimal(0))
                Relationship("manager", to: "Employee", inverse: "reports")
                Relationship("reports", toMany: "Employee", inverse: "manager")
                Relationship("badges", toMany: "Badge", ordered: true, inverse: "holder", deleteRule: .cascade, maxCount: 10)
                Index("byLevel", .ascending("level"), .descending("salary"))
            }
            Entity("Badge") {
                Attribute("label", .string)
                Relationship("holder", to: "Employee", inverse: "badges", optional: false)
            }
        }
        // end-snippet
        return model
    }

    @Test func theDeclaredModelBuildsAndItsRulesHold() throws {
        let model = try declaredModel()
        #expect(model.entity(named: "Employee")?.superentity?.name == "Person")
        #expect(model.entity(named: "Person")?.subentities.map(\.name) == ["Employee"])
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            // snippet: model-run-time-values
            let ada = ManagedObject(entity: model.entity(named: "Employee")!, insertInto: context)
            try ada.setValue("Ada", forKey: "name")
            try ada.setValue(3, forKey: "level")
            let badge = ManagedObject(entity: model.entity(named: "Badge")!, insertInto: context)
            try badge.setValue("Founder", forKey: "label")
            try badge.setValue(ada, forKey: "holder")                // ada's badges now hold it
            try context.save()
            // end-snippet
            #expect(try (ada.value(forKey: "badges") as? [ManagedObject])?.count == 1)

            try ada.setValue(12, forKey: "level")
            #expect(throws: ContextError.self) { try context.save() }   // out of the range rule
            context.rollback()
        }
    }

    @Test func aModelBuiltFromDescriptions() throws {
        // snippet: model-descriptions
        let note = EntityDescription(name: "Note", properties: [
            .attribute(AttributeDescription(name: "text", type: .string, isOptional: false)),
            .attribute(AttributeDescription(name: "pinned", type: .boolean, defaultValue: false)),
        ])
        let notes = try ManagedObjectModel(entities: [note], versionIdentifier: "1")
        // end-snippet
        #expect(notes.entity(named: "Note")?.attributes.map(\.name) == ["text", "pinned"])
    }

    @Test func transformablesStorePropertyListsAndNamedTransformersValues() throws {
        // snippet: model-transformers
        let model = try ManagedObjectModel {
            Entity("Note") {
                Attribute("tags", .secureUnarchiveFromData, optional: true)   // no custom class, as in Xcode
                Attribute("tint", .transformable(valueTypeName: "ArticleColorTransformer"), optional: true)
            }
        }
        // Looked up when a value is stored or read: register before or after loading the model.
        AttributeType.registerTransformer(named: "ArticleColorTransformer", valueType: [UInt8].self,
                                          transform: { Data($0) }, reverseTransform: { Array($0) })
        // end-snippet
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let note = EntityDescription.insertNewObject(forEntityName: "Note", into: context)
            try note.setValue(["a", "b"], forKey: "tags")
            try note.setValue([UInt8]([1, 2, 3]), forKey: "tint")
            try context.save()
            context.reset()
            let fetched = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")).first)
            #expect(try fetched.value(forKey: "tags") as? [String] == ["a", "b"])
            #expect(try fetched.value(forKey: "tint") as? [UInt8] == [1, 2, 3])
        }
    }

    @Test func anXcodeModelLoads() throws {
        let url = tasksBundleURL
        // snippet: model-xcode
        let model = try ManagedObjectModel(contentsOf: url, classes: ["Task": TodoTask.self])  // the current version
        let bundle = try XcodeModelBundle(contentsOf: url)    // every version, oldest first, for migrations
        let names = bundle.versionNames                       // ["Tasks", "Tasks 2", "Tasks 3"]
        let current = bundle.currentVersionName               // "Tasks 3", as .xccurrentversion says
        // end-snippet
        #expect(names == ["Tasks", "Tasks 2", "Tasks 3"])
        #expect(current == "Tasks 3")
        #expect(model.versionIdentifier == "Tasks 3")
        #expect(model.entity(named: "Task")?.classIdentifier == ObjectIdentifier(TodoTask.self))
    }
}
