import Foundation
import Granary
import GranaryStack

extension Persistable {
    /// Deletes the objects `options` selects, on the writer, and saves. The view context and every
    /// live context the manager made (`StoreManager.newBackgroundContext()`) drop them.
    /// - Parameters:
    ///   - store: The manager; `StoreManager.default` when nil.
    ///   - options: Predicate, order and offset.
    ///   - complete: On the main context: how many objects were deleted, or the error (the seed called
    ///     its completion either way without saying which).
    public static func delete(from store: StoreManager? = nil, with options: DeleteOptions,
                              complete: (@Sendable (Result<Int, any Error>) -> Void)? = nil) {
        let manager: StoreManager
        do { manager = try StoreManager.resolve(store) } catch {
            complete?(.failure(error))
            return
        }
        manager.enqueueWrite("delete \(Self.self)", { context in try deleteMatching(options, in: context, manager: manager) }) { outcome in
            guard let complete else { return }
            manager.onMain { _ in complete(outcome) }
        }
    }

    /// Deletes the objects `options` selects (see `delete(from:with:complete:)`).
    /// - Returns: How many objects were deleted.
    /// - Throws: `RecordsError.noDefaultStore`; a fetch or save error (nothing is deleted then).
    @discardableResult
    public static func delete(from store: StoreManager? = nil, with options: DeleteOptions) async throws -> Int {
        let manager = try StoreManager.resolve(store)
        return try await awaitWrite(manager, "delete \(Self.self)") { context in try deleteMatching(options, in: context, manager: manager) }
    }

    /// Deletes this object on the writer (found there by its ID).
    /// - Parameters:
    ///   - store: The manager whose writer deletes it; `StoreManager.default` when nil.
    ///   - complete: On the main context, success or the error (`RecordsError.objectNotFound`
    ///     when it was not in the store).
    public func delete(from store: StoreManager? = nil, complete: (@Sendable (Result<Void, any Error>) -> Void)? = nil) {
        let ids = [objectID]
        let manager: StoreManager
        do { manager = try StoreManager.resolve(store) } catch {
            complete?(.failure(error))
            return
        }
        manager.enqueueWrite("delete \(Self.self)", { context in try Self.deleteObjects(ids, in: context, manager: manager, strict: true) }) { outcome in
            guard let complete else { return }
            manager.onMain { _ in complete(outcome.map { _ in () }) }
        }
    }

    /// Deletes this object on the writer and returns once the main context has dropped it.
    /// - Throws: `RecordsError.objectNotFound`, `.noDefaultStore`, the save's error.
    public func delete(from store: StoreManager? = nil) async throws {
        let ids = [objectID]
        let manager = try StoreManager.resolve(store)
        _ = try await Self.awaitWrite(manager, "delete \(Self.self)") { context in
            try Self.deleteObjects(ids, in: context, manager: manager, strict: true)
        }
    }

    static func deleteMatching(_ options: DeleteOptions, in context: ManagedObjectContext, manager: StoreManager) throws -> Int {
        let request = try request(options.predicate, options.comparisonClauses, offset: options.offset, in: context.model)
        let objects = try context.fetch(request)
        return try delete(objects, in: context, manager: manager)
    }

    static func delete(_ objects: [ManagedObject], in context: ManagedObjectContext, manager: StoreManager) throws -> Int {
        guard !objects.isEmpty else { return 0 }
        let deleted = Set(objects.map(\.objectID))
        for object in objects { context.delete(object) }
        try context.save()
        RecordsLog.verbose("deleted \(deleted.count) \(Self.self) objects")
        manager.announceDeletions(deleted, except: context)
        return deleted.count
    }

    /// Deletes the objects with these IDs, found with one `IN` query per 1,000 IDs (no fetch per
    /// object). With `strict`, an ID not in the store fails the write.
    static func deleteObjects(_ ids: [ManagedObjectID], in context: ManagedObjectContext, manager: StoreManager, strict: Bool) throws -> Int {
        let stored = ids.filter { !$0.isTemporaryID }
        if strict, let missing = ids.first(where: \.isTemporaryID) {
            throw RecordsError.objectNotFound(entity: missing.entityName, object: String(describing: missing))
        }
        var objects: [ManagedObject] = []
        objects.reserveCapacity(stored.count)
        var start = 0
        while start < stored.count {
            let chunk = Array(stored[start..<min(start + 1_000, stored.count)])
            var request = FetchRequest<ManagedObject>(entityName: try entity(in: context.model).name)
            request.filter = .objects([], chunk)
            objects.append(contentsOf: try context.fetch(request))
            start += chunk.count
        }
        if strict, objects.count < Set(stored).count {
            let found = Set(objects.map(\.objectID))
            let missing = stored.first { !found.contains($0) } ?? stored[0]
            throw RecordsError.objectNotFound(entity: missing.entityName, object: String(describing: missing))
        }
        return try delete(objects, in: context, manager: manager)
    }
}

extension Collection where Element: Persistable {
    /// Deletes these objects on the writer, in one save.
    /// - Parameters:
    ///   - store: The manager whose writer deletes them; `StoreManager.default` when nil.
    ///   - complete: On the main context, how many were deleted, or the error.
    public func delete(from store: StoreManager? = nil, complete: (@Sendable (Result<Int, any Error>) -> Void)? = nil) {
        let ids = map(\.objectID)
        let manager: StoreManager
        do { manager = try StoreManager.resolve(store) } catch {
            complete?(.failure(error))
            return
        }
        manager.enqueueWrite("delete \(ids.count) \(Element.self)", { context in
            try Element.deleteObjects(ids, in: context, manager: manager, strict: false)
        }) { outcome in
            guard let complete else { return }
            manager.onMain { _ in complete(outcome) }
        }
    }

    /// Deletes these objects on the writer, in one save.
    /// - Returns: How many were deleted (those already gone are not counted).
    /// - Throws: `RecordsError.noDefaultStore`, the save's error.
    @discardableResult
    public func delete(from store: StoreManager? = nil) async throws -> Int {
        let ids = map(\.objectID)
        let manager = try StoreManager.resolve(store)
        return try await Element.awaitWrite(manager, "delete \(ids.count) \(Element.self)") { context in
            try Element.deleteObjects(ids, in: context, manager: manager, strict: false)
        }
    }
}
