import Granary

/// What an `NSBatchDeleteRequest` reports: Core Data's `NSBatchDeleteRequestResultType`.
public enum NSBatchDeleteRequestResultType: Sendable, Hashable {
    /// `result` is `true` (the default).
    case resultTypeStatusOnly
    /// `result` is the deleted objects' `[NSManagedObjectID]`.
    case resultTypeObjectIDs
    /// `result` is how many objects were deleted, as an `Int`.
    case resultTypeCount
}

/// Core Data's `NSBatchDeleteRequest`: deletes the objects a fetch request describes in one store
/// operation, by Granary's `BatchDeleteRequest`.
public final class NSBatchDeleteRequest: NSPersistentStoreRequest {
    /// The objects deleted.
    public let fetchRequest: NSFetchRequest<NSFetchRequestResult>
    /// What `result` holds.
    public var resultType: NSBatchDeleteRequestResultType = .resultTypeStatusOnly

    /// The objects named by `init(objectIDs:)`, which the deletion takes as given.
    let objectIDs: [NSManagedObjectID]?

    /// Deletes what `fetchRequest` matches.
    public init(fetchRequest: NSFetchRequest<NSFetchRequestResult>) {
        self.fetchRequest = fetchRequest
        objectIDs = nil
    }

    /// Deletes the given objects: Core Data's `init(objectIDs:)`, the way to batch-delete objects in
    /// hand (pass their IDs across queues, not the objects). Its `fetchRequest` describes them as Core
    /// Data's does (`SELF IN` the IDs, of the first ID's entity); the deletion takes the IDs as given,
    /// of any entities. IDs of objects already deleted are skipped.
    public init(objectIDs: [NSManagedObjectID]) {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: objectIDs.first?.entityName ?? "")
        request.predicate = NSPredicate(format: "SELF IN %@", objectIDs)
        fetchRequest = request
        self.objectIDs = objectIDs
    }

    var report: BatchReport {
        switch resultType {
        case .resultTypeStatusOnly: return .statusOnly
        case .resultTypeObjectIDs: return .objectIDs
        case .resultTypeCount: return .count
        }
    }
}

extension ManagedObjectContext {
    /// Runs a Core Data batch request (`NSBatchInsertRequest`, `NSBatchUpdateRequest`,
    /// `NSBatchDeleteRequest`) and returns its result (`NSBatchInsertResult`, `NSBatchUpdateResult`,
    /// `NSBatchDeleteResult`): Core Data's `execute(_:)`. A fetch request
    /// is run with `fetch(_:)` instead.
    /// - Throws: `ContextError.unknownEntity`, `.invalidRequest` for a request this does not run,
    ///   `PredicateParseError`, and what Granary's batch requests throw (`.constraintViolation`,
    ///   `.validation`, `.deleteDenied`, store errors).
    public func execute(_ request: NSPersistentStoreRequest) throws -> NSPersistentStoreResult {
        switch request {
        case let insert as NSBatchInsertRequest:
            if let model, model.entitiesByName[insert.entityName] == nil { throw ContextError.unknownEntity(insert.entityName) }
            return NSBatchInsertResult(try execute(insert.granaryRequest()), reporting: insert.report)
        case let delete as NSBatchDeleteRequest:
            if let ids = delete.objectIDs {
                return NSBatchDeleteResult(try execute(BatchDeleteRequest(objectIDs: ids, resultType: delete.report.granaryType)),
                                           reporting: delete.report)
            }
            let fetch = try delete.fetchRequest.granaryRequest(of: ManagedObject.self, model: model)
            if let model, let name = fetch.entityName, model.entitiesByName[name] == nil { throw ContextError.unknownEntity(name) }
            let granary = BatchDeleteRequest(fetchRequest: fetch, resultType: delete.report.granaryType)
            return NSBatchDeleteResult(try execute(granary), reporting: delete.report)
        case let update as NSBatchUpdateRequest:
            if let model, model.entitiesByName[update.entityName] == nil { throw ContextError.unknownEntity(update.entityName) }
            return NSBatchUpdateResult(try execute(update.granaryRequest()), reporting: update.report)
        default:
            throw ContextError.invalidRequest(entity: "\(type(of: request))",
                                              reason: "execute(_:) runs batch insert, update and delete requests; run fetch requests with fetch(_:)")
        }
    }
}
