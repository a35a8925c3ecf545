import Foundation
import Granary
import GranaryStack
import Testing

/// A strategy of the user's own: background contexts are children of the view context, whose saves
/// go straight to the store. (A layout the built-in ones avoid, because background work then runs
/// through the view context's queue; here it shows that `ContextStrategy` is enough to build one.)
struct ChildrenOfTheViewStrategy: ContextStrategy {
    final class Contexts: StackContexts {
        let viewContext: ManagedObjectContext
        private let environment: StackEnvironment
        private let observer: ContextObserver

        init(_ environment: StackEnvironment) {
            self.environment = environment
            let view = environment.makeContext("view", queue: environment.viewContextQueue, mergePolicy: .mergeByPropertyStoreTrump)
            viewContext = view
            let viewID = ObjectIdentifier(view)
            // A child's save lands in the view context, which then writes it.
            observer = ContextObserver(.didSave, where: { $0.parent.map(ObjectIdentifier.init) == viewID }) { [weak view] _, _ in
                guard let view else { return }
                view.schedule { try? view.save() }
            }
        }

        var ownedContexts: [ManagedObjectContext] { [viewContext] }

        func newBackgroundContext() -> ManagedObjectContext {
            environment.makeContext("child", queue: .privateQueue, parent: viewContext, mergePolicy: .mergeByPropertyObjectTrump)
        }

        func flush() async throws {
            _ = try await viewContext.perform {}
        }
    }

    func makeContexts(_ environment: StackEnvironment) -> Contexts { Contexts(environment) }
}

@Suite struct CustomStrategyTests {
    @Test func aUserStrategyLaysOutTheContexts() async throws {
        let container = try PersistentContainer(name: "Custom", model: stackModel, strategy: ChildrenOfTheViewStrategy(),
                                                options: options(scratchDirectory())).start()
        #expect(container.viewContext.name == "Custom.view")
        #expect(container.newBackgroundContext().parent === container.viewContext)
        try await saveNotes(["through the view"], in: container)
        // In the view context as soon as the child saved; in the store once the view context wrote it.
        #expect(try await fetchedTitles(in: container.viewContext) == ["through the view"])
        try await container.flush()
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["through the view"])
    }

    @Test func theReadOnlyViewExampleOfTheDocumentationWorks() async throws {
        struct ReadOnlyViewStrategy: ContextStrategy {
            func makeContexts(_ environment: StackEnvironment) -> DirectContexts {
                let contexts = DirectStrategy().makeContexts(environment)
                contexts.viewContext.isReadOnly = true
                return contexts
            }
        }
        let container = try PersistentContainer(name: "Custom", model: stackModel, strategy: ReadOnlyViewStrategy(),
                                                options: options(scratchDirectory())).start()
        await #expect(throws: ContextError.self) {
            try await container.viewContext.perform {
                Note(context: container.viewContext).title = "no"
                try container.viewContext.save()
            }
        }
    }
}
