import Foundation
import Granary
import GranaryStack
import Synchronization
import Testing

final class Note: ManagedObject {
    @Managed var title: String
    @Managed var rank: Int
}

final class Account: ManagedObject {
    @Managed var name: String
}

final class Draft: ManagedObject {
    @Managed var text: String
}

/// Notes (per user), accounts (global) and drafts (scratch), each in a configuration of its own.
let stackModel: ManagedObjectModel = {
    do {
        return try ManagedObjectModel(version: "1") {
            Entity("Note", as: Note.self) {
                Attribute("title", .string)
                Attribute("rank", .integer64, defaultValue: 0)
                Index("byRank", "rank")
            }
            Entity("Account", as: Account.self) {
                Attribute("name", .string)
            }
            Entity("Draft", as: Draft.self) {
                Attribute("text", .string)
            }
            Configuration("User", entities: "Note")
            Configuration("Global", entities: "Account")
            Configuration("Scratch", entities: "Draft")
        }
    } catch {
        fatalError("the test model does not build: \(error)")
    }
}()

/// A fresh directory under the temporary directory, named after the test.
func scratchDirectory(_ label: String = #function) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("granary-stack")
        .appendingPathComponent("\(label.filter { $0.isLetter })-\(UUID().uuidString.prefix(8))", isDirectory: true)
}

func options(_ directory: URL, queue: ManagedObjectContext.ConcurrencyType = .mainQueue,
             errors: ErrorLog? = nil) -> StackOptions {
    var options = StackOptions(storeDirectory: directory, viewContextQueue: queue)
    if let errors { options.backgroundSaveErrorHandler = { errors.append($0) } }
    return options
}

/// Collects the background-save failures a stack reports.
final class ErrorLog: Sendable {
    private let errors = Mutex<[StackError]>([])
    func append(_ error: StackError) { errors.withLock { $0.append(error) } }
    var all: [StackError] { errors.withLock { $0 } }
}

/// Inserts notes `titles` in a new background context and saves; returns their IDs.
@discardableResult
func saveNotes(_ titles: [String], in stack: some PersistentStack, rank: Int = 0) async throws -> [ManagedObjectID] {
    try await stack.performBackgroundTask { context in
        let notes = titles.map { title -> Note in
            let note = Note(context: context)
            note.title = title
            note.rank = rank
            return note
        }
        try context.save()
        return notes.map(\.objectID)
    }
}

/// The note titles in the store now, read by a fresh context on the coordinator (what any new reader
/// would see), sorted.
func storedTitles(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
    let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    return try reader.performAndWait { try reader.fetch(FetchRequest<Note>()).map(\.title).sorted() }
}

/// The note titles on disk: opens the store's directory with a coordinator of its own. The stack must
/// have detached (closed) the store first.
func titlesOnDisk(at url: URL) throws -> [String] {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: stackModel)
    let store = try coordinator.addPersistentStore(type: .durable, at: url)
    defer { try? coordinator.remove(store) }
    return try storedTitles(coordinator)
}

/// The view context's title of the note `id` as it has it loaded now (no fetch), or nil if not loaded.
func loadedTitle(_ id: ManagedObjectID, in context: ManagedObjectContext) async throws -> String? {
    try await context.perform {
        guard let note = context.registeredObject(for: id) as? Note, !note.isFault else { return nil }
        return note.title
    }
}

/// The note titles a fetch in `context` returns, sorted.
func fetchedTitles(in context: ManagedObjectContext) async throws -> [String] {
    try await context.perform { try context.fetch(FetchRequest<Note>()).map(\.title).sorted() }
}

/// Keeps objects loaded in a context for the length of a test (contexts hold unchanged objects weakly).
final class Holder: @unchecked Sendable {
    // @unchecked: used only on the queue of the context the objects belong to.
    var objects: [ManagedObject] = []
}

/// Loads the notes `ids` into `context` and keeps them loaded.
func load(_ ids: [ManagedObjectID], into context: ManagedObjectContext) async throws -> Holder {
    let holder = Holder()
    try await context.perform {
        holder.objects = try ids.map { try context.existingObject(with: $0) }
    }
    return holder
}

/// Renames the note `id` in a new background context and saves.
func rename(_ id: ManagedObjectID, to title: String, in stack: some PersistentStack) async throws {
    try await stack.performBackgroundTask { context in
        try #require(try context.existingObject(with: id) as? Note).title = title
        try context.save()
    }
}

/// The store URL of the default configuration of a stack named `name` in `directory`.
func defaultStoreURL(_ name: String, in directory: URL) -> URL {
    directory.appendingPathComponent("\(name).granary", isDirectory: true)
}

/// Holds the next save of `context` at its start (on the context's queue) until `release()`, so a test
/// can look at the store while a background save is pending.
final class SaveGate: Sendable {
    private final class State: Sendable {
        let semaphore = DispatchSemaphore(value: 0)
        let isArmed = Mutex(true)
        /// Waits the first time only.
        func pass() {
            if isArmed.withLock({ armed in defer { armed = false }; return armed }) { semaphore.wait() }
        }
    }
    private let state = State()
    private let observer: ContextObserver

    init(_ context: ManagedObjectContext) {
        let id = ObjectIdentifier(context)
        let state = state
        observer = ContextObserver(.willSave, where: { ObjectIdentifier($0) == id }) { _, _ in state.pass() }
    }

    func release() { state.semaphore.signal() }
}
