import Foundation

/// A description of objects to fetch: an entity, a filter, an order and a window.
///
/// Typed requests filter with Foundation's `#Predicate` and sort with `SortDescriptor` on key paths of
/// the object class; requests for models built at run time use `filter` (a `PredicateNode`, made with
/// `FetchPredicate` or parsed from Core Data's format syntax) and `sortKeys`. When both are set, both
/// apply.
///
/// ```swift
/// var request = FetchRequest<Employee>()
/// request.predicate = #Predicate { $0.salary > 50_000 }
/// request.sortDescriptors = [SortDescriptor(\.name)]
/// request.fetchLimit = 20
/// let employees = try context.fetch(request)
/// ```
public struct FetchRequest<Result: ManagedObject> {
    public var entityName: String?
    public var predicate: Predicate<Result>?
    public var filter: PredicateNode?
    public var sortDescriptors: [SortDescriptor<Result>] = []
    public var sortKeys: [SortKey] = []
    /// At most this many objects (0: no limit, as in Core Data).
    public var fetchLimit = 0
    public var fetchOffset = 0
    /// When positive, objects are handed out as faults and loaded this many at a time as they are
    /// touched, so iterating a big result in order keeps a bounded number of loaded objects. Touched out
    /// of order (sorted in memory, at random), the result stops giving loaded objects back once that
    /// would make it reload more than it saves: it then ends up loaded whole, as without a batch size.
    public var fetchBatchSize = 0
    /// Unsaved inserts, edits and deletes of the context count, as in Core Data (the default).
    public var includesPendingChanges = true
    public var includesSubentities = true
    /// For dictionary results (`ManagedObjectContext.fetchDictionaries(_:)`): the keys each dictionary
    /// may hold, as Core Data's `propertiesToFetch` — attribute names, to-one relationship names (whose
    /// values come back as object IDs), `FetchProperty.objectID` for the object's ID, and
    /// `ExpressionDescription`s (aggregates such as a sum, or a key path under another name). String
    /// literals are property names. Empty: every stored attribute (or, when grouping, the grouped keys).
    public var propertiesToFetch: [FetchProperty] = []
    /// For dictionary results: the key paths (attributes and to-one relationships, through to-one
    /// relationships) whose values split the matching objects into groups, as Core Data's
    /// `propertiesToGroupBy` (SQL's `GROUP BY`): one dictionary per group, its aggregates computed over
    /// the group's objects. Every property fetched must then be grouped by or be an aggregate.
    public var propertiesToGroupBy: [String] = []
    /// For grouped or aggregate dictionary results: which dictionaries are kept, as Core Data's
    /// `havingPredicate` (SQL's `HAVING`). Its key paths name keys of the results (a fetched
    /// expression's name, a grouped key path), not properties of the objects; parse it with
    /// `PredicateParser.parseHaving(_:arguments:)` to also accept Core Data's `$name` form.
    public var havingPredicate: PredicateNode?
    /// For dictionary results: equal dictionaries are returned once, as Core Data's
    /// `returnsDistinctResults` (the first of each in the requested order is kept; the window applies
    /// after).
    public var returnsDistinctResults = false
    /// To-one and to-many relationships whose destinations are loaded with the results, saving a
    /// round trip per object later.
    public var relationshipKeyPathsForPrefetching: [String] = []
    /// What `ManagedObjectContext.execute(_:)` returns: objects, their IDs, dictionaries or a count
    /// (Core Data's `resultType`). The typed methods (`fetch`, `fetchObjectIDs`, `fetchDictionaries`,
    /// `count(for:)`) say what they return themselves and ignore it.
    public var resultType: FetchRequestResultType = .managedObject
    /// Whether fetched objects come back as faults, loaded when first touched, a batch of them at a
    /// time (Core Data's `returnsObjectsAsFaults`).
    ///
    /// `false` is Granary's default (Core Data's is `true`): the store hands out a row's values with
    /// the row, so a fault would only defer a copy. Set it for results of which only a few objects
    /// will be read, or when code relies on `isFault` as Core Data sets it.
    public var returnsObjectsAsFaults = false
    /// Whether the fetch reads the objects' values (Core Data's `includesPropertyValues`). `false`
    /// returns faults that load when touched, for a result that is only counted, deleted or passed on
    /// by ID.
    public var includesPropertyValues = true
    /// Whether objects already registered with unsaved changes are refreshed from the store by this
    /// fetch, their unsaved changes put back on top as `refresh(_:mergeChanges: true)` does, and told by
    /// `awake(fromSnapshotEvents: .refresh)` (Core Data's `shouldRefreshRefetchedObjects`).
    ///
    /// With `false` (the default), a registered object with unsaved changes keeps its values as they
    /// are. A loaded object without changes takes the store's values either way: it holds nothing the
    /// store does not, and showing newer values cannot lose anything (Core Data keeps the old ones
    /// until refreshed).
    public var shouldRefreshRefetchedObjects = false

    /// The key under which a dictionary result holds the object's ID, asked for with
    /// `FetchProperty.objectID` in `propertiesToFetch`: what Core Data asks for with an
    /// `NSExpressionDescription` named "objectID" whose expression is
    /// `NSExpression.expressionForEvaluatedObject()`.
    public static var objectIDKey: String { "objectID" }

    /// A request for the entity whose class is `Result`.
    public init() {}

    /// A request for a named entity, for run-time models (use `FetchRequest<ManagedObject>`).
    public init(entityName: String) { self.entityName = entityName }

    public init(predicate: Predicate<Result>? = nil, sortBy sortDescriptors: [SortDescriptor<Result>] = [], fetchLimit: Int = 0) {
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
    }
}
