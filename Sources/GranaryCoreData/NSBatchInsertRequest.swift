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

/// Core Data's `NSBatchInsertRequest`: objects given as dictionaries all at once, or one at a time by a
/// handler that fills a dictionary or a managed object, inserted in one store operation by Granary's
/// `BatchInsertRequest`. The handlers are called while the request runs, one object per call, so a large
/// import never builds every object first.
public final class NSBatchInsertRequest: NSPersistentStoreRequest {
    /// The entity inserted into.
    public let entityName: String
    /// The dictionaries to insert, when given at once.
    public var objectsToInsert: [[String: Any]]?
    /// Fills one dictionary per call until it returns `true` (that call's dictionary is not inserted).
    public var dictionaryHandler: ((NSMutableDictionary) -> Bool)?
    /// Sets one object's attributes per call until it returns `true` (that call's object is not
    /// inserted). The object is a new instance of the entity's class in no context: cast it
    /// (`$0 as! Quake`) and set its properties.
    public var managedObjectHandler: ((NSManagedObject) -> Bool)?
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

    /// Inserts the objects `handler` sets, one per call, until it returns `true`.
    public init(entityName: String, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool) {
        self.entityName = entityName
        managedObjectHandler = handler
    }

    /// Inserts into `entity` the objects `handler` sets, one per call, until it returns `true`.
    public convenience init(entity: EntityDescription, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool) {
        self.init(entityName: entity.name, managedObjectHandler: handler)
    }

    /// The request in Granary's form: from the managed-object handler if one is set, else the
    /// dictionary handler, else the dictionaries given.
    func granaryRequest() -> BatchInsertRequest {
        if let managedObjectHandler {
            return BatchInsertRequest(entityName: entityName, resultType: report.granaryType, managedObjectHandler: managedObjectHandler)
        }
        if let dictionaryHandler {
            return BatchInsertRequest(entityName: entityName, resultType: report.granaryType) { values in
                let dictionary = NSMutableDictionary()
                if dictionaryHandler(dictionary) { return true }
                values = [:]
                for (key, value) in dictionary {
                    if let key = key as? String { values[key] = value }
                }
                return false
            }
        }
        return BatchInsertRequest(entityName: entityName, objects: objectsToInsert ?? [], resultType: report.granaryType)
    }

    var report: BatchReport {
        switch resultType {
        case .statusOnly: return .statusOnly
        case .objectIDs: return .objectIDs
        case .count: return .count
        }
    }
}
