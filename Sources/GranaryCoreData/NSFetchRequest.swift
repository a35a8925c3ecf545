import Granary

/// What a fetch can return: Core Data's marker protocol for `NSFetchRequest`'s result type. Managed
/// objects, object IDs, dictionaries and numbers conform.
public protocol NSFetchRequestResult {}

extension ManagedObject: NSFetchRequestResult {}
extension ManagedObjectID: NSFetchRequestResult {}
extension NSDictionary: NSFetchRequestResult {}
extension NSNumber: NSFetchRequestResult {}

/// What a fetch request returns: Core Data's `NSFetchRequestResultType`.
public struct NSFetchRequestResultType: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Managed objects (the default); Granary's `fetch(_:)`.
    public static let managedObjectResultType = NSFetchRequestResultType([])
    /// Object IDs; Granary's `fetchObjectIDs(_:)`.
    public static let managedObjectIDResultType = NSFetchRequestResultType(rawValue: 1 << 0)
    /// One `NSDictionary` per object, of `propertiesToFetch`; Granary's `fetchDictionaries(_:)`.
    public static let dictionaryResultType = NSFetchRequestResultType(rawValue: 1 << 1)
    /// One `NSNumber`, the count; Granary's `count(for:)`.
    public static let countResultType = NSFetchRequestResultType(rawValue: 1 << 2)
}

/// A request a context executes: Core Data's `NSPersistentStoreRequest`, the common class of fetch and
/// batch requests that `execute(_:)` takes.
open class NSPersistentStoreRequest {
    public init() {}
}

/// Core Data's `NSFetchRequest`: a class (so `let request = Quake.fetchRequest()` can be configured in
/// place) holding Core Data's types, turned into Granary's `FetchRequest` when it runs.
///
/// `ResultType` is what `context.fetch(_:)` returns: a managed object class, `NSManagedObjectID`,
/// `NSDictionary` (with `resultType = .dictionaryResultType`), `NSNumber` (`.countResultType`), or
/// `NSFetchRequestResult` for requests that only describe objects (batch deletes).
public final class NSFetchRequest<ResultType>: NSPersistentStoreRequest {
    /// The entity fetched; when nil, the entity whose name is the result class's name.
    public var entityName: String?
    /// Which objects match; nil for all.
    public var predicate: NSPredicate?
    /// The order; nil or empty for the store's order.
    public var sortDescriptors: [NSSortDescriptor]?
    /// At most this many results; 0 for no limit.
    public var fetchLimit = 0
    /// Results skipped first.
    public var fetchOffset = 0
    /// How many objects are filled at a time as results are read; 0 for all at once.
    public var fetchBatchSize = 0
    /// What `fetch` returns.
    public var resultType: NSFetchRequestResultType = .managedObjectResultType
    /// The properties of dictionary results: names (`String`), property descriptions, or
    /// `NSExpressionDescription`s (aggregates such as `sum:`, key paths, the evaluated object's ID).
    public var propertiesToFetch: [Any]?
    /// For dictionary results: what splits the objects into groups, one dictionary each (names,
    /// property descriptions or key-path `NSExpressionDescription`s); every fetched property must then
    /// be grouped by or be an aggregate.
    public var propertiesToGroupBy: [Any]?
    /// For grouped dictionary results: which groups are returned, as a predicate over the keys of the
    /// results (`NSPredicate(format: "$count > 1")` or `"count > 1"`, where `count` names an
    /// expression description).
    public var havingPredicate: NSPredicate?
    /// For dictionary results: whether equal dictionaries are returned once.
    public var returnsDistinctResults = false
    /// Relationships whose destinations are filled along with the results.
    public var relationshipKeyPathsForPrefetching: [String]?
    /// Whether unsaved changes of the context count.
    public var includesPendingChanges = true
    /// Whether objects of sub-entities match.
    public var includesSubentities = true
    /// Whether fetched objects come back as faults, loaded on first touch (a batch at a time), as in
    /// Core Data, whose default this is; Granary's own `FetchRequest` defaults to `false`.
    public var returnsObjectsAsFaults = true
    /// Whether the fetch reads the objects' values; `false` returns faults.
    public var includesPropertyValues = true
    /// Whether objects with unsaved changes are refreshed by the fetch, their changes kept on top.
    public var shouldRefreshRefetchedObjects = false

    /// A request for the named entity's objects.
    public init(entityName: String) {
        self.entityName = entityName
    }

    /// A request whose entity is set later (or is the result class's name).
    public override init() {}

    /// The entity this request fetches.
    public var entity: EntityDescription? {
        get { entityDescription }
        set { entityName = newValue?.name; entityDescription = newValue }
    }
    private var entityDescription: EntityDescription?

    /// Takes every setting of `other`, a request of another result type.
    func copySettings<Other>(of other: NSFetchRequest<Other>) {
        entityName = other.entityName
        predicate = other.predicate
        sortDescriptors = other.sortDescriptors
        fetchLimit = other.fetchLimit
        fetchOffset = other.fetchOffset
        fetchBatchSize = other.fetchBatchSize
        resultType = other.resultType
        propertiesToFetch = other.propertiesToFetch
        propertiesToGroupBy = other.propertiesToGroupBy
        havingPredicate = other.havingPredicate
        returnsDistinctResults = other.returnsDistinctResults
        relationshipKeyPathsForPrefetching = other.relationshipKeyPathsForPrefetching
        includesPendingChanges = other.includesPendingChanges
        includesSubentities = other.includesSubentities
        returnsObjectsAsFaults = other.returnsObjectsAsFaults
        includesPropertyValues = other.includesPropertyValues
        shouldRefreshRefetchedObjects = other.shouldRefreshRefetchedObjects
    }

    /// The entity's name: `entityName`, or else the entity `model` binds to the result class, or else
    /// the class's name (Core Data's default entity name for a class).
    func resolvedEntityName(in model: ManagedObjectModel?) -> String {
        if let entityName { return entityName }
        if let type = ResultType.self as? AnyObject.Type, let entity = model?.entity(for: type) { return entity.name }
        return String(describing: ResultType.self)
    }

    /// This request in Granary's form, for objects of class `type`; `model` finds the entity when
    /// `entityName` is nil.
    /// - Throws: `PredicateParseError` for a predicate (or having predicate) whose format string did not
    ///   parse; `ContextError.invalidRequest` for a sort descriptor made from a key path Swift cannot
    ///   name or the evaluated object fetched under a name other than `objectID`;
    ///   `ContextError.invalidAggregate` for an expression description Granary does not compute.
    public func granaryRequest<Object: ManagedObject>(of type: Object.Type = Object.self,
                                                      model: ManagedObjectModel? = nil) throws -> FetchRequest<Object> {
        let name = resolvedEntityName(in: model)
        var request = FetchRequest<Object>(entityName: name)
        request.filter = try predicate?.predicateNode()
        request.sortKeys = try (sortDescriptors ?? []).map { descriptor throws(ContextError) in try descriptor.sortKey(entity: name, model: model) }
        request.fetchLimit = fetchLimit
        request.fetchOffset = fetchOffset
        request.fetchBatchSize = fetchBatchSize
        request.includesPendingChanges = includesPendingChanges
        request.includesSubentities = includesSubentities
        request.propertiesToFetch = try (propertiesToFetch ?? []).compactMap { property throws -> FetchProperty? in
            if let expression = property as? NSExpressionDescription { return try expression.fetchProperty(entity: name) }
            return Self.propertyName(property).map(FetchProperty.property)
        }
        request.propertiesToGroupBy = (propertiesToGroupBy ?? []).compactMap { property in
            if let expression = property as? NSExpressionDescription { return expression.expression?.predicateKeyPath }
            return Self.propertyName(property)
        }
        request.havingPredicate = try havingPredicate?.havingNode()
        request.returnsDistinctResults = returnsDistinctResults
        request.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching ?? []
        request.returnsObjectsAsFaults = returnsObjectsAsFaults
        request.includesPropertyValues = includesPropertyValues
        request.shouldRefreshRefetchedObjects = shouldRefreshRefetchedObjects
        return request
    }

    /// The name a `propertiesToFetch` or `propertiesToGroupBy` entry gives: a string, or a property
    /// description's name; nil for anything else.
    private static func propertyName(_ property: Any) -> String? {
        switch property {
        case let name as String: return name
        case let attribute as AttributeDescription: return attribute.name
        case let relationship as RelationshipDescription: return relationship.name
        case let description as PropertyDescription: return description.name
        default: return nil
        }
    }
}
