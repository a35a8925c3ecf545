import Granary

/// What an `NSBatchInsertRequest` reports: Core Data's `NSBatchInsertRequestResultType`.
public enum NSBatchInsertRequestResultType: Sendable, Hashable {
    /// `result` is `true` (the default).
    case statusOnly
    /// `result` is the inserted objects' `[NSManagedObjectID]`.
    case objectIDs
    /// `result` is how many objects were inserted, as an `Int`.
    case count
}

/// Core Data's `NSBatchInsertRequest`: objects given as dictionaries, all at once or one at a time by a
/// handler, inserted in one store operation by Granary's `BatchInsertRequest`.
public final class NSBatchInsertRequest: NSPersistentStoreRequest {
    /// The entity inserted into.
    public let entityName: String
    /// The dictionaries to insert, when given at once.
    public var objectsToInsert: [[String: Any]]?
    /// Fills one dictionary per call until it returns `true`: Core Data's handler form, which keeps a
    /// large import from building every dictionary first.
    public var dictionaryHandler: ((NSMutableDictionary) -> Bool)?
    /// What `result` holds.
    public var resultType: NSBatchInsertRequestResultType = .statusOnly

    /// Inserts `dictionaries` into the named entity.
    public init(entityName: String, objects dictionaries: [[String: Any]]) {
        self.entityName = entityName
        objectsToInsert = dictionaries
    }

    /// Inserts `dictionaries` into `entity`.
    public convenience init(entity: EntityDescription, objects dictionaries: [[String: Any]]) {
        self.init(entityName: entity.name, objects: dictionaries)
    }

    /// Inserts the dictionaries `handler` fills, one per call, until it returns `true`.
    public init(entityName: String, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.entityName = entityName
        dictionaryHandler = handler
    }

    /// Inserts into `entity` the dictionaries `handler` fills, one per call, until it returns `true`.
    public convenience init(entity: EntityDescription, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.init(entityName: entity.name, dictionaryHandler: handler)
    }

    /// Every dictionary to insert: those given, then those the handler fills.
    func dictionaries() -> [[String: Any]] {
        var result = objectsToInsert ?? []
        if let dictionaryHandler {
            while true {
                let dictionary = NSMutableDictionary()
                if dictionaryHandler(dictionary) { break }
                var values: [String: Any] = [:]
                for (key, value) in dictionary {
                    if let key = key as? String { values[key] = value }
                }
                result.append(values)
            }
        }
        return result
    }

    var report: BatchReport {
        switch resultType {
        case .statusOnly: return .statusOnly
        case .objectIDs: return .objectIDs
        case .count: return .count
        }
    }
}
