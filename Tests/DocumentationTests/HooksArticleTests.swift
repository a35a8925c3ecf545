import Granary
import Testing

// snippet: contexts-hooks
final class Entry: ManagedObject {
    @Managed var uid: UUID?
    @Managed var text: String
    @Managed var modified: Date?

    override func awakeFromInsert() {
        super.awakeFromInsert()
        uid = UUID()                                  // once in the object's life
    }

    override func willSave() {
        super.willSave()
        // Saved with the rest; compared first, since setting it calls willSave() again.
        let stamped = modified != nil && changedValues().keys.contains("modified")
        if !isDeleted && hasPersistentChangedValues && !stamped {
            modified = Date()
        }
    }

    override func validateForUpdate() throws {
        try super.validateForUpdate()                 // the model's checks
        if text.isEmpty {
            throw ValidationError(entityName: "Entry", propertyName: "text",
                                  reason: .custom(rule: "notEmptied", message: "an entry keeps its text"))
        }
    }
}
// end-snippet

/// The hooks section of the article "Concurrency and contexts".
@Suite struct HooksArticleTests {
    @Test func hooksSetIdentifiersStampSavesAndAddRules() throws {
        let model = try ManagedObjectModel {
            Entity("Entry", as: Entry.self) {
                Attribute("uid", .uuid, optional: true)
                Attribute("text", .string)
                Attribute("modified", .date, optional: true)
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let entry = Entry(context: context)
            entry.text = "Hello"
            #expect(entry.uid != nil)
            try context.save()
            let stamped = try #require(entry.modified)
            entry.text = "Hello"                          // the saved value: nothing to save
            try context.save()
            #expect(entry.modified == stamped)
            entry.text = ""
            #expect(throws: ContextError.self) { try context.save() }
        }
    }
}
