import Foundation
import Granary
import GranaryStack
import Synchronization
import Testing

@Suite struct ModelRegistryTests {
    @Test func aContainerLoadsItsModelByName() async throws {
        let registry = ModelRegistry()
        registry.register(stackModel, named: "Notes")
        let container = try PersistentContainer(name: "Notes", strategy: .mixed, options: options(scratchDirectory()), models: registry)
        #expect(container.managedObjectModel === stackModel)
        try container.start()
        try await saveNotes(["by name"], in: container)
        try await container.flush()
        #expect(try await fetchedTitles(in: container.viewContext) == ["by name"])
        let importing = try ImportingContainer(name: "Notes", options: options(scratchDirectory()), models: registry)
        #expect(importing.managedObjectModel === stackModel)
    }

    @Test func factoriesRunOnceOnFirstUse() throws {
        let registry = ModelRegistry()
        let calls = Mutex(0)
        registry.register(named: "Lazy") {
            calls.withLock { $0 += 1 }
            return stackModel
        }
        #expect(calls.withLock { $0 } == 0)
        #expect(try registry.model(named: "Lazy") === stackModel)
        #expect(try registry.model(named: "Lazy") === stackModel)
        #expect(calls.withLock { $0 } == 1)
        #expect(registry.names == ["Lazy"])
    }

    @Test func anUnknownNameListsTheRegisteredOnes() throws {
        let registry = ModelRegistry()
        registry.register(stackModel, named: "Notes")
        #expect(throws: StackError.self) { try registry.model(named: "Todo") }
        do {
            _ = try registry.model(named: "Todo")
        } catch let error as StackError {
            guard case .unknownModel("Todo", ["Notes"]) = error else { throw error }
            #expect(error.description.contains("'Todo'") && error.description.contains("Notes"))
        }
    }

    @Test func aContainerNamedForAnUnknownModelListsTheRegisteredOnesAndThePlacesSearched() throws {
        let registry = ModelRegistry()
        registry.register(stackModel, named: "Notes")
        do {
            _ = try PersistentContainer(name: "Todo", options: options(scratchDirectory()), models: registry)
            Issue.record("made a container without a model")
        } catch {
            guard case .modelNotFound("Todo", ["Notes"], let searched) = error else { throw error }
            #expect(!searched.isEmpty)
            #expect(error.description.contains("'Todo'") && error.description.contains("Notes"))
            #expect(error.description.contains("Todo.xcdatamodeld") && error.description.contains(searched[0].path))
        }
    }
}
