import Foundation
import Granary
import GranaryStack
import Testing

/// The stacks a test can run against, one per layout.
enum StackKind: String, CaseIterable, Sendable {
    case direct, independent, nested, mixed, importing

    func make(_ directory: URL, queue: ManagedObjectContext.ConcurrencyType) throws -> any PersistentStack {
        let options = options(directory, queue: queue)
        switch self {
        case .direct: return try PersistentContainer(name: "Kind", model: stackModel, strategy: .direct, options: options).start()
        case .independent: return try PersistentContainer(name: "Kind", model: stackModel, strategy: .independent, options: options).start()
        case .nested: return try PersistentContainer(name: "Kind", model: stackModel, strategy: .nested, options: options).start()
        case .mixed: return try PersistentContainer(name: "Kind", model: stackModel, strategy: .mixed, options: options).start()
        case .importing: return try ImportingContainer(name: "Kind", model: stackModel, options: options).start()
        }
    }
}

/// The view context on the main queue (the main queue runs under `swift test`) and on a private queue,
/// used from many tasks at once while background saves merge into it: no deadlock, nothing lost.
@Suite struct ViewContextQueueTests {
    @Test(.timeLimit(.minutes(1)), arguments: StackKind.allCases, [ManagedObjectContext.ConcurrencyType.mainQueue, .privateQueue])
    func concurrentBackgroundSavesAndViewFetchesFinish(kind: StackKind, queue: ManagedObjectContext.ConcurrencyType) async throws {
        let stack = try kind.make(scratchDirectory(), queue: queue)
        let view = stack.viewContext
        #expect(view.concurrencyType == queue)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<3 {
                group.addTask {
                    for batch in 0..<10 { try await saveNotes((0..<5).map { "w\(writer)-\(batch)-\($0)" }, in: stack) }
                }
            }
            for reader in 0..<3 {
                group.addTask {
                    for round in 0..<20 {
                        if (reader + round).isMultiple(of: 2) {
                            _ = try await view.perform { try view.count(for: FetchRequest<Note>()) }
                        } else {
                            // performAndWait from a thread of its own, as blocking code would.
                            _ = try await Task.detached { try view.performAndWait { try view.fetch(FetchRequest<Note>(fetchLimit: 20)).count } }.value
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await stack.flush()
        #expect(try await view.perform { try view.count(for: FetchRequest<Note>()) } == 150)
        #expect(try storedTitles(stack.persistentStoreCoordinator).count == 150)
    }
}
