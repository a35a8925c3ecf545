import Foundation
import Granary
import GranaryStack
import Testing

// The sample of GranaryStack's article "Stores that come and go", shown there word for word (checked by
// DocumentationTests).
// snippet: stack-session
/// Accounts live in one global store; each user's notes live in a directory of their own, attached at
/// log-in and detached at log-out while the global store stays up.
final class Session {
    let container: PersistentContainer
    private var userStores: [PersistentStore] = []

    init(model: ManagedObjectModel, options: StackOptions = StackOptions()) throws {
        container = PersistentContainer(name: "Notes", model: model, strategy: .mixed, options: options)
        try container.attachPersistentStore(for: StoreConfiguration(name: "Global"))  // <storeDirectory>/Global.granary
        try container.start()
    }

    /// The user is known only now: their stores go in a directory chosen at this point.
    func logIn(_ user: String) throws {
        let directory = container.storeDirectory.appendingPathComponent("users/\(user)", isDirectory: true)
        userStores = try container.attachPersistentStores(at: directory, for: [
            StoreConfiguration(name: "User"),                      // durable: users/<user>/User.granary
            StoreConfiguration(name: "Scratch", type: .inMemory),  // gone at log-out
        ])
    }

    /// The user's objects leave the view context; fetching them now throws `StackError.storeDetached`.
    func logOut() throws {
        try container.detach(persistentStores: userStores)
        userStores = []
    }
}
// end-snippet

@Suite struct PerUserStoresSampleTests {
    @Test func thePerUserStoreSampleWorks() async throws {
        let session = try Session(model: stackModel, options: StackOptions(storeDirectory: scratchDirectory()))
        let container = session.container
        try await container.performBackgroundTask { context in
            Account(context: context).name = "ada"
            try context.save()
        }
        try session.logIn("ada")
        try await saveNotes(["ada's note"], in: container)
        try await container.flush()
        #expect(try await fetchedTitles(in: container.viewContext) == ["ada's note"])
        try session.logOut()
        await #expect(throws: StackError.self) { try await fetchedTitles(in: container.viewContext) }
        try session.logIn("bob")
        #expect(try await fetchedTitles(in: container.viewContext) == [])
        let accounts = try await container.viewContext.perform { try container.viewContext.count(for: FetchRequest<Account>()) }
        #expect(accounts == 1)
        try session.logOut()
        try session.logIn("ada")
        #expect(try await fetchedTitles(in: container.viewContext) == ["ada's note"])
    }
}
