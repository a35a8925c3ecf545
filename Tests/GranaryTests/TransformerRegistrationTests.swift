import Foundation
import Testing

@testable import Granary

/// A stand-in for a platform value (a color) that an app codes with its own transformer.
struct TestColor: Sendable, Equatable {
    var red: UInt8, green: UInt8, blue: UInt8

    var data: Data { Data([red, green, blue]) }

    init(red: UInt8, green: UInt8, blue: UInt8) { (self.red, self.green, self.blue) = (red, green, blue) }

    init(data: Data) throws {
        guard data.count == 3 else { throw CocoaError(.coderReadCorrupt) }
        let bytes = Array(data)
        (red, green, blue) = (bytes[0], bytes[1], bytes[2])
    }
}

/// A Foundation-style transformer, as an app ports it: `#rrggbb` strings to three bytes and back.
final class HexColorTransformer: ValueTransformer, @unchecked Sendable {
    override func transformedValue(_ value: Any?) -> Any? {
        guard let hex = value as? String, hex.count == 7, hex.hasPrefix("#"), let number = UInt32(hex.dropFirst(), radix: 16) else { return nil }
        return Data([UInt8(number >> 16 & 0xFF), UInt8(number >> 8 & 0xFF), UInt8(number & 0xFF)])
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data, data.count == 3 else { return nil }
        return "#" + data.map { String(format: "%02x", $0) }.joined()
    }
}

/// Transformables that name an app's transformer or a platform class: the model loads without any
/// registration, values need one (looked up when used, so registering after loading works), and a
/// stored value that cannot be read is a typed error naming entity, attribute and object.
@Suite struct TransformerRegistrationTests {
    /// A store for `model` at `url`, with a context on it.
    static func open(_ model: ManagedObjectModel, at url: URL) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: url)
        return ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    }

    /// Closes the stores under `context`, so that the file can be opened again.
    static func close(_ context: ManagedObjectContext) throws {
        guard let coordinator = context.persistentStoreCoordinator else { return }
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    static func load(_ attribute: String) throws -> ManagedObjectModel {
        let directory = try XcodeFixtures.scratchDirectory()
        let contents = XcodeFixtures.model(entity: "        <attribute name=\"name\" attributeType=\"String\" defaultValueString=\"\"/>\n        " + attribute)
        return try ManagedObjectModel(contentsOf: XcodeFixtures.writePackage(contents, named: "Model", in: directory))
    }

    static func unique(_ prefix: String) -> String { "\(prefix)\(UUID().uuidString.prefix(8))" }

    @Test func aNamedTransformerRegisteredAfterLoadingTheModelCodesItsValues() throws {
        let name = Self.unique("MyColorTransformer")
        let model = try Self.load(#"<attribute name="color" optional="YES" attributeType="Transformable" valueTransformerName="\#(name)" customClassName="UIColor"/>"#)
        #expect(model.entity(named: "Thing")?.attributesByName["color"]?.type == .transformable(valueTypeName: name))
        let url = scratchURL()
        let context = try Self.open(model, at: url)
        try context.performAndWait {
            let thing = try EntityDescription.insertNewObject(forEntityName: "Thing", into: context)
            // Nil needs no transformer; a value does.
            try thing.setValue(nil, forKey: "color")
            #expect {
                try thing.setValue(TestColor(red: 1, green: 2, blue: 3), forKey: "color")
            } throws: { error in
                let text = "\(error)"
                return text.contains("Thing.color") && text.contains(name) && text.contains("registerTransformer")
            }
            AttributeType.registerTransformer(named: name, valueType: TestColor.self, transform: { $0.data }, reverseTransform: { try TestColor(data: $0) })
            try thing.setValue(TestColor(red: 1, green: 2, blue: 3), forKey: "color")
            // A value of another type is a mismatch, not a crash.
            #expect(throws: ContextError.self) { try thing.setValue("red", forKey: "color") }
            try context.save()
        }
        try TransformerRegistrationTests.close(context)
        let reopened = try Self.open(model, at: url)
        try reopened.performAndWait {
            let thing = try #require(try reopened.fetch(FetchRequest<ManagedObject>(entityName: "Thing")).first)
            #expect(try thing.value(forKey: "color") as? TestColor == TestColor(red: 1, green: 2, blue: 3))
        }
    }

    @Test func aValueTransformerRegisteredByNameSatisfiesTheModelsTransformerName() throws {
        let name = Self.unique("HexColorTransformer")
        let model = try Self.load(#"<attribute name="color" optional="YES" attributeType="Transformable" valueTransformerName="\#(name)"/>"#)
        ValueTransformer.setValueTransformer(HexColorTransformer(), forName: NSValueTransformerName(name))
        #expect(ValueTransformer.valueTransformerNames().contains(NSValueTransformerName(name)))
        let url = scratchURL()
        let context = try Self.open(model, at: url)
        try context.performAndWait {
            let thing = try EntityDescription.insertNewObject(forEntityName: "Thing", into: context)
            try thing.setValue("#0a0b0c", forKey: "color")
            // The transformer refuses what it cannot transform: a typed error, not a crash.
            #expect { try thing.setValue("blue", forKey: "color") } throws: { "\($0)".contains("transformed a value to nil") }
            try context.save()
        }
        try TransformerRegistrationTests.close(context)
        let reader1 = try Self.open(model, at: url)
        try reader1.performAndWait {
            let thing = try #require(try reader1.fetch(FetchRequest<ManagedObject>(entityName: "Thing")).first)
            #expect(try thing.value(forKey: "color") as? String == "#0a0b0c")
        }
        // Without its transformer the stored value cannot be read: the error names entity, attribute and object.
        ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(name))
        try TransformerRegistrationTests.close(reader1)
        let context2 = try Self.open(model, at: url)
        _ = context2.performAndWait {
            #expect {
                _ = try context2.fetch(FetchRequest<ManagedObject>(entityName: "Thing")).map { try $0.value(forKey: "color") }
            } throws: { error in
                guard case .unreadableValue(let entity, let attribute, let object, let reason) = error as? ContextError else { return false }
                return entity == "Thing" && attribute == "color" && object.entityName == "Thing" && reason.contains(name)
                    && "\(error)".contains(object.description)
            }
        }
    }

    @Test func platformClassesLoadAndNeedATransformerOnlyForValues() throws {
        let model = try Self.load("""
            <attribute name="record" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="CKRecordID"/>
                    <attribute name="tint" optional="YES" attributeType="Transformable" customClassName="UIColor"/>
                    <attribute name="place" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="CLLocation"/>
            """)
        let attributes = try #require(model.entity(named: "Thing")?.attributesByName)
        #expect(attributes["record"]?.type == .transformable(valueTypeName: "CKRecordID"))
        #expect(attributes["tint"]?.type == .transformable(valueTypeName: "UIColor"))
        let url = scratchURL()
        let context = try Self.open(model, at: url)
        try context.performAndWait {
            let thing = try EntityDescription.insertNewObject(forEntityName: "Thing", into: context)
            try thing.setValue("a", forKey: "name")
            for (attribute, className) in [("tint", "UIColor"), ("place", "CLLocation")] {
                #expect {
                    try thing.setValue(TestColor(red: 0, green: 0, blue: 0), forKey: attribute)
                } throws: { error in
                    guard case .wrongValueType(let entity, let key, _, let reason) = error as? ContextError else { return false }
                    return entity == "Thing" && key == attribute && reason.contains("'\(className)'") && reason.contains("Thing.\(attribute)")
                }
            }
            // Objects whose platform-class values are nil save and load without any transformer.
            try context.save()
            AttributeType.registerTransformer(named: "CKRecordID", valueType: String.self, transform: { Data($0.utf8) },
                                              reverseTransform: { String(decoding: $0, as: UTF8.self) })
            try thing.setValue("record-1", forKey: "record")
            try context.save()
        }
        try TransformerRegistrationTests.close(context)
        let reader2 = try Self.open(model, at: url)
        try reader2.performAndWait {
            let thing = try #require(try reader2.fetch(FetchRequest<ManagedObject>(entityName: "Thing")).first)
            #expect(try thing.value(forKey: "record") as? String == "record-1")
            #expect(try thing.value(forKey: "tint") == nil)
            // A stored platform value whose transformer is gone: reading it names entity, attribute, object, class.
            ValueTransformer.setValueTransformer(ValueTransformer(), forName: NSValueTransformerName("CLLocation"))
            try thing.setValue(Data([1, 2]), forKey: "place")
            try reader2.save()
            ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName("CLLocation"))
        }
        try TransformerRegistrationTests.close(reader2)
        let reader3 = try Self.open(model, at: url)
        _ = reader3.performAndWait {
            #expect {
                _ = try reader3.fetch(FetchRequest<ManagedObject>(entityName: "Thing")).map { try $0.value(forKey: "place") }
            } throws: { error in
                guard case .unreadableValue("Thing", "place", let object, let reason) = error as? ContextError else { return false }
                return object.entityName == "Thing" && reason.contains("'CLLocation'")
            }
        }
    }

    /// Bytes that are not a keyed archive, or an archive of a class the default transformer does not allow,
    /// stored in an attribute read with the keyed archive: reading the object throws, naming it.
    @Test func storedValuesThatCannotBeDecodedAreTypedErrors() throws {
        // A property-list spelling no other test uses, so a raw transformer can write bytes under it and go.
        let typeName = "[[Data]]"
        let model = try ManagedObjectModel {
            Entity("Box") {
                Attribute("label", .string)
                Attribute("content", .transformable(valueTypeName: typeName), optional: true)
            }
        }
        let colorArchive = KeyedArchiveTests.archive(objects: [
            .string("$null"), .dictionary(["$class": .uid(2), "UIRed": .real(1)]),
            .dictionary(["$classname": .string("UIColor"), "$classes": .array([.string("UIColor"), .string("NSObject")])]),
        ])
        let cases: [(String, Data, String)] = [
            ("garbage", Data([0xDE, 0xAD, 0xBE, 0xEF]), "not a keyed archive"),
            ("color", Data(colorArchive), "class UIColor is not one the default transformer allows"),
        ]
        var damaged: URL?
        for (label, bytes, expected) in cases {
            let url = scratchURL(label)
            damaged = url
            // Raw bytes go in through a pass-through transformer registered under the attribute's name…
            ValueTransformer.setValueTransformer(ValueTransformer(), forName: NSValueTransformerName(typeName))
            let context = try Self.open(model, at: url)
            try context.performAndWait {
                let box = try EntityDescription.insertNewObject(forEntityName: "Box", into: context)
                try box.setValue(label, forKey: "label")
                try box.setValue(bytes, forKey: "content")
                try context.save()
            }
            // …and are read with the keyed archive once it is gone.
            ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName(typeName))
            try TransformerRegistrationTests.close(context)
            let reader = try Self.open(model, at: url)
            _ = reader.performAndWait {
                #expect {
                    _ = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Box")).map { try $0.value(forKey: "content") }
                } throws: { error in
                    guard case .unreadableValue(let entity, let attribute, let object, let reason) = error as? ContextError else { return false }
                    return entity == "Box" && attribute == "content" && object.entityName == "Box" && reason.contains(expected)
                        && "\(error)".contains("Box.content") && "\(error)".contains(object.description)
                }
            }
            try TransformerRegistrationTests.close(reader)
        }
        // A lenient transformer registered under the type's name takes precedence over the keyed archive:
        // the damaged object loads, and its value can be replaced.
        AttributeType.registerTransformer(named: typeName, valueType: String.self, transform: { Data($0.utf8) },
                                          reverseTransform: { _ in "unreadable" })
        let repair = try Self.open(model, at: try #require(damaged))
        try repair.performAndWait {
            let box = try #require(try repair.fetch(FetchRequest<ManagedObject>(entityName: "Box")).first)
            #expect(try box.value(forKey: "content") as? String == "unreadable")
            try box.setValue("replaced", forKey: "content")
            try repair.save()
        }
    }
}
