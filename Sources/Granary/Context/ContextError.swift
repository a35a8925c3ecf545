import Foundation

/// What the object and context layer throws. Every message names the entity, key and value involved.
public enum ContextError: Error, Sendable, CustomStringConvertible {
    case unknownEntity(String)
    case unknownKey(entity: String, key: String)
    case wrongValueType(entity: String, key: String, value: String, reason: String)
    /// A stored value of an object could not be read as its attribute's value: a transformable whose
    /// archive is damaged or holds a class its transformer does not allow, or whose transformer is not
    /// registered. `reason` is the `ValueConversionError`'s message.
    case unreadableValue(entity: String, attribute: String, object: ManagedObjectID, reason: String)
    /// A relationship was set to an object of another context or coordinator.
    case foreignObject(entity: String, key: String, object: String)
    /// `save()` found invalid objects; every problem is listed.
    case validation([ValidationError])
    /// A `deny` delete rule blocked a deletion.
    case deleteDenied(entity: String, relationship: String, object: String, count: Int)
    /// Optimistic locking found objects changed in the store since they were read, and the merge
    /// policy is `.error`.
    case mergeConflicts([MergeConflict])
    /// Objects would break a uniqueness constraint and the merge policy is `.error` (or left them so):
    /// every conflict is listed, with the constraint, its values, and the objects that share them.
    case constraintConflicts([ConstraintConflict])
    /// A uniqueness constraint would be violated by a write no merge policy resolves (a batch update).
    case constraintViolation(entity: String, properties: [String], value: String)
    case noSuchObject(ManagedObjectID)
    /// An asynchronous fetch of `entity` was cancelled (`AsynchronousFetchResult.cancel()`, or its
    /// progress cancelled) before it finished; it returned nothing.
    case fetchCancelled(entity: String)
    /// The object at `index` of a batch insert (in the array, or in the order its handler gave them)
    /// cannot be inserted; `error` says why. Nothing is written.
    indirect case invalidBatchObject(index: Int, error: ContextError)
    /// A request (fetched-results controller, batch request) cannot run as given.
    case invalidRequest(entity: String, reason: String)
    /// An `ExpressionDescription` of a dictionary fetch cannot be computed: `name` is the description's,
    /// `keyPath` what it reads, `reason` why (a sum or average of something that is not a number, a
    /// minimum of something without an order, a result type its value cannot take).
    case invalidAggregate(entity: String, name: String, keyPath: String, reason: String)
    /// A key path of `propertiesToGroupBy` cannot group objects: it ends at a to-many relationship (an
    /// object would be in as many groups as it has members) or at a transient attribute, or passes
    /// through something that is not a to-one relationship.
    case invalidGrouping(entity: String, keyPath: String, reason: String)
    /// A property fetched in a grouped or aggregate dictionary fetch is neither grouped by nor an
    /// aggregate, so a group has no one value for it (SQL's "must appear in the GROUP BY clause"; Core
    /// Data raises the same).
    case ungroupedProperty(entity: String, property: String, groupedBy: [String])
    /// The `havingPredicate` or a sort key (`clause` says which) of a grouped or aggregate dictionary
    /// fetch names `key`, which the results do not hold; `resultKeys` are those they do.
    case unknownResultKey(entity: String, key: String, clause: String, resultKeys: [String])
    /// The context has no store: no coordinator, no parent, or its store was removed.
    case noPersistentStore(String)
    case storeNotFound(URL)
    /// Nothing is at the URL given for a store whose metadata was asked for.
    case storeDoesNotExist(URL)
    /// A store is already at the URL a store was to be copied to (`migratePersistentStore`).
    case storeExists(URL)
    /// The store at the URL is open (by another coordinator, or another process) and cannot be
    /// destroyed or replaced under it.
    case storeInUse(URL)
    /// `save()` was called on a context marked `isReadOnly`; the string names the context.
    case readOnlyContext(String)
    /// A validation hook of an object (`validateForInsert()`, `validateForUpdate()`,
    /// `validateForDelete()`, or `validateValue(_:forKey:)` through them) threw `error`, which is not a
    /// `ValidationError`; `save()` fails with it.
    case validationFailed(entity: String, object: ManagedObjectID, hook: String, error: any Error)
    /// `willSave()` of this object changed it on every call, so the save never settled (Core Data
    /// recurses until the program crashes).
    case willSaveKeepsChanging(entity: String, object: ManagedObjectID)
    /// A derived attribute (computed at each save) or a fetched property (computed when read) was set.
    case readOnlyProperty(entity: String, key: String, reason: String)
    /// A derived attribute's expression could not be computed for an object at save (a value of the
    /// wrong type, such as a transformable reached through a key path); nothing is written.
    case derivationFailed(entity: String, attribute: String, object: ManagedObjectID, reason: String)
    /// `undo()` or `redo()` was called on a context whose `undoManager` is nil; the string names the
    /// context.
    case noUndoManager(context: String)
    /// `undo()` or `redo()` was called while groups opened with `beginUndoGrouping()` are still open
    /// inside the event's (`level` is the manager's `groupingLevel`), or from inside an undo or redo.
    case undoGroupsOpen(context: String, level: Int)
    case storage(StorageError)

    public var description: String {
        switch self {
        case .unknownEntity(let name): return "the model has no entity named '\(SafeDescription.of(name))'"
        case .unknownKey(let entity, let key): return "entity '\(entity)' has no property '\(SafeDescription.of(key))'"
        case .wrongValueType(let entity, let key, let value, let reason):
            return "\(entity).\(key) cannot hold \(value): \(reason)"
        case .unreadableValue(let entity, let attribute, let object, let reason):
            return "the stored value of \(entity).\(attribute) of object \(object) cannot be read: \(reason)"
        case .foreignObject(let entity, let key, let object):
            return "\(entity).\(key) cannot point to \(object), which belongs to another context"
        case .validation(let errors):
            return "\(errors.count) validation error(s): " + errors.map(\.description).joined(separator: "; ")
        case .deleteDenied(let entity, let relationship, let object, let count):
            return "cannot delete \(object): \(entity).\(relationship) has the deny rule and still holds \(count) object(s)"
        case .mergeConflicts(let conflicts):
            return "\(conflicts.count) merge conflict(s): " + conflicts.map(\.description).joined(separator: "; ")
        case .constraintConflicts(let conflicts):
            return "\(conflicts.count) uniqueness constraint conflict(s): " + conflicts.map(\.description).joined(separator: "; ")
        case .constraintViolation(let entity, let properties, let value):
            return "uniqueness constraint (\(properties.joined(separator: ", "))) of \(entity) is violated by \(value)"
        case .invalidBatchObject(let index, let error): return "object \(index) of the batch insert: \(error.description)"
        case .noSuchObject(let id): return "no object with ID \(id) exists in the store"
        case .fetchCancelled(let entity): return "the asynchronous fetch of \(entity) was cancelled before it finished"
        case .invalidRequest(let entity, let reason): return "invalid request for entity '\(entity)': \(reason)"
        case .invalidAggregate(let entity, let name, let keyPath, let reason):
            return "expression '\(name)' of a fetch of \(entity) cannot be computed from '\(keyPath)': \(reason)"
        case .invalidGrouping(let entity, let keyPath, let reason):
            return "a fetch of \(entity) cannot group by '\(keyPath)': \(reason)"
        case .ungroupedProperty(let entity, let property, let groupedBy):
            let grouped = groupedBy.isEmpty ? "nothing is grouped by" : "it is grouped by " + groupedBy.map { "'\($0)'" }.joined(separator: ", ")
            return "a grouped or aggregate fetch of \(entity) fetches '\(property)', which is neither grouped by nor an aggregate (\(grouped))"
        case .unknownResultKey(let entity, let key, let clause, let resultKeys):
            return "\(clause) of a fetch of \(entity) names '\(key)', which is not a key of the results ("
                + (resultKeys.isEmpty ? "they have none" : "they have " + resultKeys.map { "'\($0)'" }.joined(separator: ", ")) + ")"
        case .noPersistentStore(let reason): return "no persistent store: \(reason)"
        case .storeNotFound(let url): return "no persistent store at \(url.path) is attached to this coordinator"
        case .storeDoesNotExist(let url): return "no store exists at \(url.path)"
        case .storeExists(let url): return "a store already exists at \(url.path)"
        case .storeInUse(let url): return "the store at \(url.path) is open elsewhere (another coordinator or process)"
        case .readOnlyContext(let context): return "\(context) is read-only: its changes are never saved"
        case .validationFailed(let entity, let object, let hook, let error):
            return "\(hook) of \(entity) \(object) failed: \(error)"
        case .willSaveKeepsChanging(let entity, let object):
            return "willSave() of \(entity) \(object) changed it on each of \(ManagedObjectContext.willSaveRoundLimit) calls; "
                + "compare a value with the current one before setting it there"
        case .readOnlyProperty(let entity, let key, let reason):
            return "\(entity).\(key) is read-only: \(reason)"
        case .derivationFailed(let entity, let attribute, let object, let reason):
            return "derived attribute \(entity).\(attribute) of \(object) could not be computed: \(reason)"
        case .noUndoManager(let context):
            return "\(context) has no undo manager: set undoManager to a ContextUndoManager before undoing or redoing"
        case .undoGroupsOpen(let context, let level):
            return "\(context) cannot undo or redo now: its undo manager is playing a group back or has \(level) undo groups open; "
                + "close them with endUndoGrouping() first"
        case .storage(let error): return error.description
        }
    }
}
