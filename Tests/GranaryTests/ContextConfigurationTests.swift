import Foundation
import Testing
@testable import Granary

/// A context's parent, coordinator, name and author, and Core Data's fire-and-forget `perform`.
@Suite struct ContextConfigurationTests {
    // Apple: NSManagedObjectContext.persistentStoreCoordinator and .parent are settable ("var … { get set }").
    @Test func parentAndCoordinatorCanBeSetBeforeFirstUse() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeNotesModel())
        try coordinator.addPersistentStore(type: .inMemory)
        let root = ManagedObjectContext(concurrencyType: .privateQueue)
        root.persistentStoreCoordinator = coordinator
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = root
        #expect(child.parent === root)
        #expect(child.persistentStoreCoordinator === coordinator)
        try child.performAndWait {
            let note = Note(context: child)
            note.title = "Through the parent"
            try child.save()
        }
        let titles = try root.performAndWait {
            try root.save()
            return try root.fetch(FetchRequest<Note>()).map(\.title)
        }
        #expect(titles == ["Through the parent"])
    }

    // Apple: NSManagedObjectContext.persistentStoreCoordinator — "Setting persistentStoreCoordinator to
    // nil will raise an exception"; Core Data raises as well on replacing the stores of a context in use.
    // Granary stops the program (a programmer error), checked in a child process.
    @Test func settingTheCoordinatorOfAContextInUseStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let (coordinator, context) = try makeNotesStack()
            context.performAndWait { _ = Note(context: context) }
            context.persistentStoreCoordinator = coordinator
        }
        await #expect(processExitsWith: .failure) {
            let (_, context) = try makeNotesStack()
            _ = try context.performAndWait { try context.fetch(FetchRequest<Note>()) }
            context.parent = ManagedObjectContext(concurrencyType: .privateQueue)
        }
    }

    // Apple: NSManagedObjectContext.perform(_:) — "Asynchronously performs a specified closure on the
    // context's queue." Called without await from synchronous code. (In async code Swift prefers the
    // async overload, as with Core Data's `perform(schedule:_:)`: there one writes `await perform`.)
    @Test func performWithoutAwaitRunsTheBlockOnTheContextsQueue() async throws {
        let (_, context) = try makeNotesStack()
        let ran = HookJournal()
        let done = DispatchSemaphore(value: 0)
        func fireAndForget() {
            context.perform {
                ran.lines.append(context.isOnQueue ? "on queue" : "off queue")
                done.signal()
            }
        }
        fireAndForget()
        done.wait()
        let result = try await context.perform { context.isOnQueue }
        #expect(ran.lines == ["on queue"])
        #expect(result)
    }

    // Apple: NSManagedObjectContext.name and .transactionAuthor — a name for the context and the author
    // of its transactions; Granary shows both in the description and in did-save notifications.
    @Test func nameAndAuthorTravelWithTheSave() throws {
        let (_, context) = try makeNotesStack()
        context.name = "editor"
        context.transactionAuthor = "importer"
        #expect(context.description.contains("editor") && context.description.contains("author: importer"))
        let seen = HookJournal()
        let observer = NotificationCenter.default.addObserver(forName: .managedObjectContextDidSave, object: context, queue: nil) {
            seen.lines.append("\($0.userInfo?[ContextChanges.contextNameKey] ?? "-") \($0.userInfo?[ContextChanges.transactionAuthorKey] ?? "-")")
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.performAndWait {
            let note = Note(context: context)
            note.title = "Imported"
            try context.save()
        }
        #expect(seen.lines == ["editor importer"])
    }
}
