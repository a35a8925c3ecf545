import Foundation
@testable import Granary

/// A durable store written with one model version and reopened with another, through string-keyed
/// objects so each test can declare its versions inline.
struct MigrationHarness {
    let url: URL

    init(_ label: String = #function) {
        url = scratchURL(label)
    }

    /// Opens the store with `model`, runs `body` in a context and saves, then closes the store.
    @discardableResult
    func write<R>(_ model: ManagedObjectModel, options: PersistentStore.Options = .init(),
                  _ body: (ManagedObjectContext) throws -> R) throws -> R {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .durable, at: url, options: options)
        defer { try? coordinator.remove(store) }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait {
            let result = try body(context)
            try context.save()
            return result
        }
    }

    /// Opens the store with `model` (migrating as `options` say) and runs `body` on the store and a
    /// context, then closes it.
    @discardableResult
    func open<R>(_ model: ManagedObjectModel, options: PersistentStore.Options = .init(),
                 _ body: (PersistentStore, ManagedObjectContext) throws -> R) throws -> R {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .durable, at: url, options: options)
        defer { try? coordinator.remove(store) }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait { try body(store, context) }
    }

    /// Removes the store's record of its model, as in a store written before stores kept one.
    func forgetModelRecord() throws {
        let engine = try Engine.open(.directory(url))
        try engine.write { tx in
            var metadata = tx.metadata
            metadata.userInfo[StoredModel.metadataKey] = nil
            try tx.setMetadata(metadata)
        }
        try engine.close()
    }

    /// The store's files and their sizes, to show a refused migration left them alone.
    func files() throws -> [String: Int] {
        var result: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.appendingPathComponent(name).path)
            result[name] = (attributes[.size] as? NSNumber)?.intValue ?? -1
        }
        return result
    }
}

extension ManagedObjectContext {
    /// Inserts an object of a run-time entity with string-keyed values.
    @discardableResult
    func insert(_ entity: String, _ values: [String: Any?]) throws -> ManagedObject {
        guard let description = persistentStoreCoordinator?.managedObjectModel.entity(named: entity) else {
            throw ContextError.unknownEntity(entity)
        }
        let object = ManagedObject(entity: description, insertInto: self)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    /// Every object of an entity, sorted by a key.
    func all(_ entity: String, sortedBy key: String) throws -> [ManagedObject] {
        var request = FetchRequest<ManagedObject>(entityName: entity)
        request.sortKeys = [SortKey(key)]
        return try fetch(request)
    }
}

extension ManagedObject {
    /// `value(forKey:)` cast, for brevity in expectations.
    func get<T>(_ key: String, as type: T.Type = T.self) throws -> T? {
        try value(forKey: key) as? T
    }
}
