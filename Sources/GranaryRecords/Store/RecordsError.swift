import Foundation
import Granary
import GranaryStack

/// What the records services throw (or hand to a completion): each case names the entity, the ID or
/// the store involved, so the message says what to fix.
public enum RecordsError: Error, CustomStringConvertible {
    /// No manager was given and `StoreManager.default` was never set.
    case noDefaultStore
    /// A `Persistable` entity's ID attribute has no uniqueness constraint of its own in the model
    /// (declare `Unique("<attribute>")` in the entity, or a constraint on it in the Xcode model).
    case idNotUnique(entity: String, attribute: String)
    /// The `idKeyPath` of a `Persistable` class does not name a stored attribute of its entity.
    case unknownIDProperty(entity: String, keyPath: String)
    /// The class is bound to no entity of the manager's model.
    case unknownEntity(type: String)
    /// The ID's Swift type cannot stand in a predicate (use a string, an integer, a UUID…).
    case unsupportedIDType(entity: String, type: String)
    /// `create(updateIfEntityExists: false)` found an object with this ID: nothing was written.
    case entityExists(entity: String, id: String)
    /// The object to update or delete is not in the store (deleted meanwhile, or never saved).
    case objectNotFound(entity: String, object: String)
    /// A find-or-create (`init(entityID:context:)`) was called on the view context, which the records
    /// services never write through: call it inside a write (`create`, `update`) on its context.
    case viewContextWrite(entity: String)
    /// The store could not be opened (its error underneath), and recreating it was not allowed or failed.
    case storeFailed(name: String, underlying: any Error)

    /// The message, naming the entity, ID or store involved.
    public var description: String {
        switch self {
        case .noDefaultStore:
            return "no StoreManager was given and StoreManager.default is not set"
        case .idNotUnique(let entity, let attribute):
            return "entity '\(entity)': its ID attribute '\(attribute)' has no uniqueness constraint (add Unique(\"\(attribute)\") to the entity)"
        case .unknownIDProperty(let entity, let keyPath):
            return "entity '\(entity)': idKeyPath \(keyPath) is not a stored attribute of the entity"
        case .unknownEntity(let type):
            return "class \(type) is bound to no entity of the store's model"
        case .unsupportedIDType(let entity, let type):
            return "entity '\(entity)': an ID of type \(type) cannot be used in a fetch (use String, an integer type, UUID, Date or Data)"
        case .entityExists(let entity, let id):
            return "entity '\(entity)': an object with ID \(id) exists and updateIfEntityExists is false; nothing was written"
        case .objectNotFound(let entity, let object):
            return "entity '\(entity)': object \(object) is not in the store"
        case .viewContextWrite(let entity):
            return "entity '\(entity)': find-or-create was called on the view context; call it on the writer's context inside create or update"
        case .storeFailed(let name, let underlying):
            return "store '\(name)' could not be opened: \(underlying)"
        }
    }
}
