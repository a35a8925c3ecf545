import Foundation
import Granary
import GranaryStack

// The writes of the records services. Each has the seed's closure form (the completion runs on the
// main context with the object fetched there) and an `async throws` form; both enqueue on the
// manager's serial writer when called, so writes apply in the order they were asked for.

extension Persistable {
    // MARK: create

    /// Creates an object on the writer, or updates the one with the same ID.
    ///
    /// `update` runs once, on a new object inserted in the writer's context. When the ID it set
    /// belongs to a stored object and `updateIfEntityExists` is true, the values `update` set are moved
    /// onto that object and the new one is dropped: no duplicate, one run of the closure (the seed ran it
    /// twice). When the flag is false, nothing is written and the completion gets
    /// `RecordsError.entityExists` (the seed reset the context silently).
    ///
    /// A value `update` sets equal to the attribute's default value is not told apart from one it
    /// left alone, so it is not copied onto an existing object.
    /// - Parameters:
    ///   - store: The manager; `StoreManager.default` when nil.
    ///   - updateIfEntityExists: Whether an existing object with the ID is updated (the default) or the
    ///     call fails.
    ///   - update: Sets the object's ID and values; runs on the writer's context, which it gets too, for
    ///     find-or-create of related objects (`init(entityID:context:)`).
    ///   - complete: On the main context, the object fetched there, or the error.
    public static func create(in store: StoreManager? = nil, updateIfEntityExists: Bool = true,
                              update: @escaping @Sendable (Self, ManagedObjectContext) throws -> Void,
                              complete: (@Sendable (Result<Self, any Error>) -> Void)? = nil) {
        enqueueObjectWrite(store, "create \(Self.self)", complete) { context in
            try insertOrUpdate(in: context, updateIfEntityExists: updateIfEntityExists, update: update)
        }
    }

    /// Creates an object on the writer, or updates the one with the same ID (see
    /// `create(in:updateIfEntityExists:update:complete:)`), and returns once the main context has the
    /// result.
    /// - Returns: The object's ID; `store.mainContext.object(with:)` gives the main context's object.
    /// - Throws: `RecordsError.entityExists` (flag false and the ID taken), `.noDefaultStore`, what
    ///   `update` throws, the save's error. Nothing is written when it throws.
    @discardableResult
    public static func create(in store: StoreManager? = nil, updateIfEntityExists: Bool = true,
                              update: @escaping @Sendable (Self, ManagedObjectContext) throws -> Void) async throws -> ManagedObjectID {
        try await awaitWrite(store, "create \(Self.self)") { context in
            try insertOrUpdate(in: context, updateIfEntityExists: updateIfEntityExists, update: update)
        }
    }

    static func insertOrUpdate(in context: ManagedObjectContext, updateIfEntityExists: Bool,
                               update: (Self, ManagedObjectContext) throws -> Void) throws -> ManagedObjectID {
        let entity = try entity(in: context.model)
        let idName = try idAttributeName(in: context.model)
        let object = Self(entity: entity, insertInto: context)
        let initial = try snapshot(of: object, entity: entity)
        try update(object, context)
        let id = object[keyPath: idKeyPath]
        let existing = try context.fetch(request(ids: [id], in: context.model)).filter { $0 !== object && !$0.isDeleted }
        guard let target = existing.first else {
            try context.obtainPermanentIDs(for: [object])
            return object.objectID
        }
        guard updateIfEntityExists else {
            context.rollback()
            throw RecordsError.entityExists(entity: entity.name, id: String(describing: id))
        }
        RecordsLog.verbose("create \(entity.name) \(id): the ID exists, updating it")
        for property in entity.properties where property.name != idName && !property.isTransient {
            let value = try object.value(forKey: property.name)
            guard !isUnchanged(value, initial[property.name] ?? nil) else { continue }
            if property.relationship != nil {
                // Let go of the members first, so that deleting the new object cascades to none of them.
                try object.setValue(property.relationship?.isToMany == true ? emptyMembers(of: value) : nil, forKey: property.name)
            }
            try target.setValue(value, forKey: property.name)
        }
        context.delete(object)
        return target.objectID
    }

    private static func snapshot(of object: Self, entity: EntityDescription) throws -> [String: Any?] {
        var values: [String: Any?] = [:]
        for property in entity.properties where !property.isTransient { values[property.name] = try object.value(forKey: property.name) }
        return values
    }

    private static func emptyMembers(of value: Any?) -> Any {
        if value is [ManagedObject] { return [ManagedObject]() }
        return Set<ManagedObject>()
    }

    /// Whether `update` left a property as the insert made it.
    private static func isUnchanged(_ value: Any?, _ initial: Any?) -> Bool {
        switch (value, initial) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case (let a as ManagedObject, let b as ManagedObject): return a === b
        case (let a as Set<ManagedObject>, let b as Set<ManagedObject>): return a == b
        case (let a as [ManagedObject], let b as [ManagedObject]): return a == b
        case (let a as AnyHashable, let b as AnyHashable): return a == b
        default: return false
        }
    }

    // MARK: update

    /// Applies `update` to this object on the writer (refetched there by its object ID), saves, and
    /// hands the main context's object to `complete`.
    /// - Parameters:
    ///   - store: The manager; `StoreManager.default` when nil.
    ///   - update: Changes the writer's copy of the object.
    ///   - complete: On the main context, the updated object, or `RecordsError.objectNotFound` when the
    ///     object is not in the store, or what `update` or the save threw.
    public func update(in store: StoreManager? = nil, _ update: @escaping @Sendable (Self, ManagedObjectContext) throws -> Void,
                       complete: (@Sendable (Result<Self, any Error>) -> Void)? = nil) {
        let id = objectID
        Self.enqueueObjectWrite(store, "update \(Self.self)", complete) { context in
            try Self.apply(update, to: id, in: context)
        }
    }

    /// Applies `update` to this object on the writer and returns once the main context has the result
    /// (see `update(in:_:complete:)`).
    /// - Throws: `RecordsError.objectNotFound`, `.noDefaultStore`, what `update` or the save throws.
    public func update(in store: StoreManager? = nil, _ update: @escaping @Sendable (Self, ManagedObjectContext) throws -> Void) async throws {
        let id = objectID
        _ = try await Self.awaitWrite(store, "update \(Self.self)") { context in try Self.apply(update, to: id, in: context) }
    }

    private static func apply(_ update: (Self, ManagedObjectContext) throws -> Void, to id: ManagedObjectID,
                              in context: ManagedObjectContext) throws -> ManagedObjectID {
        guard !id.isTemporaryID, let object = try? context.existingObject(with: id) as? Self else {
            throw RecordsError.objectNotFound(entity: id.entityName, object: String(describing: id))
        }
        try update(object, context)
        return id
    }

    // MARK: Plumbing

    static func enqueueObjectWrite(_ store: StoreManager?, _ label: @escaping @autoclosure @Sendable () -> String,
                                   _ complete: (@Sendable (Result<Self, any Error>) -> Void)?,
                                   _ body: @escaping @Sendable (ManagedObjectContext) throws -> ManagedObjectID) {
        let manager: StoreManager
        do { manager = try StoreManager.resolve(store) } catch {
            complete?(.failure(error))
            return
        }
        manager.enqueueWrite(label(), body) { outcome in
            guard let complete else { return }
            manager.onMain { main in
                complete(outcome.flatMap { id in
                    Result {
                        guard let object = try main.existingObject(with: id) as? Self else {
                            throw RecordsError.objectNotFound(entity: id.entityName, object: String(describing: id))
                        }
                        return object
                    }
                })
            }
        }
    }

    static func awaitWrite<T: Sendable>(_ store: StoreManager?, _ label: @escaping @autoclosure @Sendable () -> String,
                                        _ body: @escaping @Sendable (ManagedObjectContext) throws -> T) async throws -> T {
        let manager = try StoreManager.resolve(store)
        return try await withCheckedThrowingContinuation { continuation in
            manager.enqueueWrite(label(), body) { continuation.resume(with: $0) }
        }
    }
}
