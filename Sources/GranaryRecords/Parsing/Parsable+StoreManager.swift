import Foundation
import Granary

/// JSON handed to the writer. JSON from `JSONSerialization` is immutable once made (value types and
/// immutable Foundation containers), so passing it to the writer's task shares nothing mutable.
struct JSONPayload: @unchecked Sendable {
    let elements: [Any]
}

extension Parsable {
    // The store manager's forms: each call is one write on the manager's serial writer (a new background
    // context, one save), after every write asked for before it. The save is `importAndSave`'s, so an
    // import on another context of the store saving the same IDs meanwhile makes this one run again on
    // top of it rather than mix with it.

    /// Imports a JSON array on the store manager's writer and saves once (see
    /// `parse(jsonArray:in:)` on a context for what an import does); the completion gets the
    /// main context's objects, in input order, once the main context has merged the save.
    ///
    /// On failure nothing is written and the completion gets the ``ParsingError`` (element index, key,
    /// value). Do not mutate the JSON's containers after the call: the writer reads them later.
    /// - Parameters:
    ///   - jsonArray: The JSON objects, as `JSONSerialization` gives them.
    ///   - store: The manager; `StoreManager.default` when nil.
    ///   - complete: On the main context, the objects or the error.
    public static func parse(jsonArray: [Any], in store: StoreManager? = nil,
                             complete: (@Sendable (Result<[Self], any Error>) -> Void)? = nil) {
        let payload = JSONPayload(elements: jsonArray)
        enqueueParse(store, complete) { context in try context.importAndSave { try parse(jsonArray: payload.elements, in: context) }.map(\.objectID) }
    }

    /// Imports JSON text (an array or one object) on the store manager's writer, as
    /// `parse(jsonArray:in:complete:)` does.
    public static func parse(jsonData: Data, in store: StoreManager? = nil,
                             complete: (@Sendable (Result<[Self], any Error>) -> Void)? = nil) {
        enqueueParse(store, complete) { context in try parseAndSave(jsonData: jsonData, in: context).map(\.objectID) }
    }

    /// Imports a JSON array on the store manager's writer, saves once, and returns when the main context
    /// has merged the save.
    /// - Returns: The objects' IDs in input order (`store.mainContext.object(with:)` gives the main
    ///   context's objects).
    /// - Throws: ``ParsingError`` naming the element's index, key and value (nothing is written);
    ///   `RecordsError.noDefaultStore`; the save's error.
    @discardableResult
    public static func parse(jsonArray: [Any], in store: StoreManager? = nil) async throws -> [ManagedObjectID] {
        let payload = JSONPayload(elements: jsonArray)
        return try await awaitWrite(store, "parse \(Self.self) (\(payload.elements.count) elements)") { context in
            try context.importAndSave { try parse(jsonArray: payload.elements, in: context) }.map(\.objectID)
        }
    }

    /// Imports JSON text (an array or one object) on the store manager's writer, as
    /// `parse(jsonArray:in:) async` does.
    /// - Throws: as `parse(jsonArray:in:) async`, and ``ParsingError`` `.invalidJSON`.
    @discardableResult
    public static func parse(jsonData: Data, in store: StoreManager? = nil) async throws -> [ManagedObjectID] {
        try await awaitWrite(store, "parse \(Self.self) (\(jsonData.count) bytes)") { context in
            try parseAndSave(jsonData: jsonData, in: context).map(\.objectID)
        }
    }

    /// Imports a JSON array on the store manager's writer, leaving out and reporting the bad elements
    /// (see `parseSkippingInvalid(jsonArray:in:)` on a context).
    /// - Returns: The imported objects' IDs in input order and the skipped elements' errors.
    public static func parseSkippingInvalid(jsonArray: [Any], in store: StoreManager? = nil) async throws
        -> (objects: [ManagedObjectID], skipped: [ParsingError]) {
        let payload = JSONPayload(elements: jsonArray)
        return try await awaitWrite(store, "parse \(Self.self) skipping invalid elements") { context in
            let report = try context.importAndSave { try parseSkippingInvalid(jsonArray: payload.elements, in: context) }
            return (report.objects.map(\.objectID), report.skipped)
        }
    }

    private static func enqueueParse(_ store: StoreManager?, _ complete: (@Sendable (Result<[Self], any Error>) -> Void)?,
                                     _ body: @escaping @Sendable (ManagedObjectContext) throws -> [ManagedObjectID]) {
        let manager: StoreManager
        do { manager = try StoreManager.resolve(store) } catch {
            complete?(.failure(error))
            return
        }
        manager.enqueueWrite("parse \(Self.self)", body) { outcome in
            guard let complete else { return }
            manager.onMain { main in
                complete(outcome.flatMap { ids in
                    Result {
                        try ids.map { id in
                            guard let object = try main.existingObject(with: id) as? Self else {
                                throw RecordsError.objectNotFound(entity: id.entityName, object: String(describing: id))
                            }
                            return object
                        }
                    }
                })
            }
        }
    }
}
