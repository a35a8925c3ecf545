import Granary

/// What an `NSBatchUpdateRequest` reports: Core Data's `NSBatchUpdateRequestResultType`.
public enum NSBatchUpdateRequestResultType: Sendable, Hashable {
    /// `result` is `true` (the default).
    case statusOnlyResultType
    /// `result` is the updated objects' `[NSManagedObjectID]`.
    case updatedObjectIDsResultType
    /// `result` is how many objects were updated, as an `Int`.
    case updatedObjectsCountResultType
}

/// Core Data's `NSBatchUpdateRequest`: sets attributes of every object a predicate matches in one store
/// operation, by Granary's `BatchUpdateRequest`, without loading the objects.
///
/// The values of `propertiesToUpdate` are constants (Core Data also takes `NSExpression`s computed per
/// row, which Granary does not have); keys are attribute names (Granary's attribute descriptions are
/// not hashable).
public final class NSBatchUpdateRequest: NSPersistentStoreRequest {
    /// The entity updated.
    public let entityName: String
    /// Which objects are updated; nil for all.
    public var predicate: NSPredicate?
    /// Attribute name to new value (Foundation's `NSNumber`, `NSString`, `NSDate` too); `NSNull()` sets an
    /// optional attribute to nil.
    public var propertiesToUpdate: [AnyHashable: Any]?
    /// What `result` holds.
    public var resultType: NSBatchUpdateRequestResultType = .statusOnlyResultType
    /// Whether objects of sub-entities are updated too (the default).
    public var includesSubentities = true

    /// Updates objects of the named entity.
    public init(entityName: String) {
        self.entityName = entityName
    }

    /// Updates objects of `entity`.
    public convenience init(entity: EntityDescription) {
        self.init(entityName: entity.name)
    }

    /// The update in Granary's form.
    /// - Throws: `PredicateParseError` for a predicate that did not parse; `ContextError.invalidRequest`
    ///   for a key that is not a name.
    func granaryRequest() throws -> BatchUpdateRequest {
        var values: [String: Any] = [:]
        for (key, value) in propertiesToUpdate ?? [:] {
            switch key.base {
            case let name as String: values[name] = NSPredicate.swiftValue(value) ?? NSNull()
            default:
                throw ContextError.invalidRequest(entity: entityName, reason: "propertiesToUpdate key \(key) is not an attribute name")
            }
        }
        var request = BatchUpdateRequest(entityName: entityName, predicate: try predicate?.predicateNode(), propertiesToUpdate: values,
                                         resultType: report.granaryType)
        request.includesSubentities = includesSubentities
        return request
    }

    var report: BatchReport {
        switch resultType {
        case .statusOnlyResultType: return .statusOnly
        case .updatedObjectIDsResultType: return .objectIDs
        case .updatedObjectsCountResultType: return .count
        }
    }
}
