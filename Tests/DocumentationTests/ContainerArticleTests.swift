import Foundation
import Granary
import GranaryStack
import Synchronization
import Testing

final class Item: ManagedObject {
    @Managed var timestamp: Date?
}

// The stack of Apple's article "Setting up a Core Data stack" and of Xcode's app template, as GranaryStack's
// article "Porting a Core Data container" and Granary's "Porting from Core Data" show it: Core Data's
// names without `NS`, nothing else changed. Run in memory here; run as written it would create
// `PersistentContainer.defaultDirectoryURL()/Model.granary` in the data directory of whoever runs the
// tests.
// snippet: container-persistence-controller
class PersistenceController {
    let container: PersistentContainer

    init(inMemory: Bool = false) {
        container = PersistentContainer(name: "Model")
        if inMemory {
            container.persistentStoreDescriptions.first!.url = URL(fileURLWithPath: "/dev/null")
        }
        container.loadPersistentStores { description, error in
            if let error {
                fatalError("Unresolved error \(error)")
            }
        }
        container.viewContext.automaticallyMergesChangesFromParent = true
    }
}
// end-snippet

/// The code of GranaryStack's article "Porting a Core Data container".
@Suite struct ContainerArticleTests {
    /// Xcode's app template's model, `Model.xcdatamodel`, written into `directory`.
    static func shipTemplateModel(in directory: URL) throws -> URL {
        let package = directory.appendingPathComponent("Model.xcdatamodel", isDirectory: true)
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
                <entity name="Item" representedClassName="Item" syncable="YES" codeGenerationType="class">
                    <attribute name="timestamp" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                </entity>
            </model>
            """.write(to: package.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return package
    }

    @Test func thePersistenceControllerRunsInMemoryWithTheTemplatesModel() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let modelURL = try Self.shipTemplateModel(in: directory)
        // snippet: container-register-model
        // At start-up, before the first container is made: the model file, with its classes.
        ModelRegistry.shared.register(named: "Model") {
            try ManagedObjectModel(contentsOf: modelURL, classes: ["Item": Item.self])
        }
        // end-snippet

        let controller = PersistenceController(inMemory: true)
        let container = controller.container
        #expect(container.persistentStoreCoordinator.persistentStores.map(\.type) == [.inMemory])
        try await container.performBackgroundTask { context in
            Item(context: context).timestamp = Date(timeIntervalSince1970: 0)
            try context.save()
        }
        try await container.flush()
        let view = container.viewContext
        let timestamps = try await view.perform { try view.fetch(FetchRequest<Item>()).map(\.timestamp) }
        #expect(timestamps == [Date(timeIntervalSince1970: 0)])
    }

    @Test func descriptionsChooseEachStore() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = try ManagedObjectModel(version: "1") {
            Entity("Note", as: Note.self) { Attribute("title", .string) }
            Entity("Product", as: Product.self) { Attribute("name", .string) }
            Configuration("User", entities: "Note")
            Configuration("Scratch", entities: "Product")
        }
        // snippet: container-descriptions
        let container = PersistentContainer(name: "Notes", managedObjectModel: model)
        let user = PersistentStoreDescription(url: directory.appendingPathComponent("User.granary"))
        user.configuration = "User"
        user.durability = .normal(milliseconds: 100)   // Granary's own: sync the log at most every 100 ms
        let scratch = PersistentStoreDescription()
        scratch.configuration = "Scratch"
        scratch.type = .inMemory
        container.persistentStoreDescriptions = [user, scratch]
        try await container.loadPersistentStores()     // or loadPersistentStores { description, error in … }
        // end-snippet
        #expect(container.persistentStores.map(\.configurationName) == ["User", "Scratch"])
        #expect(container.persistentStores.map(\.type) == [.durable, .inMemory])
        try container.close()
    }

    @Test func remoteChangeNotificationsAreRefusedNotIgnored() throws {
        let model = try notesModel()
        let container = PersistentContainer(name: "Notes", managedObjectModel: model)
        container.persistentStoreDescriptions[0].url = URL(fileURLWithPath: "/dev/null")
        let printed = Printed()
        let print: @Sendable (any Error) -> Void = { printed.append("\($0)") }
        // snippet: container-history
        let description = container.persistentStoreDescriptions.first!
        description.setOption(true as NSNumber, forKey: PersistentStoreDescription.OptionKey.historyTracking)      // taken
        description.setOption(true as NSNumber, forKey: PersistentStoreDescription.OptionKey.remoteChangeNotificationPost)
        container.loadPersistentStores { description, error in
            print(error!)   // … option NSPersistentStoreRemoteChangeNotificationOptionKey is set, but remote-change notifications are not yet available …
        }
        // end-snippet
        let messages = printed.lines
        #expect(messages.count == 1)
        #expect(messages.first?.contains("option NSPersistentStoreRemoteChangeNotificationOptionKey is set, but remote-change notifications are not yet available") == true)
        #expect(container.persistentStores.isEmpty)

        // Without the remote-change option, the history option alone loads a store that records history.
        let tracked = PersistentContainer(name: "Notes", managedObjectModel: model)
        tracked.persistentStoreDescriptions[0].url = URL(fileURLWithPath: "/dev/null")
        tracked.persistentStoreDescriptions[0].setOption(true as NSNumber, forKey: PersistentStoreDescription.OptionKey.historyTracking)
        tracked.loadPersistentStores { _, error in #expect(error == nil) }
        #expect(tracked.persistentStores.first?.tracksPersistentHistory == true)
    }
}

/// What the snippets print, for the tests to read.
final class Printed: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ line: String) { storage.withLock { $0.append(line) } }
    var lines: [String] { storage.withLock { $0 } }
}
