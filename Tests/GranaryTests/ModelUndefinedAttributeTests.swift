import Foundation
import Testing
@testable import Granary

/// `AttributeType.undefined`: Xcode's Undefined type, allowed on transient attributes only. Such an
/// attribute holds any value in memory and is never stored.
@Suite struct ModelUndefinedAttributeTests {
    /// Not `Sendable`, not `Equatable`: the kind of value apps keep in an Undefined transient attribute.
    final class Selection {
        var range = 0..<4
    }

    private func model(transient: Bool = true, optional: Bool = true) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Document", properties: [
                .attribute(AttributeDescription(name: "title", type: .string, isOptional: false)),
                .attribute(AttributeDescription(name: "selection", type: .undefined, isOptional: optional, isTransient: transient)),
            ])
        ])
    }

    @Test func aTransientUndefinedAttributeHoldsAnyValueInMemory() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(type: .durable, at: scratchURL())
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let selection = Selection()
        let id = try context.performAndWait {
            let document = try context.insert("Document", ["title": "Notes"])
            try document.setValue(selection, forKey: "selection")
            #expect(try document.value(forKey: "selection") as? Selection === selection)
            try document.setValue([1, 2, 3], forKey: "selection")
            #expect(try document.value(forKey: "selection") as? [Int] == [1, 2, 3])
            try document.setValue(selection, forKey: "selection")
            try context.save()
            // Saving keeps the in-memory value; it was never converted.
            #expect(try document.value(forKey: "selection") as? Selection === selection)
            try document.setValue(nil, forKey: "selection")
            #expect(try document.value(forKey: "selection") == nil)
            return document.objectID
        }
        // Never stored: another context reads the object without it.
        try other.performAndWait {
            let document = try other.existingObject(with: id)
            #expect(try document.value(forKey: "title") as? String == "Notes")
            #expect(try document.value(forKey: "selection") == nil)
        }
    }

    @Test func anUndefinedAttributeHasNoColumn() throws {
        let mapping = StorageMapping(model: try model())
        let table = try #require(mapping.tables.first)
        #expect(!table.schema.columns.map(\.name).contains("selection"))
        #expect(table.schema.columns.map(\.name).contains("title"))
    }

    @Test func itCountsInTheVersionHashAsATransientAttributeDoesInCoreData() throws {
        // Core Data's property hash covers name, type and the transient flag: adding or removing a transient
        // changes the entity's hash, and a lightweight migration maps it away.
        let without = try ManagedObjectModel(entities: [
            EntityDescription(name: "Document", properties: [
                .attribute(AttributeDescription(name: "title", type: .string, isOptional: false))
            ])
        ])
        #expect(try model().versionHash != without.versionHash)
        #expect(try model().versionHash == model().versionHash)
    }

    @Test func aRequiredUndefinedAttributeMustHaveAValueToSave() throws {
        let attribute = AttributeDescription(name: "selection", type: .undefined, isOptional: false, isTransient: true)
        #expect(attribute.validate(Selection()).isEmpty)
        #expect(attribute.validate(nil).map(\.reason) == [.missing])
        #expect(AttributeDescription(name: "selection", type: .undefined, isTransient: true).validate(nil).isEmpty)
    }

    @Test func aStoredUndefinedAttributeIsRefused() throws {
        #expect {
            try model(transient: false)
        } throws: { error in
            guard case .undefinedTypeNotTransient(let entity, let attribute) = error as? ModelError else { return false }
            return entity == "Document" && attribute == "selection"
                && String(describing: error).contains("only a transient attribute")
        }
        // From an Xcode file: the attribute with no type that is not transient is refused by name.
        let error = try #require(try XcodeFixtures.error(loading: XcodeFixtures.model(entity: """
                    <attribute name="title" attributeType="String"/>
                    <attribute name="cache" optional="YES"/>
            """)))
        guard case .unsupported(let location, let feature, let reason) = error else {
            Issue.record("expected unsupported, got \(error)")
            return
        }
        #expect(location.line == 5 && location.name == "cache")
        #expect(feature == "attribute type Undefined on a stored attribute" && reason.contains("transient"))
    }

    @Test func theCorpusBundleLoadsUndefinedTransients() throws {
        let bundle = try XcodeModelBundle(contentsOf: XcodeCorpus.bundleURL("LoaderUndefinedTransient"))
        let cache = try #require(bundle.versions[0].entity(named: "Document")?.attributesByName["cache"])
        #expect(cache.type == .undefined && cache.isTransient && cache.isOptional)
        #expect(bundle.versions[1].entity(named: "Document")?.attributesByName["selection"]?.type == .undefined)
        // A stored model records the type by name, so a store written with it reopens.
        #expect(AttributeType(storedName: AttributeType.undefined.description) == .undefined)
    }
}
