import Foundation
import Granary
import GranaryStack

/// One imported object of the stacks table: a title, an indexed rank, a date.
final class ImportedItem: ManagedObject {
    @Managed var title: String
    @Managed var rank: Int
    @Managed var created: Date
}

/// The layouts the stacks table compares: the four strategies of `PersistentContainer` and the
/// two-coordinator `ImportingContainer`.
enum StackLayout: String, CaseIterable, Sendable {
    case direct, independent, nested, mixed, importing

    var title: String {
        switch self {
        case .importing: return "ImportingContainer"
        default: return "PersistentContainer .\(rawValue)"
        }
    }

    /// A started stack of this layout with one durable store (durability `.full`) in `folder`, its view
    /// context on the main queue.
    /// - Throws: `StackError` when the store cannot be opened.
    func makeStack(in folder: URL, model: ManagedObjectModel) throws -> any PersistentStack {
        let options = StackOptions(storeDirectory: folder, viewContextQueue: .mainQueue)
        switch self {
        case .direct: return try PersistentContainer(name: "Import", model: model, strategy: .direct, options: options).start()
        case .independent: return try PersistentContainer(name: "Import", model: model, strategy: .independent, options: options).start()
        case .nested: return try PersistentContainer(name: "Import", model: model, strategy: .nested, options: options).start()
        case .mixed: return try PersistentContainer(name: "Import", model: model, strategy: .mixed, options: options).start()
        case .importing: return try ImportingContainer(name: "Import", model: model, options: options).start()
        }
    }

    /// A context for one import chunk: an importer context for the two-coordinator container, the
    /// strategy's background context otherwise.
    func importContext(of stack: any PersistentStack) -> ManagedObjectContext {
        (stack as? ImportingContainer)?.importerContext() ?? stack.newBackgroundContext()
    }
}

/// The stacks workload: import objects in chunks on a background thread while the main thread fetches
/// the 20 visible objects every frame.
enum StackImport {
    static func makeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("ImportedItem", as: ImportedItem.self) {
                Attribute("title", .string)
                Attribute("rank", .integer64, indexed: true)
                Attribute("created", .date)
            }
        }
    }

    /// The visible list: the 20 lowest ranks, answered from the rank index.
    static var visible: FetchRequest<ImportedItem> {
        FetchRequest(predicate: #Predicate { $0.rank >= 0 }, sortBy: [SortDescriptor(\.rank)], fetchLimit: 20)
    }

    /// Inserts `count` items whose ranks come from `generator`, in one context, and saves.
    static func insert(_ count: Int, from start: Int, into context: ManagedObjectContext, generator: inout SplitMix64) throws {
        for n in start..<(start + count) {
            let item = ImportedItem(context: context)
            item.title = "item \(n)"
            item.rank = Int(generator.next() % 1_000_000_000)
            item.created = Date(timeIntervalSince1970: 1_704_067_200 + Double(n))
        }
        try context.save()
    }
}
