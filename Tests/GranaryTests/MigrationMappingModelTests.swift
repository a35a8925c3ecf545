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
        let bundle = try Self.bundle()
        let upper = MappingModel.PropertyMapping(name: "city", valueExpression: try MappingExpression(parsing: #"FUNCTION($entityPolicy, "upper:", $source.city)"#))
        var mapping = try Self.mappingModel()
        mapping.entityMappings[1].migrationPolicyClassName = "App.AddressPolicy"
        mapping.entityMappings[1].attributeMappings = [mapping.entityMappings[1].attributeMappings[0], upper]
        let store = MigrationHarness()
        _ = try writeV1(store, bundle)
        var options = PersistentStore.Options()
        options.migration.mappingModels = [mapping]
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

    @Test func aMappingThatBreaksTheNewModelNamesTheObjectsAndWritesNothing() throws {
        let bundle = try Self.bundle()
        var mapping = try Self.mappingModel()
        // Every person's name comes from nothing: a required value with no source.
        mapping.entityMappings[0].attributeMappings = [MappingModel.PropertyMapping(name: "name", valueExpression: .null)]
        let store = MigrationHarness()
        _ = try writeV1(store, bundle)
        let before = try store.files()
        var options = PersistentStore.Options()
        options.migration.mappingModels = [mapping]
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
            try MappingModel(contentsOf: try write(#"<attribute name="sourcefilterpredicatestring" type="string">age &gt; 3</attribute>"#))
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
}
