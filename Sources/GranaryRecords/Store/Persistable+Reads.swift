import Foundation
import Granary
import GranaryStack

extension FindOrCreatable where Self: Persistable {
    /// Finds the object with `entityID` in `context` (unsaved inserts count), or inserts one holding
    /// only that ID: for the targets of relationships inside a write (`create`, `update`). Called twice
    /// with one ID in one context, it returns the same object.
    /// - Parameters:
    ///   - entityID: The ID.
    ///   - context: The writer's context the write runs on (call it on that context's queue).
    /// - Throws: `RecordsError.viewContextWrite` when `context` is a main-queue (view) context: the
    ///   records services write on the writer only (the seed asserted, then handed back a dead object);
    ///   `.unsupportedIDType`, `.unknownEntity`; a fetch error.
    public init(entityID: EntityID, context: ManagedObjectContext) throws {
        let entity = try Self.entity(in: context.model)
        guard context.concurrencyType == .privateQueue else { throw RecordsError.viewContextWrite(entity: entity.name) }
        if let found = try context.performAndWait({ try Self.find(entityID, in: context) }) {
            self = found
            return
        }
        let object = context.performAndWait { () -> Self in
            let object = Self(entity: entity, insertInto: context)
            object[keyPath: Self.idKeyPath] = entityID
            return object
        }
        self = object
    }
}

extension Persistable {

    /// The object with this ID in `context` (the main context by default), or nil.
    /// - Throws: `RecordsError.noDefaultStore`, `.unsupportedIDType`; a fetch error.
    public static func get(entityID: EntityID, from store: StoreManager? = nil,
                           context: ManagedObjectContext? = nil) throws -> Self? {
        let context = try context ?? StoreManager.resolve(store).mainContext
        return try context.performAndWait { try find(entityID, in: context) }
    }

    /// The objects matching `predicate`, ordered by `comparisonClauses`, in `context` (the main
    /// context by default).
    /// - Throws: `RecordsError.noDefaultStore`; a fetch error naming what was wrong in the predicate.
    public static func get(using predicate: FetchPredicate, comparisonClauses: [SortKey] = [], from store: StoreManager? = nil,
                           context: ManagedObjectContext? = nil) throws -> [Self] {
        let context = try context ?? StoreManager.resolve(store).mainContext
        return try context.performAndWait { try context.fetch(request(predicate, comparisonClauses, in: context.model)) }
    }

    /// Every object of the entity, ordered by `comparisonClauses`, in `context` (the main context by
    /// default).
    /// - Throws: as `get(using:comparisonClauses:from:context:)`.
    public static func getAll(comparisonClauses: [SortKey] = [], from store: StoreManager? = nil,
                              context: ManagedObjectContext? = nil) throws -> [Self] {
        try get(using: .all, comparisonClauses: comparisonClauses, from: store, context: context)
    }

    static func request(_ predicate: FetchPredicate, _ sortKeys: [SortKey], offset: Int = 0,
                        in model: ManagedObjectModel?) throws(RecordsError) -> FetchRequest<Self> {
        var request = FetchRequest<Self>(entityName: try entity(in: model).name)
        if predicate.node != .true { request.filter = predicate.node }
        request.sortKeys = sortKeys
        request.fetchOffset = offset
        return request
    }

    // MARK: Temporary objects

    /// Runs `update` on a new object in a scratch background context and returns what it returns;
    /// nothing is saved, related objects made in it (stubs) included, and the object is gone after.
    /// It does not wait for the writer.
    /// - Throws: `RecordsError.noDefaultStore`, `.unknownEntity`, what `update` throws.
    public static func createTemporary<T: Sendable>(in store: StoreManager? = nil,
                                                    update: @escaping @Sendable (Self, ManagedObjectContext) throws -> T) async throws -> T {
        let manager = try StoreManager.resolve(store)
        let context = manager.stack.newBackgroundContext()
        return try await context.perform {
            defer { context.reset() }
            let object = Self(entity: try entity(in: context.model), insertInto: context)
            return try update(object, context)
        }
    }

    /// The closure form of `createTemporary(in:update:)`: `update` runs on a scratch background
    /// context; `complete`, if given, gets its error (on that context's queue).
    public static func createTemporary(in store: StoreManager? = nil,
                                       update: @escaping @Sendable (Self, ManagedObjectContext) throws -> Void,
                                       complete: (@Sendable ((any Error)?) -> Void)? = nil) {
        let manager: StoreManager
        do { manager = try StoreManager.resolve(store) } catch {
            complete?(error)
            return
        }
        let context = manager.stack.newBackgroundContext()
        context.schedule {
            defer { context.reset() }
            do {
                let object = Self(entity: try entity(in: context.model), insertInto: context)
                try update(object, context)
                complete?(nil)
            } catch {
                complete?(error)
            }
        }
    }
}
