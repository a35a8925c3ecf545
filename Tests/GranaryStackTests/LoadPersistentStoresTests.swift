import Foundation
import Granary
@testable import GranaryStack
import Synchronization
import Testing

/// The `PersistenceController` of Apple's article "Setting up a Core Data stack" and of Xcode's app
/// template, with its durable store put where the test says through the description's URL (as written,
/// it would go in `PersistentContainer.defaultDirectoryURL()`).
final class DurablePersistenceController {
    static let modelName = "LoadPersistentStoresTests.Durable"
    let container: PersistentContainer

    init(storeURL: URL) {
        container = PersistentContainer(name: Self.modelName)
        container.persistentStoreDescriptions.first!.url = storeURL
        container.loadPersistentStores { description, error in
            if let error {
                fatalError("Unresolved error \(error)")
            }
        }
        container.viewContext.automaticallyMergesChangesFromParent = true
    }
}

/// `loadPersistentStores(completionHandler:)` as Apple documents it: "NSPersistentContainer",
/// `loadPersistentStores(completionHandler:)` ("Instructs the persistent container to load the
/// persistent stores"; the handler is called once for each store), and the article "Setting up a Core
/// Data stack" (make the container, load its stores, use `viewContext`).
@Suite struct LoadPersistentStoresTests {
    /// A container made from a name, as Core Data's `init(name:)`, with its model in a registry of the
    /// test's own.
    func container(_ name: String = "Notes", model: ManagedObjectModel = stackModel) -> PersistentContainer {
        let registry = ModelRegistry()
        registry.register(model, named: name)
        return PersistentContainer(name: name, search: ModelSearch(registry: registry, directories: []))
    }

    /// The handler's calls, in order.
    final class Calls: Sendable {
        private let calls = Mutex<[(description: PersistentStoreDescription, error: StackError?)]>([])
        var handler: @Sendable (PersistentStoreDescription, (any Error)?) -> Void {
            { description, error in
                self.calls.withLock { $0.append((description, error.map { $0 as! StackError })) }
            }
        }
        var all: [(description: PersistentStoreDescription, error: StackError?)] { calls.withLock { $0 } }
        var errors: [StackError?] { all.map(\.error) }
    }

    // "Setting up a Core Data stack": a durable store where the description's URL says.
    @Test func aDurableStoreLoadsWhereTheDescriptionSaysAndTheViewContextWorks() async throws {
        let directory = scratchDirectory()
        let url = directory.appendingPathComponent("Elsewhere.granary", isDirectory: true)
        let container = container()
        container.persistentStoreDescriptions.first!.url = url
        let calls = Calls()
        container.loadPersistentStores(completionHandler: calls.handler)
        // Synchronous: called before loadPersistentStores returned, once for the one description.
        #expect(calls.all.count == 1 && calls.errors[0] == nil)
        #expect(calls.all[0].description === container.persistentStoreDescriptions[0])
        let stores = container.persistentStoreCoordinator.persistentStores
        #expect(stores.count == 1 && stores[0].type == .durable)
        #expect(stores[0].url?.standardizedFileURL == url.standardizedFileURL)
        #expect(container.isStarted && container.persistentStores.count == 1)

        let view = container.viewContext
        try await view.perform {
            Note(context: view).title = "saved in the view context"
            try view.save()
        }
        try container.close()
        #expect(try titlesOnDisk(at: url) == ["saved in the view context"])
    }

    @Test func theTemplatesPersistenceControllerKeepsItsStoreWhereTheDescriptionSays() async throws {
        ModelRegistry.shared.register(stackModel, named: DurablePersistenceController.modelName)
        let url = scratchDirectory().appendingPathComponent("Model.granary", isDirectory: true)
        let first = DurablePersistenceController(storeURL: url)
        #expect(first.container.persistentStoreCoordinator.persistentStores.map(\.url?.standardizedFileURL) == [url.standardizedFileURL])
        try await saveNotes(["written in the background"], in: first.container)
        try await first.container.flush()
        #expect(try await fetchedTitles(in: first.container.viewContext) == ["written in the background"])
        try first.container.close()

        let second = DurablePersistenceController(storeURL: url)
        #expect(try await fetchedTitles(in: second.container.viewContext) == ["written in the background"])
        try second.container.close()
    }

    // NSPersistentStoreDescription: an in-memory store by type, or by the URL /dev/null.
    @Test(arguments: ["type", "/dev/null"])
    func anInMemoryStoreByTypeOrByDevNull(_ how: String) async throws {
        let container = container()
        if how == "type" {
            container.persistentStoreDescriptions[0].type = .inMemory
        } else {
            container.persistentStoreDescriptions[0].url = URL(fileURLWithPath: "/dev/null")
        }
        let calls = Calls()
        container.loadPersistentStores(completionHandler: calls.handler)
        #expect(calls.all.count == 1 && calls.errors[0] == nil)
        let stores = container.persistentStoreCoordinator.persistentStores
        #expect(stores.count == 1 && stores[0].type == .inMemory && stores[0].url == nil)
        try await saveNotes(["in memory"], in: container)
        try await container.flush()
        #expect(try await fetchedTitles(in: container.viewContext) == ["in memory"])
    }

    // "The completion handler is called once for each persistent store that is created", with the error
    // if there is one; a store that fails does not stop the others.
    @Test func theHandlerIsCalledOncePerDescriptionAndOneFailureLeavesTheOthersLoaded() throws {
        let directory = scratchDirectory()
        let container = container()
        let user = PersistentStoreDescription(url: directory.appendingPathComponent("User.granary"))
        user.configuration = "User"
        let unknown = PersistentStoreDescription(url: directory.appendingPathComponent("Nothing.granary"))
        unknown.configuration = "Nothing"
        let global = PersistentStoreDescription()
        global.configuration = "Global"
        global.type = .inMemory
        container.persistentStoreDescriptions = [user, unknown, global]
        let calls = Calls()
        container.loadPersistentStores(completionHandler: calls.handler)
        #expect(calls.all.count == 3 && zip(calls.all.map(\.description), [user, unknown, global]).allSatisfy { $0 === $1 })
        #expect(calls.errors[0] == nil && calls.errors[2] == nil)
        guard case .unknownConfiguration(_, "Nothing", let known)? = calls.errors[1] else {
            Issue.record("expected unknownConfiguration, got \(String(describing: calls.errors[1]))")
            return
        }
        #expect(Set(known) == ["User", "Global", "Scratch"])
        #expect(container.persistentStores.map(\.configurationName) == ["User", "Global"])
        try container.close()
    }

    @Test func loadingTwiceOrAfterStartIsAnError() throws {
        let twice = container()
        twice.persistentStoreDescriptions[0].type = .inMemory
        twice.loadPersistentStores { _, error in #expect(error == nil) }
        let calls = Calls()
        twice.loadPersistentStores(completionHandler: calls.handler)
        guard case .alreadyStarted("Notes")? = calls.errors.first, calls.all.count == 1 else {
            Issue.record("expected alreadyStarted, got \(calls.errors)")
            return
        }
        #expect(twice.persistentStores.count == 1)
        #expect(throws: StackError.self) { try twice.start() }

        let started = try PersistentContainer(name: "Started", model: stackModel, options: options(scratchDirectory())).start()
        let afterStart = Calls()
        started.loadPersistentStores(completionHandler: afterStart.handler)
        guard case .alreadyStarted("Started")? = afterStart.errors.first else {
            Issue.record("expected alreadyStarted, got \(afterStart.errors)")
            return
        }
        try started.close()
    }

    // NSPersistentStoreDescription.shouldAddStoreAsynchronously: "the store is added asynchronously on a
    // background queue".
    @Test func anAsynchronousDescriptionLoadsOnABackgroundQueueAfterTheCallReturns() async throws {
        let container = container()
        container.persistentStoreDescriptions[0].type = .inMemory
        container.persistentStoreDescriptions[0].shouldAddStoreAsynchronously = true
        let returned = DispatchSemaphore(value: 0)
        let outcome: (waited: DispatchTimeoutResult, error: (any Error)?, stores: Int) = await withCheckedContinuation { continuation in
            container.loadPersistentStores { _, error in
                // Had the store been loaded on the calling thread, this would wait out its timeout.
                let waited = returned.wait(timeout: .now() + 5)
                continuation.resume(returning: (waited, error, container.persistentStoreCoordinator.persistentStores.count))
            }
            returned.signal()
        }
        #expect(outcome.waited == .success)
        #expect(outcome.error == nil && outcome.stores == 1)
        try await saveNotes(["loaded in the background"], in: container)
    }

    @Test func theAsyncFormLoadsEveryStoreAndThrowsTheFirstError() async throws {
        let container = container()
        container.persistentStoreDescriptions[0].type = .inMemory
        let stores = try await container.loadPersistentStores()
        #expect(stores.count == 1 && stores[0] === container.persistentStores[0])
        try await saveNotes(["awaited"], in: container)
        await #expect(throws: StackError.self) { try await container.loadPersistentStores() }

        let failing = self.container()
        let remote = PersistentStoreDescription()
        remote.type = .inMemory
        remote.setOption(true, forKey: PersistentStoreDescription.OptionKey.remoteChangeNotificationPost)
        failing.persistentStoreDescriptions = [remote]
        do {
            try await failing.loadPersistentStores()
            Issue.record("loaded a store asking for remote-change notifications")
        } catch {
            guard case .unsupportedOption(_, _, PersistentStoreDescription.OptionKey.remoteChangeNotificationPost, _) = error else { throw error }
        }
    }

    // NSPersistentStoreRemoteChangeNotificationPostOptionKey: Granary posts no remote-change
    // notifications yet, so asking for them fails the load instead of being ignored.
    @Test(arguments: [PersistentStoreDescription.OptionKey.remoteChangeNotificationPost])
    func askingForRemoteChangesFailsTheLoad(_ key: String) throws {
        let directory = scratchDirectory()
        let url = directory.appendingPathComponent("History.granary")
        let container = container()
        let description = container.persistentStoreDescriptions[0]
        description.url = url
        description.setOption(true as NSNumber, forKey: key)   // as Core Data code sets it
        let calls = Calls()
        container.loadPersistentStores(completionHandler: calls.handler)
        guard case .unsupportedOption("Notes", let failedURL, key, let reason)? = calls.errors.first else {
            Issue.record("expected unsupportedOption, got \(calls.errors)")
            return
        }
        #expect(failedURL == url)
        #expect(reason.contains("not yet available"))
        #expect(calls.errors.first??.description.contains(key) == true)
        #expect(container.persistentStores.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: url.path), "nothing is created for a store that does not load")

        // Set to false (or removed), the option asks for nothing.
        let again = self.container()
        again.persistentStoreDescriptions[0].type = .inMemory
        again.persistentStoreDescriptions[0].setOption(false, forKey: key)
        again.loadPersistentStores { _, error in #expect(error == nil) }
        #expect(again.persistentStores.count == 1)
    }

    // NSPersistentContainer.init(name:): "By default, the provided name value is used to name the
    // persistent store and is used to look up the name of the NSManagedObjectModel object to be used."
    @Test func aMissingModelFailsEveryLoadNamingThePlacesSearched() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("granary-no-models-\(UUID().uuidString)")
        let container = PersistentContainer(name: "Absent", search: ModelSearch(registry: ModelRegistry(), directories: [empty]))
        #expect(container.managedObjectModel.entities.isEmpty)
        let second = PersistentStoreDescription()
        second.type = .inMemory
        container.persistentStoreDescriptions.append(second)
        let calls = Calls()
        container.loadPersistentStores(completionHandler: calls.handler)
        #expect(calls.all.count == 2)
        for error in calls.errors {
            guard case .modelNotFound("Absent", [], [empty.standardizedFileURL])? = error else {
                Issue.record("expected modelNotFound, got \(String(describing: error))")
                continue
            }
            #expect(error!.description.contains(empty.path) && error!.description.contains("Absent.xcdatamodeld"))
        }
        #expect(!container.isStarted)
        #expect(throws: StackError.self) { try container.start() }
    }

    // NSPersistentStoreDescription.shouldMigrateStoreAutomatically, mapped onto MigrationOptions.
    @Test func theMigrationFlagsOfTheDescriptionDecideWhetherAnOlderStoreIsMigrated() throws {
        let url = scratchDirectory().appendingPathComponent("Old.granary", isDirectory: true)
        let old = container(model: stackModel)
        old.persistentStoreDescriptions[0].url = url
        old.loadPersistentStores { _, error in #expect(error == nil) }
        try old.close()

        let newer = try ManagedObjectModel(version: "2") {
            Entity("Note", as: Note.self) {
                Attribute("title", .string)
                Attribute("rank", .integer64, defaultValue: 0)
                Attribute("pinned", .boolean, defaultValue: false)
                Index("byRank", "rank")
            }
            Entity("Account", as: Account.self) { Attribute("name", .string) }
            Entity("Draft", as: Draft.self) { Attribute("text", .string) }
        }
        let refusing = container(model: newer)
        refusing.persistentStoreDescriptions[0].url = url
        refusing.persistentStoreDescriptions[0].shouldMigrateStoreAutomatically = false
        let calls = Calls()
        refusing.loadPersistentStores(completionHandler: calls.handler)
        guard case .attachFailed(_, nil, url?, let underlying)? = calls.errors.first, underlying is MigrationError else {
            Issue.record("expected attachFailed with a MigrationError, got \(calls.errors)")
            return
        }

        let migrating = container(model: newer)
        migrating.persistentStoreDescriptions[0].url = url
        migrating.loadPersistentStores { _, error in #expect(error == nil) }
        #expect(migrating.persistentStores.first?.migrationReport?.path.isEmpty == false)
        try migrating.close()
    }

    @Test func aReadOnlyDescriptionOpensTheStoreReadOnly() async throws {
        let url = scratchDirectory().appendingPathComponent("Shared.granary", isDirectory: true)
        let writer = container()
        writer.persistentStoreDescriptions[0].url = url
        writer.loadPersistentStores { _, error in #expect(error == nil) }
        try await saveNotes(["written"], in: writer)
        try writer.close()

        let reader = container()
        reader.persistentStoreDescriptions[0].url = url
        reader.persistentStoreDescriptions[0].isReadOnly = true
        reader.loadPersistentStores { _, error in #expect(error == nil) }
        #expect(try await fetchedTitles(in: reader.viewContext) == ["written"])
        await #expect(throws: (any Error).self) { try await saveNotes(["refused"], in: reader) }
        try reader.close()
    }

    @Test func startOpensTheDescriptionsWhenNothingWasAttached() async throws {
        let container = PersistentContainer(name: "Notes", model: stackModel, strategy: .mixed, options: options(scratchDirectory()))
        #expect(container.persistentStoreDescriptions.map(\.url) == [defaultStoreURL("Notes", in: container.storeDirectory)])
        container.persistentStoreDescriptions[0].url = URL(fileURLWithPath: "/dev/null")
        try container.start()
        #expect(container.persistentStores.map(\.type) == [.inMemory])
        try await saveNotes(["started"], in: container)
    }
}
