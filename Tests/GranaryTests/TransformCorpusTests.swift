import Foundation
import Testing

@testable import Granary

/// The transform corpus bundles (`Fixtures/Corpus/Transform*.xcdatamodeld`): every version loads, and a
/// store holding transformable values migrates through every version keeping them.
@Suite struct TransformCorpusTests {
    static func bundle(_ name: String) throws -> XcodeModelBundle {
        try XcodeModelBundle(contentsOf: XcodeFixtures.url("Corpus/\(name).xcdatamodeld"))
    }

    /// A store at `url` opened with version `index` of `bundle`, migrating from any earlier version.
    static func open(_ bundle: XcodeModelBundle, version index: Int, at url: URL) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: bundle.versions[index])
        let options = PersistentStore.Options(migration: MigrationOptions(versions: Array(bundle.versions[..<index])))
        try coordinator.addPersistentStore(type: .durable, at: url, options: options)
        return ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    }

    static func attribute(_ bundle: XcodeModelBundle, _ version: Int, _ entity: String, _ name: String) -> AttributeType? {
        bundle.versions[version].entity(named: entity)?.attributesByName[name]?.type
    }

    @Test(arguments: ["TransformDefaultClasses", "TransformNamedTransformer", "TransformPlatformClasses", "TransformMigration"])
    func everyVersionLoads(_ name: String) throws {
        let bundle = try Self.bundle(name)
        #expect(bundle.versions.count >= 2)
        #expect(bundle.currentVersionName == "\(name) \(bundle.versions.count)")
    }

    /// No custom class, an empty or absent transformer, Foundation's archiving transformers and
    /// property-list classes are all the keyed archive: renaming the transformer or declaring the class
    /// changes nothing stored.
    @Test func defaultTransformersAreOneTypeWhateverXcodeWrote() throws {
        let bundle = try Self.bundle("TransformDefaultClasses")
        for (version, names) in [(0, ["options", "legacy", "tags"]), (2, ["options", "legacy", "tags", "history", "counts", "members", "links"])] {
            for name in names {
                #expect(Self.attribute(bundle, version, "Settings", name) == .secureUnarchiveFromData, "\(name) in version \(version + 1)")
            }
        }
    }

    @Test func defaultClassesMigrateThroughEveryVersionKeepingTheirValues() throws {
        let bundle = try Self.bundle("TransformDefaultClasses")
        let url = scratchURL()
        let options: [String: any Sendable] = ["theme": "dark", "size": 12, "ratio": 1.5, "beta": true,
                                               "since": Date(timeIntervalSinceReferenceDate: 1_000), "blob": Data([1, 2, 3]),
                                               "nested": ["a": [1, 2], "b": ["x"]] as [String: any Sendable]]
        let legacy = [Date(timeIntervalSinceReferenceDate: 5), Date(timeIntervalSinceReferenceDate: -5)]
        let tags = ["red", "green", "é"]
        let v1 = try Self.open(bundle, version: 0, at: url)
        try v1.performAndWait {
            let settings = try EntityDescription.insertNewObject(forEntityName: "Settings", into: v1)
            try settings.setValue("main", forKey: "name")
            try settings.setValue(options, forKey: "options")
            try settings.setValue(legacy, forKey: "legacy")
            try settings.setValue(tags, forKey: "tags")
            try v1.save()
        }
        try TransformerRegistrationTests.close(v1)
        let v2 = try Self.open(bundle, version: 1, at: url)
        try v2.performAndWait {
            let settings = try #require(try v2.fetch(FetchRequest<ManagedObject>(entityName: "Settings")).first)
            try settings.setValue([URL(string: "https://example.com")!, UUID(uuidString: "00000000-0000-0000-0000-000000000001")!] as [Any], forKey: "history")
            try settings.setValue(["a": 1, "b": 2], forKey: "counts")
            try v2.save()
        }
        try TransformerRegistrationTests.close(v2)
        let v3 = try Self.open(bundle, version: 2, at: url)
        try v3.performAndWait {
            let settings = try #require(try v3.fetch(FetchRequest<ManagedObject>(entityName: "Settings")).first)
            let readOptions = try #require(try settings.value(forKey: "options") as? [String: any Sendable])
            #expect(try ArchivedValue(swift: readOptions) == ArchivedValue(swift: options))
            #expect(try settings.value(forKey: "legacy") as? [Date] == legacy)
            #expect(try settings.value(forKey: "tags") as? [String] == tags)
            #expect(try settings.value(forKey: "counts") as? [String: Int] == ["a": 1, "b": 2])
            let history = try #require(try settings.value(forKey: "history") as? [any Sendable])
            #expect(history.first as? URL == URL(string: "https://example.com") && history.count == 2)
            #expect(try settings.value(forKey: "members") == nil)
            try settings.setValue(Set([UUID()]), forKey: "members")
            try settings.setValue([URL(string: "file:///tmp/a")!], forKey: "links")
            try v3.save()
        }
    }

    @Test func aTransformableMigratesKeepingItsDataAcrossATransformerChangeAndARename() throws {
        let bundle = try Self.bundle("TransformMigration")
        #expect(Self.attribute(bundle, 0, "Note", "keywords") == Self.attribute(bundle, 1, "Note", "keywords"))
        let url = scratchURL()
        let v1 = try Self.open(bundle, version: 0, at: url)
        try v1.performAndWait {
            for (index, words) in [["a", "b"], [], ["ü"]].enumerated() {
                let note = try EntityDescription.insertNewObject(forEntityName: "Note", into: v1)
                try note.setValue("note \(index)", forKey: "body")
                try note.setValue(words, forKey: "keywords")
            }
            try v1.save()
        }
        try TransformerRegistrationTests.close(v1)
        let v3 = try Self.open(bundle, version: 2, at: url)
        try v3.performAndWait {
            let notes = try v3.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
            var byBody: [String: [String]] = [:]
            for note in notes {
                byBody[try #require(try note.value(forKey: "body") as? String)] = try note.value(forKey: "tags") as? [String]
            }
            #expect(byBody == ["note 0": ["a", "b"], "note 1": [], "note 2": ["ü"]])
        }
    }

    /// The attributes that need an app's transformer are listed as warnings, for `granary model check` and
    /// for the app's author; the default transformer's are not.
    @Test func attributesThatNeedATransformerAreWarnedAbout() throws {
        let named = try Self.bundle("TransformNamedTransformer")
        #expect(named.warnings(forVersion: "TransformNamedTransformer 2").map(\.description).sorted().map { $0.split(separator: " ").suffix(3).joined(separator: " ") }
                == ["registers under 'MyColorTransformer'", "registers under 'PaletteTransformer'"])
        let platform = try Self.bundle("TransformPlatformClasses")
        let types = platform.warnings(forVersion: "TransformPlatformClasses 2").compactMap { warning -> String? in
            guard case .transformerNeeded(let location, _, let typeName) = warning, location.line != nil else { return nil }
            return typeName
        }
        #expect(types.sorted() == ["CKRecordID", "CLLocation", "NSColor", "UIColor"])
        #expect(try Self.bundle("TransformDefaultClasses").warnings.isEmpty)
    }

    @Test func namedTransformersCodeTheirValuesThroughAMigration() throws {
        let bundle = try Self.bundle("TransformNamedTransformer")
        #expect(Self.attribute(bundle, 1, "Swatch", "color") == .transformable(valueTypeName: "MyColorTransformer"))
        #expect(Self.attribute(bundle, 1, "Swatch", "palette") == .transformable(valueTypeName: "PaletteTransformer"))
        AttributeType.registerTransformer(named: "MyColorTransformer", valueType: TestColor.self, transform: { $0.data },
                                          reverseTransform: { try TestColor(data: $0) })
        AttributeType.registerTransformer(named: "PaletteTransformer", valueType: [TestColor].self,
                                          transform: { Data($0.flatMap(\.data)) },
                                          reverseTransform: { data in
                                              try stride(from: 0, to: data.count, by: 3).map { try TestColor(data: Data(Array(data)[$0..<min($0 + 3, data.count)])) }
                                          })
        let url = scratchURL()
        let v1 = try Self.open(bundle, version: 0, at: url)
        try v1.performAndWait {
            let swatch = try EntityDescription.insertNewObject(forEntityName: "Swatch", into: v1)
            try swatch.setValue("sky", forKey: "name")
            try swatch.setValue(TestColor(red: 10, green: 20, blue: 250), forKey: "color")
            try v1.save()
        }
        try TransformerRegistrationTests.close(v1)
        let v2 = try Self.open(bundle, version: 1, at: url)
        try v2.performAndWait {
            let swatch = try #require(try v2.fetch(FetchRequest<ManagedObject>(entityName: "Swatch")).first)
            #expect(try swatch.value(forKey: "color") as? TestColor == TestColor(red: 10, green: 20, blue: 250))
            try swatch.setValue([TestColor(red: 1, green: 1, blue: 1), TestColor(red: 2, green: 2, blue: 2)], forKey: "palette")
            try v2.save()
        }
        try TransformerRegistrationTests.close(v2)
        let reader1 = try Self.open(bundle, version: 1, at: url)
        try reader1.performAndWait {
            let swatch = try #require(try reader1.fetch(FetchRequest<ManagedObject>(entityName: "Swatch")).first)
            #expect(try swatch.value(forKey: "palette") as? [TestColor] == [TestColor(red: 1, green: 1, blue: 1), TestColor(red: 2, green: 2, blue: 2)])
        }
    }

    @Test func platformClassesMigrateWhileNilAndRefuseValuesWithoutATransformer() throws {
        let bundle = try Self.bundle("TransformPlatformClasses")
        #expect(Self.attribute(bundle, 1, "Place", "shade") == .transformable(valueTypeName: "NSColor"))
        let url = scratchURL()
        let v1 = try Self.open(bundle, version: 0, at: url)
        try v1.performAndWait {
            let place = try EntityDescription.insertNewObject(forEntityName: "Place", into: v1)
            try place.setValue("home", forKey: "name")
            try v1.save()
        }
        try TransformerRegistrationTests.close(v1)
        let v2 = try Self.open(bundle, version: 1, at: url)
        try v2.performAndWait {
            let place = try #require(try v2.fetch(FetchRequest<ManagedObject>(entityName: "Place")).first)
            #expect(try place.value(forKey: "name") as? String == "home")
            #expect(try place.value(forKey: "shade") == nil)
            #expect { try place.setValue(TestColor(red: 0, green: 0, blue: 0), forKey: "shade") } throws: { error in
                "\(error)".contains("'NSColor'") && "\(error)".contains("Place.shade")
            }
        }
    }
}
