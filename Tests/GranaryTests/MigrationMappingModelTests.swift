import Foundation
import Testing
@testable import Granary

/// Mapping models (`.xcmappingmodel`): read from Xcode's XML store format, used before inference for
/// the versions they cover, able to move attributes into objects of a new related entity.
@Suite struct MigrationMappingModelTests {
    static func corpus(_ name: String) throws -> URL {
        try XcodeFixtures.url("Corpus/\(name)")
    }

    static func bundle() throws -> XcodeModelBundle {
        try XcodeModelBundle(contentsOf: try corpus("MigrateMappingModel.xcdatamodeld"))
    }

    static func mappingModel() throws -> MappingModel {
        try MappingModel(contentsOf: try corpus("MigrateMappingModel.xcmappingmodel"))
    }

    @Test func readsXcodesMappingModelFile() throws {
        let model = try Self.mappingModel()
        #expect(model.sourceVersionName == "MigrateMappingModel" && model.destinationVersionName == "MigrateMappingModel 2")
        #expect(model.entityMappings.map(\.name) == ["PersonToPerson", "PersonToAddress"])
        let toAddress = model.entityMappings[1]
        #expect(toAddress.mappingType == .transform && toAddress.sourceEntityName == "Person" && toAddress.destinationEntityName == "Address")
        #expect(toAddress.attributeMappings.map(\.valueExpression) == [.variable("source", keyPath: ["street"]), .variable("source", keyPath: ["city"])])
        let friends = try #require(model.entityMappings[0].relationshipMappings.first { $0.name == "friends" })
        #expect(friends.valueExpression?.description
                == "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PersonToPerson\", $source.friends)")
        #expect(model.entityMappings[0].attributeMappings == [MappingModel.PropertyMapping(name: "name", valueExpression: nil)])
        let bundle = try Self.bundle()
        #expect(model.covers(from: bundle.versions[0], to: bundle.versions[1]))
        // Found beside its bundle, and only beside its own.
        #expect(try MappingModel.all(besideBundleAt: try Self.corpus("MigrateMappingModel.xcdatamodeld")).map(\.path) == [model.path])
        #expect(try MappingModel.all(besideBundleAt: try Self.corpus("MigrateEmptyToMany.xcdatamodeld")).isEmpty)
        #expect(!model.covers(from: bundle.versions[1], to: bundle.versions[0]))
        // Bound by version hashes, it covers that pair whatever its versions are called.
        let renamed = try ManagedObjectModel(merging: [bundle.versions[0]], versionIdentifier: "old")
        let bound = model.bound(from: bundle.versions[0], to: bundle.versions[1])
        #expect(!model.covers(from: renamed, to: bundle.versions[1]))
        #expect(bound.covers(from: renamed, to: bundle.versions[1]) && !bound.covers(from: bundle.versions[1], to: bundle.versions[1]))
    }

    func writeV1(_ store: MigrationHarness, _ bundle: XcodeModelBundle) throws -> [String: URL] {
        try store.write(bundle.versions[0]) { context in
            let ada = try context.insert("Person", ["name": "Ada", "street": "12 St James's Square", "city": "London"])
            let alan = try context.insert("Person", ["name": "Alan", "city": "Wilmslow"])
            let grace = try context.insert("Person", ["name": "Grace"])
            try ada.setValue(Set([alan, grace]), forKey: "friends")
            try context.obtainPermanentIDs(for: [ada, alan, grace])
            return ["Ada": ada.objectID.uriRepresentation, "Alan": alan.objectID.uriRepresentation]
        }
    }

    /// A store written with version 1, and the options that open it at version 2 through `mapping`.
    func writtenV1(migratingWith mapping: MappingModel) throws -> (store: MigrationHarness, bundle: XcodeModelBundle, options: PersistentStore.Options) {
        let bundle = try Self.bundle()
        let store = MigrationHarness()
        _ = try writeV1(store, bundle)
        var options = PersistentStore.Options()
        options.migration.mappingModels = [mapping]
        return (store, bundle, options)
    }

    @Test func movesAttributesIntoANewRelatedEntity() throws {
        let bundle = try Self.bundle()
        let store = MigrationHarness()
        let uris = try writeV1(store, bundle)
        var options = PersistentStore.Options()
        options.migration.mappingModels = [try Self.mappingModel()]
        try store.open(bundle.versions[1], options: options) { persistentStore, context throws in
            let report = try #require(persistentStore.migrationReport)
            #expect(report.changes[0].first?.kind == .mappedByMappingModel(try Self.corpus("MigrateMappingModel.xcmappingmodel").path))
            #expect(report.rowsWritten == 6)
            let people = try context.all("Person", sortedBy: "name")
            #expect(try people.map { try $0.get("name", as: String.self) } == ["Ada", "Alan", "Grace"])
            let addresses = try people.map { try #require(try $0.get("address", as: ManagedObject.self)) }
            #expect(try addresses.map { try $0.get("street", as: String.self) } == ["12 St James's Square", nil, nil])
            #expect(try addresses.map { try $0.get("city", as: String.self) } == ["London", "Wilmslow", nil])
            for (person, address) in zip(people, addresses) { #expect(try address.get("resident", as: ManagedObject.self) === person) }
            let friends = try #require(try people[0].get("friends", as: Set<ManagedObject>.self))
            #expect(Set(try friends.map { try $0.get("name", as: String.self) }) == ["Alan", "Grace"])
            #expect(try people[1].get("friends", as: Set<ManagedObject>.self)?.map(\.objectID) == [people[0].objectID])
            // People keep their IDs.
            #expect(try context.existingObject(with: ManagedObjectID(uriRepresentation: try #require(uris["Ada"]))) === people[0])
            // The migrated store takes new objects of both entities.
            let home = try context.insert("Address", ["city": "Arlington"])
            try context.insert("Person", ["name": "Hopper", "address": home])
            try context.save()
        }
        try store.open(bundle.versions[1]) { persistentStore, context throws in
            #expect(persistentStore.engine.verify().isSound)
            #expect(try context.all("Address", sortedBy: "city").count == 4)
        }
    }

    @Test func withoutTheMappingModelInferenceDropsTheMovedAttributes() throws {
        let bundle = try Self.bundle()
        let store = MigrationHarness()
        _ = try writeV1(store, bundle)
        try store.open(bundle.versions[1]) { persistentStore, context throws in
            let changes = try #require(persistentStore.migrationReport).changes[0].map(\.description)
            #expect(changes.contains("attribute Person.street removed") && changes.contains("entity Address added"))
            #expect(try context.all("Address", sortedBy: "city").isEmpty)
        }
    }

    @Test func aPolicyFunctionRegisteredByClassNameComputesValues() throws {
        let upper = MappingModel.PropertyMapping(name: "city", valueExpression: try MappingExpression(parsing: #"FUNCTION($entityPolicy, "upper:", $source.city)"#))
        var mapping = try Self.mappingModel()
        mapping.entityMappings[1].migrationPolicyClassName = "App.AddressPolicy"
        mapping.entityMappings[1].attributeMappings = [mapping.entityMappings[1].attributeMappings[0], upper]
        var (store, bundle, options) = try writtenV1(migratingWith: mapping)
        // Not registered: the plan says so and nothing is written.
        let before = try store.files()
        #expect {
            try store.open(bundle.versions[1], options: options) { _, _ in }
        } throws: { error in
            guard case MigrationError.cannotInferMapping(_, _, let problems) = error else { return false }
            return problems.count == 1 && problems[0].contains("App.AddressPolicy, which is not registered")
        }
        #expect(try store.files() == before)
        options.migration.migrationPolicies["App.AddressPolicy"] = EntityMigrationPolicy(functions: [
            "upper:": { arguments in (arguments.first as? String)?.uppercased() },
        ])
        try store.open(bundle.versions[1], options: options) { _, context throws in
            let cities = try context.all("Address", sortedBy: "city").map { try $0.get("city", as: String.self) }
            #expect(cities == [nil, "LONDON", "WILMSLOW"])
        }
    }

    @Test func aPolicyTransformAdjustsOrDiscardsTheObjectsAMappingMakes() throws {
        var mapping = try Self.mappingModel()
        mapping.entityMappings[1].migrationPolicyClassName = "App.AddressPolicy"
        var (store, bundle, options) = try writtenV1(migratingWith: mapping)
        options.migration.migrationPolicies["App.AddressPolicy"] = EntityMigrationPolicy(transform: { old, new in
            // People without a city get no address; the others' street is filled when missing.
            guard old["city"] != nil else { return new.discard() }
            if new["street"] == nil { new["street"] = "(unknown) in \(old["name"] as? String ?? "")" }
        })
        try store.open(bundle.versions[1], options: options) { persistentStore, context throws in
            #expect(persistentStore.migrationReport?.rowsWritten == 5)
            let people = try context.all("Person", sortedBy: "name")
            let streets = try people.map { try $0.get("address", as: ManagedObject.self)?.get("street", as: String.self) }
            #expect(streets == ["12 St James's Square", "(unknown) in Alan", nil])
        }
    }

    @Test func aFilterPredicateChoosesTheSourceObjectsAMappingTakes() throws {
        var mapping = try Self.mappingModel()
        mapping.entityMappings[1].sourceFilter = "city != nil AND NOT (name BEGINSWITH 'G')"
        let (store, bundle, options) = try writtenV1(migratingWith: mapping)
        try store.open(bundle.versions[1], options: options) { _, context throws in
            let people = try context.all("Person", sortedBy: "name")
            let cities = try people.map { try $0.get("address", as: ManagedObject.self)?.get("city", as: String.self) }
            #expect(cities == ["London", "Wilmslow", nil])
            #expect(try context.all("Address", sortedBy: "city").count == 2)
        }
    }

    @Test func aMappingThatBreaksTheNewModelNamesTheObjectsAndWritesNothing() throws {
        var mapping = try Self.mappingModel()
        // Every person's name comes from nothing: a required value with no source.
        mapping.entityMappings[0].attributeMappings = [MappingModel.PropertyMapping(name: "name", valueExpression: .null)]
        let (store, bundle, options) = try writtenV1(migratingWith: mapping)
        let before = try store.files()
        #expect {
            try store.open(bundle.versions[1], options: options) { _, _ in }
        } throws: { error in
            guard case MigrationError.validationFailed(_, _, let failures, 3) = error else { return false }
            return failures.allSatisfy { $0.entity == "Person" && $0.property == "name" && $0.reason == .missing }
        }
        #expect(try store.files() == before)
    }

    @Test func whatGranaryDoesNotCarryOutIsRefusedNamingTheElement() throws {
        let folder = scratchURL("mapping-\(UUID().uuidString)").appendingPathComponent("Bad.xcmappingmodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func write(_ body: String) throws -> URL {
            try """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
                <database>
                    <object type="XDDEVMAPPINGMODEL" id="z1">
                        <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z2"></relationship>
                    </object>
                    <object type="XDDEVENTITYMAPPING" id="z2">
                        <attribute name="sourcename" type="string">Person</attribute>
                        <attribute name="destinationname" type="string">Person</attribute>
                        \(body)
                        <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z3"></relationship>
                    </object>
                    <object type="XDDEVATTRIBUTEMAPPING" id="z3">
                        <attribute name="name" type="string">name</attribute>
                        <attribute name="valueexpressiondata" type="binary">YnBsaXN0MDA=</attribute>
                    </object>
                </database>
                """.write(to: folder.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
            return folder
        }
        #expect {
            try MappingModel(contentsOf: try write(""))
        } throws: { error in
            guard case MappingModelError.unsupported(_, let element, let reason) = error else { return false }
            return element == "XDDEVATTRIBUTEMAPPING object z3 (line 13) valueexpressiondata" && reason.contains("archived NSExpression")
        }
        #expect {
            try MappingModel(contentsOf: try write(#"<attribute name="sourcefilterpredicatestring" type="string">age &gt;&gt;&gt; 3</attribute>"#))
        } throws: { error in
            guard case MappingModelError.unsupported(_, let element, _) = error else { return false }
            return element.hasPrefix("XDDEVENTITYMAPPING object z2") && element.hasSuffix("sourcefilterpredicatestring")
        }
        #expect(throws: MappingModelError.self) { try MappingModel(contentsOf: folder.appendingPathComponent("missing")) }
        #expect {
            try MappingExpression(parsing: "$source.name + 1")
        } throws: { error in
            (error as? MappingExpression.SyntaxError)?.offset == 13
        }
    }

    /// A keyed archive of NSExpression objects laid out as NSKeyedArchiver writes them.
    struct ExpressionArchive {
        var objects: [BinaryPropertyList] = [.string("$null")]
        var classes: [String: UInt64] = [:]

        mutating func add(_ object: BinaryPropertyList) -> UInt64 {
            objects.append(object)
            return UInt64(objects.count - 1)
        }

        mutating func object(_ name: String, _ fields: [String: BinaryPropertyList]) -> UInt64 {
            let classUID = classes[name] ?? add(.dictionary(["$classname": .string(name), "$classes": .array([.string(name), .string("NSObject")])]))
            classes[name] = classUID
            return add(.dictionary(fields.merging(["$class": .uid(classUID)]) { a, _ in a }))
        }

        mutating func variable(_ name: String) -> UInt64 {
            object("NSVariableExpression", ["NSVariable": .uid(add(.string(name))), "NSExpressionType": .int(2)])
        }

        mutating func function(_ operand: UInt64, _ selector: String, _ arguments: [UInt64], keyPath: Bool = false) -> UInt64 {
            let list = object("NSArray", ["NS.objects": .array(arguments.map { .uid($0) })])
            return object(keyPath ? "NSKeyPathExpression" : "NSFunctionExpression",
                          ["NSOperand": .uid(operand), "NSSelectorName": .uid(add(.string(selector))), "NSArguments": .uid(list),
                           "NSExpressionType": .int(keyPath ? 3 : 4)])
        }

        mutating func constant(_ value: BinaryPropertyList) -> UInt64 {
            object("NSConstantValueExpression", ["NSConstantValue": .uid(add(value)), "NSExpressionType": .int(0)])
        }

        func bytes(root: UInt64) -> [UInt8] {
            BinaryPropertyList.dictionary([
                "$archiver": .string("NSKeyedArchiver"), "$version": .int(100_000),
                "$top": .dictionary(["root": .uid(root)]), "$objects": .array(objects),
            ]).bytes()
        }
    }

    @Test func readsExpressionsXcodeArchived() throws {
        var archive = ExpressionArchive()
        let friends = archive.function(archive.variable("source"), "valueForKeyPath:",
                                       [archive.object("NSKeyPathSpecifierExpression", ["NSKeyPath": .uid(archive.add(.string("friends")))])],
                                       keyPath: true)
        let root = archive.function(archive.variable("manager"), "destinationInstancesForEntityMappingNamed:sourceInstances:",
                                    [archive.constant(.string("PersonToPerson")), friends])
        let expression = try MappingExpression(archived: archive.bytes(root: root))
        #expect(expression == .function(target: .variable("manager", keyPath: []), selector: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                                        arguments: [.string("PersonToPerson"), .variable("source", keyPath: ["friends"])]))
        // In a mapping model file, base64 in valueexpressiondata.
        var policy = ExpressionArchive()
        let call = policy.function(policy.variable("entityPolicy"), "upper:", [policy.constant(.int(3))])
        let folder = scratchURL("archived-\(UUID().uuidString)").appendingPathComponent("Archived.xcmappingmodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <database>
                <object type="XDDEVMAPPINGMODEL" id="z1">
                    <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z2"></relationship>
                </object>
                <object type="XDDEVENTITYMAPPING" id="z2">
                    <attribute name="sourcename" type="string">Person</attribute>
                    <attribute name="destinationname" type="string">Person</attribute>
                    <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z3"></relationship>
                </object>
                <object type="XDDEVATTRIBUTEMAPPING" id="z3">
                    <attribute name="name" type="string">name</attribute>
                    <attribute name="valueexpressiondata" type="binary">\(Data(policy.bytes(root: call)).base64EncodedString())</attribute>
                </object>
            </database>
            """.write(to: folder.appendingPathComponent("xcmapping.xml"), atomically: true, encoding: .utf8)
        let model = try MappingModel(contentsOf: folder)
        #expect(model.entityMappings.first?.name == "PersonToPerson")
        #expect(model.entityMappings.first?.attributeMappings.first?.valueExpression?.description == #"FUNCTION($entityPolicy, "upper:", 3)"#)
        // A class it does not read is named.
        var other = ExpressionArchive()
        let subquery = other.object("NSSubqueryExpression", ["NSExpressionType": .int(13)])
        #expect {
            try MappingExpression(archived: other.bytes(root: subquery))
        } throws: { error in
            (error as? MappingExpression.ArchiveProblem)?.reason == "an expression of class NSSubqueryExpression"
        }
    }
}
