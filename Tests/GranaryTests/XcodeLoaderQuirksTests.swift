import Foundation
import Testing
@testable import Granary

/// What real model files contain that Core Data loads: the loader reads it the same way (with a warning
/// where Core Data ignores something), or refuses it with an error that says what to do. The corpus
/// bundles named here also run through `XcodeCorpusTests`.
@Suite struct XcodeLoaderQuirksTests {
    private func corpus(_ name: String) throws -> XcodeModelBundle {
        try XcodeModelBundle(contentsOf: XcodeCorpus.bundleURL(name))
    }

    // MARK: Headers and defaults

    @Test func anXcode4HeaderWithAnEmptyNameLoads() throws {
        let bundle = try corpus("LoaderXcode4Header")
        #expect(bundle.versions.map { $0.entity(named: "Event")?.attributes.count } == [2, 3])
        #expect(bundle.warnings.isEmpty)
    }

    @Test func booleanDefaultsWrittenAsNumbersAreTrueWhenNonzero() throws {
        let setting = try #require(try corpus("LoaderNumericDefaults").versions[0].entity(named: "Setting"))
        func value(_ name: String) -> (any Sendable)? { setting.attributesByName[name]?.defaultValue }
        #expect(value("enabled") as? Bool == true)  // "1.0"
        #expect(value("hidden") as? Bool == false)  // "0.0"
        #expect(value("pinned") as? Bool == true)  // "100"
    }

    @Test func integerDefaultsWrittenAsWholeDecimalsOrYesNoLoad() throws {
        let bundle = try corpus("LoaderNumericDefaults")
        let setting = try #require(bundle.versions[0].entity(named: "Setting"))
        func value(_ name: String) -> (any Sendable)? { setting.attributesByName[name]?.defaultValue }
        #expect(value("count") as? Int32 == 0)  // "0.0"
        #expect(value("level") as? Int16 == 0)  // "NO"
        #expect(value("rank") as? Int16 == 1)  // "YES"
        #expect(value("limit") as? Int64 == 12)  // "12.0"
        #expect(bundle.versions[1].entity(named: "Setting")?.attributesByName["version"]?.defaultValue as? Int32 == 1)
        // New objects start with those defaults.
        let (_, context) = try stack(bundle.versions[1])
        try context.performAndWait {
            let object = try context.insert("Setting", ["key": "k"])
            #expect(try object.get("count", as: Int32.self) == 0 && object.get("rank", as: Int16.self) == 1)
            #expect(try object.get("enabled", as: Bool.self) == true && object.get("synced", as: Bool.self) == false)
        }
    }

    @Test func integerDefaultsWithAFractionOrOutOfRangeStayErrors() throws {
        for (type, text) in [("Integer 32", "2.5"), ("Integer 16", "70000.0"), ("Integer 64", "1e30"), ("Boolean", "maybe")] {
            let error = try #require(try XcodeFixtures.error(loading: XcodeFixtures.model(entity: """
                        <attribute name="n" attributeType="\(type)" defaultValueString="\(text)"/>
                """)))
            guard case .invalidValue(let location, let attribute, let value, _) = error else {
                Issue.record("\(type) \(text): expected invalidValue, got \(error)")
                continue
            }
            #expect(location.line == 4 && attribute == "defaultValueString" && value == text)
        }
    }

    // MARK: Relationships

    @Test func orderedOnAToOneIsIgnoredWithAWarning() throws {
        let bundle = try corpus("LoaderOrderedToOne")
        let album = try #require(bundle.versions[0].entity(named: "Track")?.relationshipsByName["album"])
        #expect(!album.isOrdered && !album.isToMany)
        #expect(bundle.versions[0].entity(named: "Album")?.relationshipsByName["tracks"]?.isOrdered == true)
        let warnings = bundle.warnings(forVersion: "LoaderOrderedToOne")
        #expect(warnings.count == 1)
        guard case .ignoredAttribute(let location, let attribute, let reason)? = warnings.first else {
            Issue.record("expected ignoredAttribute, got \(warnings)")
            return
        }
        #expect(attribute == "ordered" && location.element == "relationship" && location.name == "album")
        #expect(location.line == 10 && reason.contains("to-one"))
        #expect(warnings[0].description.contains("warning: ordered ignored"))
    }

    @Test func indexedRelationshipsLoadWithAWarning() throws {
        let bundle = try corpus("LoaderOrderedToOne")
        let warnings = bundle.warnings(forVersion: "LoaderOrderedToOne 3")
        let indexed = warnings.filter {
            if case .ignoredAttribute(_, "indexed", _) = $0 { return true }
            return false
        }
        #expect(indexed.count == 1 && indexed.first?.location.name == "album")
        #expect(bundle.currentVersion.entity(named: "Track")?.relationshipsByName["album"] != nil)
    }

    // MARK: Current version

    @Test func anEmptyCurrentVersionFilePicksTheVersionNamedLikeTheBundle() throws {
        let bundle = try corpus("LoaderEmptyCurrentVersion")
        #expect(bundle.currentVersionName == "LoaderEmptyCurrentVersion")
        #expect(bundle.versionNames == ["LoaderEmptyCurrentVersion", "LoaderEmptyCurrentVersion 2"])
        guard case .currentVersionChosen(let location, let version, let reason)? = bundle.warnings.first else {
            Issue.record("expected currentVersionChosen, got \(bundle.warnings)")
            return
        }
        #expect(version == "LoaderEmptyCurrentVersion" && location.path.hasSuffix(".xccurrentversion"))
        #expect(reason.contains("named like the bundle"))
        // The single-model loader takes the same version.
        let model = try ManagedObjectModel(contentsOf: XcodeCorpus.bundleURL("LoaderEmptyCurrentVersion"))
        #expect(model.versionIdentifier == "LoaderEmptyCurrentVersion")
    }

    @Test func anEmptyCurrentVersionFileWithNoVersionNamedLikeTheBundlePicksTheNewest() throws {
        let bundle = try XcodeFixtures.scratchDirectory().appendingPathComponent("Store.xcdatamodeld")
        let body = XcodeFixtures.model(entity: #"        <attribute name="a" optional="YES" attributeType="String"/>"#)
        for name in ["Model", "Model 2", "Model 10"] { try XcodeFixtures.writePackage(body, named: name, in: bundle) }
        try Data("<plist version=\"1.0\"><dict/></plist>".utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        let loaded = try XcodeModelBundle(contentsOf: bundle)
        #expect(loaded.currentVersionName == "Model 10")
        guard case .currentVersionChosen(_, "Model 10", let reason)? = loaded.warnings.first else {
            Issue.record("expected currentVersionChosen, got \(loaded.warnings)")
            return
        }
        #expect(reason.contains("newest"))
    }

    @Test func aCurrentVersionThatIsNotAStringIsStillAnError() throws {
        let bundle = try XcodeFixtures.scratchDirectory().appendingPathComponent("M.xcdatamodeld")
        let body = XcodeFixtures.model(entity: #"        <attribute name="a" optional="YES" attributeType="String"/>"#)
        for name in ["M", "M 2"] { try XcodeFixtures.writePackage(body, named: name, in: bundle) }
        let plist = "<plist version=\"1.0\"><dict><key>_XCCurrentVersionName</key><integer>2</integer></dict></plist>"
        try Data(plist.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        #expect {
            try XcodeModelBundle(contentsOf: bundle)
        } throws: { error in
            guard case .noCurrentVersion(_, let reason) = error as? XcodeModelError else { return false }
            return reason.contains("not a string")
        }
    }

    // MARK: Attributes Granary does not know

    @Test func unknownAttributesSetToNoOrEmptyAreWarningsAndOthersProblems() throws {
        let bundle = try corpus("LoaderNewerXcodeAttributes")
        let warnings = bundle.warnings(forVersion: "LoaderNewerXcodeAttributes 2")
        #expect(warnings.count == 2)
        #expect(Set(warnings.compactMap { warning -> String? in
            if case .ignoredAttribute(_, let attribute, _) = warning { return attribute }
            return nil
        }) == ["futureFlag", "futureNote"])
        #expect(bundle.warnings(forVersion: "LoaderNewerXcodeAttributes").isEmpty)

        let error = try #require(try XcodeFixtures.error(loading: XcodeFixtures.model(entity: """
                    <attribute name="a" optional="YES" attributeType="String" futureFlag="YES"/>
            """)))
        guard case .unknownAttribute(_, "futureFlag") = error else {
            Issue.record("expected unknownAttribute, got \(error)")
            return
        }
    }

    // MARK: Renaming identifiers

    @Test func elementIDIsTheRenamingIdentifierUnlessRenamingIdentifierIsGiven() throws {
        let bundle = try corpus("LoaderElementIDRenames")
        let client = try #require(bundle.versions[1].entity(named: "Client"))
        #expect(client.renamingIdentifier == "Customer")
        #expect(client.attributesByName["name"]?.renamingIdentifier == "fullName")
        #expect(client.relationshipsByName["purchases"]?.renamingIdentifier == "orders")
        let purchase = try #require(bundle.versions[2].entity(named: "Purchase"))
        #expect(purchase.attributesByName["amount"]?.renamingIdentifier == "total")
        #expect(purchase.attributesByName["placedAt"]?.renamingIdentifier == "placed")
        // An attribute with neither has none.
        #expect(client.attributesByName["email"]?.renamingIdentifier == nil)
    }

    @Test func dataFollowsElementIDRenamesThroughEveryVersion() throws {
        let bundle = try corpus("LoaderElementIDRenames")
        let store = MigrationHarness()
        let placed = Date(timeIntervalSinceReferenceDate: 700_000_000)
        try store.write(bundle.versions[0]) { context in
            let ada = try context.insert("Customer", ["fullName": "Ada Lovelace", "email": "ada@example.com"])
            try context.insert("Order", ["placed": placed, "total": Decimal(string: "12.50")!, "customer": ada])
        }
        var options = PersistentStore.Options()
        options.migration.versions = bundle.versionsThroughCurrent
        try store.open(bundle.currentVersion, options: options) { persistentStore, context in
            let report = try #require(persistentStore.migrationReport)
            #expect(report.path == ["LoaderElementIDRenames", "LoaderElementIDRenames 2", "LoaderElementIDRenames 3"])
            let client = try #require(try context.all("Client", sortedBy: "name").first)
            #expect(try client.get("name", as: String.self) == "Ada Lovelace")
            let purchase = try #require(try context.all("Purchase", sortedBy: "placedAt").first)
            #expect(try purchase.get("amount", as: Decimal.self) == Decimal(string: "12.50"))
            #expect(try purchase.get("placedAt", as: Date.self) == placed)
            #expect(try purchase.get("client", as: ManagedObject.self) === client)
            #expect(try client.get("purchases", as: Set<ManagedObject>.self) == [purchase])
        }
    }

    // MARK: Xcode 3 packages

    @Test func anXcode3BinaryPackageIsRefusedWithHowToConvertIt() throws {
        let package = try XcodeCorpus.bundleURL("LoaderXcode3").appendingPathComponent("LoaderXcode3.xcdatamodel")
        #expect {
            try ManagedObjectModel(contentsOf: package)
        } throws: { error in
            guard case .xcode3Format(let location) = error as? XcodeModelError else { return false }
            let text = String(describing: error)
            return location.path == package.path && text.contains("Xcode 3") && text.contains("save it")
        }
        // A package with neither contents nor Xcode 3 files is still just unreadable.
        let empty = try XcodeFixtures.scratchDirectory().appendingPathComponent("Empty.xcdatamodel")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect {
            try ManagedObjectModel(contentsOf: empty)
        } throws: { error in
            if case .unreadable = error as? XcodeModelError { return true }
            return false
        }
    }

    // MARK: Composite attributes

    @Test func compositeAttributesAreRefusedByName() throws {
        let package = try XcodeCorpus.bundleURL("LoaderComposite").appendingPathComponent("LoaderComposite 2.xcdatamodel")
        do {
            _ = try ManagedObjectModel(contentsOf: package)
            Issue.record("the model loaded")
        } catch {
            #expect(error.problems.count == 2)
            for problem in error.problems {
                guard case .unsupported(_, let feature, _) = problem else {
                    Issue.record("expected unsupported, got \(problem)")
                    continue
                }
                #expect(feature == "composite attributes (Xcode 15)")
                #expect(problem.description.contains("composite attributes (Xcode 15) not supported"))
            }
            #expect(error.problems.map(\.location.name) == ["address", "Address"])
        }
    }

    // MARK: Helpers

    private func stack(_ model: ManagedObjectModel) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, at: nil)
        return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
    }
}
