import Foundation
@testable import Granary

/// The model and stack the history tests share: books with an author, the book's title and isbn kept in
/// the tombstone of its delete.
enum HistorySupport {
    /// Version 2 adds an optional `subtitle` to books (a lightweight migration).
    static func model(version: Int = 1) throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "\(version)") {
            Entity("Author") {
                Attribute("name", .string, optional: true)
                Relationship("books", toMany: "Book", inverse: "author", deleteRule: .nullify)
            }
            Entity("Book") {
                Attribute("title", .string, optional: true, preservesValueInHistoryOnDeletion: true)
                Attribute("isbn", .string, optional: true, preservesValueInHistoryOnDeletion: true)
                Attribute("pages", .integer64, defaultValue: 0)
                if version >= 2 { Attribute("subtitle", .string, optional: true) }
                Relationship("author", to: "Author", inverse: "books", deleteRule: .nullify)
            }
        }
    }

    /// A coordinator whose one store tracks history (or not), and a private-queue context on it.
    static func stack(_ type: PersistentStore.StoreType = .inMemory, at url: URL? = nil, tracking: Bool = true,
                      model: ManagedObjectModel? = nil) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model ?? self.model())
        try coordinator.addPersistentStore(type: type, at: url, options: .init(durability: .off, persistentHistoryTracking: tracking))
        return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
    }

    static func insert(_ entity: String, _ values: [String: Any], into context: ManagedObjectContext) throws -> ManagedObject {
        let object = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entity(named: entity)!, insertInto: context)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    static func history(_ coordinator: PersistentStoreCoordinator,
                        _ request: PersistentHistoryChangeRequest = .fetchHistory(after: nil as PersistentHistoryToken?)) throws -> [PersistentHistoryTransaction] {
        try coordinator.execute(request).transactions
    }
}
