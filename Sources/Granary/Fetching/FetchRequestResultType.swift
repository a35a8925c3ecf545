/// What a fetch request run by `ManagedObjectContext.execute(_:)` returns (Core Data's
/// `NSFetchRequestResultType`).
public enum FetchRequestResultType: Sendable, Hashable {
    /// The matching objects.
    case managedObject
    /// Their IDs, without loading them.
    case managedObjectID
    /// Dictionaries of the `propertiesToFetch` values, read from the store's rows.
    case dictionary
    /// How many objects match.
    case count
}

/// The answer of `ManagedObjectContext.execute(_:)` to a fetch request, as its `resultType` asked.
public enum FetchRequestResult<Result: ManagedObject> {
    case objects([Result])
    case objectIDs([ManagedObjectID])
    case dictionaries([[String: Any]])
    case count(Int)

    /// The objects, or an empty array for another result type.
    public var objects: [Result] { if case .objects(let objects) = self { objects } else { [] } }
    /// The IDs: those of an `.objectIDs` result or of an `.objects` one; empty otherwise.
    public var objectIDs: [ManagedObjectID] {
        switch self {
        case .objectIDs(let ids): ids
        case .objects(let objects): objects.map(\.objectID)
        default: []
        }
    }
    /// The number of results, whatever their kind.
    public var count: Int {
        switch self {
        case .objects(let objects): objects.count
        case .objectIDs(let ids): ids.count
        case .dictionaries(let rows): rows.count
        case .count(let count): count
        }
    }
}
