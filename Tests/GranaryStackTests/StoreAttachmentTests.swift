import Foundation
import Granary
import GranaryStack
import Testing

@Suite struct StoreAttachmentTests {
    @Test func theDefaultOneLineStartOpensOneDurableStoreNamedAfterTheContainer() async throws {
        let directory = scratchDirectory()
        let container = try PersistentContainer(name: "Notes", model: stackModel, options: options(directory)).start()
        #expect(container.isStarted)
        #expect(container.storeDirectory == directory)
        let stores = container.persistentStores
        #expect(stores.count == 1 && stores[0].type == .durable && stores[0].configurationName == nil)
        #expect(stores[0].url?.standardizedFileURL == defaultStoreURL("Notes", in: directory).standardizedFileURL)
        try await saveNotes(["a"], in: container)
        try await container.performBackgroundTask { context in
            Account(context: context).name = "every entity goes to the default store"
            try context.save()
        }
        try container.detach(persistentStore: stores[0])
        #expect(try titlesOnDisk(at: defaultStoreURL("Notes", in: directory)) == ["a"])
    }

    @Test func theDefaultDirectoryIsThePerUserDataDirectory() {
        #expect(StoreDirectory.defaultURL(for: "Notes", environment: ["XDG_DATA_HOME": "/data/me", "HOME": "/home/me"]).path
                == "/data/me/Notes")
        #expect(StoreDirectory.defaultURL(for: "Notes", environment: ["HOME": "/home/me"]).path == "/home/me/.local/share/Notes")
        // A relative XDG_DATA_HOME is invalid by the XDG specification and ignored.
        #expect(StoreDirectory.defaultURL(for: "Notes", environment: ["XDG_DATA_HOME": "data", "HOME": "/home/me"]).path
                == "/home/me/.local/share/Notes")
        let container = PersistentContainer(name: "Notes", model: stackModel)
        #expect(container.storeDirectory == StoreDirectory.defaultURL(for: "Notes"))
        #expect(!container.isStarted)
    }

    @Test func twoConfigurationsOneInMemoryAndOneDurable() async throws {
        let directory = scratchDirectory()
        let container = PersistentContainer(name: "App", model: stackModel, strategy: .mixed, options: options(directory))
        let stores = try container.attachPersistentStores(at: nil, for: [
            StoreConfiguration(name: "User", type: .durable),
            StoreConfiguration(name: "Scratch", type: .inMemory),
        ])
        #expect(stores.map(\.type) == [.durable, .inMemory])
        #expect(stores[1].url == nil)
        try container.start()
        try await container.performBackgroundTask { context in
            Note(context: context).title = "kept"
            Draft(context: context).text = "forgotten"
            try context.save()
        }
        let counts = try await container.viewContext.perform {
            (try container.viewContext.count(for: FetchRequest<Note>()), try container.viewContext.count(for: FetchRequest<Draft>()))
        }
        #expect(counts == (1, 1))
        // Accounts belong to a configuration that is not attached.
        await #expect(throws: StackError.self) {
            try await container.viewContext.perform { try container.viewContext.count(for: FetchRequest<Account>()) }
        }
        try container.detach(persistentStores: container.persistentStores)

        let again = PersistentContainer(name: "App", model: stackModel, strategy: .mixed, options: options(directory))
        try again.attachPersistentStores(at: nil, for: [StoreConfiguration(name: "User"), StoreConfiguration(name: "Scratch", type: .inMemory)])
        try again.start()
        #expect(try await fetchedTitles(in: again.viewContext) == ["kept"])
        #expect(try await again.viewContext.perform { try again.viewContext.count(for: FetchRequest<Draft>()) } == 0)
    }

    @Test func perUserStoresInADirectoryChosenAfterStartUp() async throws {
        let root = scratchDirectory()
        let container = PersistentContainer(name: "App", model: stackModel, strategy: .direct, options: options(root))
        try container.attachPersistentStore(for: StoreConfiguration(name: "Global"))
        try container.start()
        for user in ["ada", "bob"] {
            // The user is known only now; their stores go in a directory of their own.
            let home = root.appendingPathComponent("users/\(user)", isDirectory: true)
            let stores = try container.attachPersistentStores(at: home, for: [StoreConfiguration(name: "User")])
            #expect(stores[0].url?.standardizedFileURL == home.appendingPathComponent("User.granary").standardizedFileURL)
            try await saveNotes(["\(user)'s note"], in: container)
            #expect(try await fetchedTitles(in: container.viewContext) == ["\(user)'s note"])
            try container.detach(persistentStores: stores)
        }
        #expect(try titlesOnDisk(at: root.appendingPathComponent("users/ada/User.granary")) == ["ada's note"])
        #expect(try titlesOnDisk(at: root.appendingPathComponent("users/bob/User.granary")) == ["bob's note"])
    }

    @Test func aGlobalStoreStaysUpWhileUserStoresComeAndGo() async throws {
        let root = scratchDirectory()
        let container = PersistentContainer(name: "App", model: stackModel, strategy: .nested, options: options(root))
        let global = try container.attachPersistentStore(for: StoreConfiguration(name: "Global"))
        try container.start()
        let view = container.viewContext
        try await container.performBackgroundTask { context in
            Account(context: context).name = "ada"
            try context.save()
        }
        try await container.flush()

        // Log-in: the user's stores join.
        let home = root.appendingPathComponent("ada", isDirectory: true)
        let userStores = try container.attachPersistentStores(at: home, for: [StoreConfiguration(name: "User"),
                                                                              StoreConfiguration(name: "Scratch", type: .inMemory)])
        let ids = try await saveNotes(["n1", "n2"], in: container)
        try await container.flush()
        let holder = try await load(ids, into: view)
        #expect(try await loadedTitle(ids[0], in: view) == "n1")

        // Log-out: the user's stores leave; their objects leave the view context; the global store stays.
        try container.detach(persistentStores: userStores)
        try await container.flush()
        #expect(try await view.perform { view.registeredObject(for: ids[0]) == nil })
        #expect(try await view.perform { holder.objects.allSatisfy { $0.managedObjectContext == nil } })
        let accounts = try await view.perform { try view.fetch(FetchRequest<Account>()).map(\.name) }
        #expect(accounts == ["ada"])
        #expect(container.persistentStores.map(\.identifier) == [global.identifier])

        // Fetches and saves against the detached store say which store it was.
        do {
            _ = try await fetchedTitles(in: view)
            Issue.record("fetched notes from a detached store")
        } catch let error as StackError {
            guard case .storeDetached(_, let configuration, let url, let entity) = error else { throw error }
            #expect(configuration == "User" && entity == "Note")
            #expect(url?.standardizedFileURL == home.appendingPathComponent("User.granary").standardizedFileURL)
            #expect(error.description.contains("configuration 'User'") && error.description.contains("ada/User.granary"))
        }
        let background = container.newBackgroundContext()
        await #expect(throws: StackError.self) {
            try await background.perform { _ = try background.existingObject(with: ids[0]) }
        }
        try container.detach(persistentStore: global)
        #expect(try titlesOnDisk(at: home.appendingPathComponent("User.granary")) == ["n1", "n2"])
    }

    @Test(arguments: StackKind.allCases)
    func closingAStackLetsItsStoresBeOpenedAgainAtOnce(kind: StackKind) async throws {
        let directory = scratchDirectory()
        let stack = try kind.make(directory, queue: .mainQueue)
        try await saveNotes(["kept"], in: stack)
        try await stack.flush()
        try stack.close()
        #expect(stack.persistentStores.isEmpty)
        let again = try kind.make(directory, queue: .mainQueue)
        #expect(try await fetchedTitles(in: again.viewContext) == ["kept"])
    }

    @Test(arguments: StackKind.allCases)
    func aDroppedStackClosesItsStoresOnceItsContextsAreGone(kind: StackKind) async throws {
        let directory = scratchDirectory()
        do {
            let stack = try kind.make(directory, queue: .mainQueue)
            try await saveNotes(["kept"], in: stack)
            try await stack.flush()
        }
        // The last blocks that held its contexts finish a moment after the stack is dropped.
        var again: (any PersistentStack)?
        for _ in 0..<100 where again == nil {
            again = try? kind.make(directory, queue: .mainQueue)
            if again == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let reopened = try #require(again)
        #expect(try await fetchedTitles(in: reopened.viewContext) == ["kept"])
    }

    @Test func fetchesAndSavesBeforeStartThrowNotStarted() async throws {
        let container = PersistentContainer(name: "Early", model: stackModel, options: options(scratchDirectory()))
        // A store attached before start is open (so problems show at once), but not yet in use.
        try container.attachPersistentStore(for: StoreConfiguration(name: "User"))
        do {
            _ = try await fetchedTitles(in: container.viewContext)
            Issue.record("fetched before start")
        } catch let error as StackError {
            guard case .notStarted(let name, let entity) = error else { throw error }
            #expect(name == "Early" && entity == "Note")
            #expect(error.description.contains("start()"))
        }
        await #expect(throws: StackError.self) { try await saveNotes(["a"], in: container) }
        try container.start()
        try await saveNotes(["a"], in: container)
        #expect(try await fetchedTitles(in: container.viewContext) == ["a"])
    }

    @Test func storesDetachedBeforeStartAreNotStarted() async throws {
        let directory = scratchDirectory()
        let container = PersistentContainer(name: "App", model: stackModel, options: options(directory))
        let user = try container.attachPersistentStore(for: StoreConfiguration(name: "User"))
        try container.attachPersistentStore(for: StoreConfiguration(name: "Global"))
        try container.detach(persistentStore: user)
        try container.start()
        #expect(container.persistentStores.map(\.configurationName) == ["Global"])
        // The detached store's files are closed: another coordinator can open them.
        #expect(try titlesOnDisk(at: directory.appendingPathComponent("User.granary")) == [])
    }

    @Test func attachAndDetachErrorsNameWhatIsWrong() throws {
        let directory = scratchDirectory()
        let container = PersistentContainer(name: "App", model: stackModel, options: options(directory))
        #expect(throws: StackError.self) { try container.attachPersistentStore(for: StoreConfiguration(name: "Nope")) }
        do {
            try container.attachPersistentStore(for: StoreConfiguration(name: "Nope"))
        } catch {
            #expect(error.description.contains("'Nope'") && error.description.contains("Global, Scratch, User"))
        }
        let user = try container.attachPersistentStore(for: StoreConfiguration(name: "User"))
        do {
            try container.attachPersistentStore(at: scratchDirectory(), for: StoreConfiguration(name: "User"))
            Issue.record("attached a configuration twice")
        } catch {
            guard case .alreadyAttached = error else { throw error }
        }
        // All or nothing: the second configuration's failure leaves the first unattached.
        #expect(throws: StackError.self) {
            try container.attachPersistentStores(at: nil, for: [StoreConfiguration(name: "Global"), StoreConfiguration(name: "User")])
        }
        #expect(container.persistentStores.count == 1)
        try container.start()
        #expect(throws: StackError.self) { try container.start() }

        // A store locked by another coordinator in this process.
        let other = PersistentStoreCoordinator(managedObjectModel: stackModel)
        let locked = directory.appendingPathComponent("locked", isDirectory: true)
        try other.addPersistentStore(type: .durable, configuration: "Global", at: locked.appendingPathComponent("Global.granary"))
        do {
            try container.attachPersistentStore(at: locked, for: StoreConfiguration(name: "Global"))
            Issue.record("attached a locked store")
        } catch {
            guard case .attachFailed(_, let configuration, let url, _) = error else { throw error }
            #expect(configuration == "Global" && url?.lastPathComponent == "Global.granary")
            #expect(error.description.contains("locked/Global.granary"))
        }
        try container.detach(persistentStore: user)
        #expect(throws: StackError.self) { try container.detach(persistentStore: user) }
    }

    @Test func fetchingAnEntityWhoseConfigurationWasNeverAttachedSaysWhatIsAttached() async throws {
        let container = PersistentContainer(name: "App", model: stackModel, options: options(scratchDirectory()))
        try container.attachPersistentStore(for: StoreConfiguration(name: "Global", type: .inMemory))
        try container.start()
        do {
            _ = try await fetchedTitles(in: container.viewContext)
            Issue.record("fetched notes without a store")
        } catch let error as StackError {
            guard case .noStoreForEntity(_, "Note", let attached) = error else { throw error }
            #expect(attached == ["Global"])
        }
    }
}
