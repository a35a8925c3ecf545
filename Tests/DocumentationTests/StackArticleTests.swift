import Foundation
import Granary
import GranaryStack
import Testing

final class Note: ManagedObject {
    @Managed var title: String
}

final class Product: ManagedObject {
    @Managed var name: String
}

/// Notes and products, the models of GranaryStack's landing page and articles.
func notesModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "1") {
        Entity("Note", as: Note.self) { Attribute("title", .string) }
        Entity("Product", as: Product.self) { Attribute("name", .string) }
    }
}

/// The code of GranaryStack's landing page and of the article "Choosing a context strategy".
@Suite struct StackArticleTests {
    /// Compiled, not run: without `StackOptions(storeDirectory:)` it would write to the per-user data
    /// directory of whoever runs the tests. `theOneLineStartRunsInAScratchDirectory` runs the same.
    func oneLineStart(model: ManagedObjectModel) async throws {
        // snippet: stack-start
        let container = try PersistentContainer(name: "Notes", model: model).start()   // .direct, the default
        let view = container.viewContext                                                 // main queue
        try await container.performBackgroundTask { context in                           // private queue
            Note(context: context).title = "written off the main queue"
            try context.save()                                                           // merged into `view`
        }
        let count = try await view.perform { try view.count(for: FetchRequest<Note>()) }
        // end-snippet
        _ = count
    }

    @Test func theOneLineStartRunsInAScratchDirectory() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = try notesModel()
        let container = try PersistentContainer(name: "Notes", model: model, options: StackOptions(storeDirectory: directory)).start()
        let view = container.viewContext
        try await container.performBackgroundTask { context in
            Note(context: context).title = "written off the main queue"
            try context.save()
        }
        try await container.flush()
        let count = try await view.perform { try view.count(for: FetchRequest<Note>()) }
        #expect(count == 1)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("Notes.granary").path))
        try container.close()
    }

    @Test func everyStrategyStartsInOneLine() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = try notesModel()
        // snippet: stack-strategies
        let options = StackOptions(storeDirectory: directory)
        let direct      = try PersistentContainer(name: "Direct", model: model, strategy: .direct, options: options).start()
        let independent = try PersistentContainer(name: "Independent", model: model, strategy: .independent, options: options).start()
        let nested      = try PersistentContainer(name: "Nested", model: model, strategy: .nested, options: options).start()
        let mixed       = try PersistentContainer(name: "Mixed", model: model, strategy: .mixed, options: options).start()
        let importing   = try ImportingContainer(name: "Importing", model: model, options: options).start()
        // end-snippet
        let stacks: [any PersistentStack] = [direct, independent, nested, mixed, importing]
        for stack in stacks {
            try await stack.performBackgroundTask { context in
                Note(context: context).title = "a note"
                try context.save()
            }
        }
        try await nested.flush()
        for stack in stacks {
            let check = PersistentStoreCoordinator(managedObjectModel: model)
            try stack.close()
            try check.addPersistentStore(type: .durable, at: directory.appendingPathComponent("\(stack.name).granary"))
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: check)
            #expect(try context.performAndWait { try context.count(for: FetchRequest<Note>()) } == 1, "\(stack.name)")
        }
    }

    @Test func aToolUsesAPrivateViewContextAndARegisteredModel() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = try notesModel()
        // snippet: stack-tool
        let options = StackOptions(storeDirectory: directory, viewContextQueue: .privateQueue)  // a tool or a service
        let models = ModelRegistry()                  // or ModelRegistry.shared, which the name alone uses
        models.register(model, named: "Notes")
        let container = try PersistentContainer(name: "Notes", strategy: .mixed, options: options, models: models).start()
        // end-snippet
        #expect(container.viewContext.concurrencyType == .privateQueue)
        try container.close()
    }

    @Test func anImportRunsInChunksThroughTheWriterCoordinator() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = try notesModel()
        let options = StackOptions(storeDirectory: directory)
        let names = (0..<5_000).map { "product \($0)" }
        // snippet: stack-importing
        let container = try ImportingContainer(name: "Catalog", model: model, options: options).start()
        for start in stride(from: 0, to: names.count, by: 2_000) {
            let chunk = names[start..<min(start + 2_000, names.count)]
            let importer = container.importerContext()    // private queue, writer coordinator, object-trump
            try await importer.perform {
                for name in chunk { Product(context: importer).name = name }
                try importer.save()                       // straight to the store; the view context only merges
            }                                             // what it has loaded
        }
        // end-snippet
        let view = container.viewContext
        #expect(try await view.perform { try view.count(for: FetchRequest<Product>()) } == 5_000)
        try container.close()
    }
}
