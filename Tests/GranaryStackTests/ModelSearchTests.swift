import Foundation
import Granary
@testable import GranaryStack
import Synchronization
import Testing

/// How `PersistentContainer(name:)` finds its model. Apple's "NSPersistentContainer" reference page:
/// "By default, the provided name value [...] is used to look up the name of the NSManagedObjectModel
/// object to be used with the NSPersistentContainer object", which Core Data loads from the app's
/// bundle; Granary looks in its `ModelRegistry` first, then for the model's source file shipped with
/// the app.
@Suite struct ModelSearchTests {
    /// The model of Xcode's app template: one entity, `Item`, with a `timestamp`.
    static let itemModel = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" \
        systemVersion="23G93" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            <entity name="Item" representedClassName="Item" syncable="YES" codeGenerationType="class">
                <attribute name="timestamp" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
            </entity>
        </model>
        """

    /// Writes `<directory>/<name>.xcdatamodel` (or, `bundled`, `<name>.xcdatamodeld/<name>.xcdatamodel`).
    static func shipModel(_ name: String, in directory: URL, bundled: Bool = false, contents: String = itemModel) throws {
        var package = directory
        if bundled { package.appendPathComponent("\(name).xcdatamodeld", isDirectory: true) }
        package.appendPathComponent("\(name).xcdatamodel", isDirectory: true)
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        try contents.write(to: package.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
    }

    @Test func aModelFileBesideTheExecutableIsFoundByName() async throws {
        let executableDirectory = scratchDirectory()
        try Self.shipModel("Model", in: executableDirectory)
        let search = ModelSearch(registry: ModelRegistry(),
                                 directories: ModelSearch.shippedModelDirectories(resourceDirectory: nil, executableDirectory: executableDirectory))
        let container = PersistentContainer(name: "Model", search: search)
        #expect(container.managedObjectModel.entitiesByName.keys.sorted() == ["Item"])
        container.persistentStoreDescriptions.first!.url = URL(fileURLWithPath: "/dev/null")
        container.loadPersistentStores { _, error in #expect(error == nil) }
        let view = container.viewContext
        let count = try await view.perform {
            let item = ManagedObject(entity: try #require(container.managedObjectModel.entity(named: "Item")), insertInto: view)
            try item.setValue(Date(), forKey: "timestamp")
            try view.save()
            return try view.count(for: FetchRequest<ManagedObject>(entityName: "Item"))
        }
        #expect(count == 1)
    }

    @Test func aSwiftPMResourceBundleBesideTheExecutableIsSearched() throws {
        let executableDirectory = scratchDirectory()
        let resources = executableDirectory.appendingPathComponent("App_AppModels.resources", isDirectory: true)
        try Self.shipModel("Model", in: resources, bundled: true)
        try FileManager.default.createDirectory(at: executableDirectory.appendingPathComponent("NotABundle.resources"),
                                                withIntermediateDirectories: true)
        let directories = ModelSearch.shippedModelDirectories(resourceDirectory: executableDirectory, executableDirectory: executableDirectory)
        #expect(directories.map(\.lastPathComponent) == [executableDirectory.lastPathComponent, "App_AppModels.resources"])
        let model = try ModelSearch(registry: ModelRegistry(), directories: directories).model(named: "Model")
        #expect(model.entity(named: "Item") != nil)
        #expect(model.versionIdentifier == "Model")
    }

    @Test func aRegisteredModelComesBeforeAFile() throws {
        let directory = scratchDirectory()
        try Self.shipModel("Notes", in: directory)
        let registry = ModelRegistry()
        registry.register(stackModel, named: "Notes")
        #expect(try ModelSearch(registry: registry, directories: [directory]).model(named: "Notes") === stackModel)
        #expect(try ModelSearch(registry: ModelRegistry(), directories: [directory]).model(named: "Notes") !== stackModel)
    }

    @Test func theSharedRegistryServesTheCoreDataInitializer() {
        ModelRegistry.shared.register(stackModel, named: "ModelSearchTests.shared")
        let container = PersistentContainer(name: "ModelSearchTests.shared")
        #expect(container.managedObjectModel === stackModel)
        #expect(container.modelFailure == nil)
    }

    @Test func anUnreadableModelFileOrAFailingFactoryIsReportedWithItsSource() throws {
        let directory = scratchDirectory()
        try Self.shipModel("Broken", in: directory, contents: "<model><entity name=")
        do {
            _ = try ModelSearch(registry: ModelRegistry(), directories: [directory]).model(named: "Broken")
            Issue.record("read a broken model")
        } catch {
            guard case .modelUnreadable("Broken", let source, let underlying) = error else { throw error }
            #expect(source.hasSuffix("Broken.xcdatamodel") && underlying is XcodeModelError)
        }

        struct Refused: Error {}
        let registry = ModelRegistry()
        registry.register(named: "Lazy") { throw Refused() }
        let container = PersistentContainer(name: "Lazy", search: ModelSearch(registry: registry, directories: []))
        guard case .modelUnreadable("Lazy", _, let underlying)? = container.modelFailure, underlying is Refused else {
            Issue.record("expected modelUnreadable, got \(String(describing: container.modelFailure))")
            return
        }
        #expect(throws: StackError.self) { try PersistentContainer(name: "Lazy", models: registry) }
    }

    @Test func theThrowingFormFailsAtOnceNamingThePlacesSearched() throws {
        do {
            _ = try PersistentContainer(name: "Nowhere", models: ModelRegistry())
            Issue.record("made a container without a model")
        } catch {
            guard case .modelNotFound("Nowhere", [], let searched) = error else { throw error }
            #expect(searched == ModelSearch.shippedModelDirectories())
        }
    }
}
