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

    /// Deletes what `fetchRequest` matches.
    public init(fetchRequest: NSFetchRequest<NSFetchRequestResult>) {
        self.fetchRequest = fetchRequest
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
    /// Runs a Core Data batch request (`NSBatchInsertRequest`, `NSBatchDeleteRequest`) and returns its
    /// result (`NSBatchInsertResult`, `NSBatchDeleteResult`): Core Data's `execute(_:)`. A fetch request
    /// is run with `fetch(_:)` instead.
    /// - Throws: `ContextError.unknownEntity`, `.invalidRequest` for a request this does not run,
    ///   `PredicateParseError`, and what Granary's batch requests throw (`.constraintViolation`,
    ///   `.validation`, `.deleteDenied`, store errors).
    public func execute(_ request: NSPersistentStoreRequest) throws -> NSPersistentStoreResult {
        switch request {
        case let insert as NSBatchInsertRequest:
            if let model, model.entitiesByName[insert.entityName] == nil { throw ContextError.unknownEntity(insert.entityName) }
            let granary = BatchInsertRequest(entityName: insert.entityName, objects: insert.dictionaries(),
                                             resultType: insert.report.granaryType)
            return NSBatchInsertResult(try execute(granary), reporting: insert.report)
        case let delete as NSBatchDeleteRequest:
            let fetch = try delete.fetchRequest.granaryRequest(of: ManagedObject.self, model: model)
            if let model, let name = fetch.entityName, model.entitiesByName[name] == nil { throw ContextError.unknownEntity(name) }
            let granary = BatchDeleteRequest(fetchRequest: fetch, resultType: delete.report.granaryType)
            return NSBatchDeleteResult(try execute(granary), reporting: delete.report)
        default:
            throw ContextError.invalidRequest(entity: "\(type(of: request))",
                                              reason: "execute(_:) runs batch insert and delete requests; run fetch requests with fetch(_:)")
        }
    }
}
