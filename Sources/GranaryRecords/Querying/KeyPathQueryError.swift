import Granary

/// Why a key-path predicate or sort could not be turned into a fetch.
public enum KeyPathQueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key path does not go through stored properties of the entity (a computed property, a
    /// subscript, a to-many step in the middle): `keyPath` is how Swift prints it.
    case notAStoredProperty(entity: String, keyPath: String)
    /// A constant has no predicate value (an unsigned integer above `Int64.max`).
    case unrepresentableValue(entity: String, keyPath: String, value: String)
    /// The context has no coordinator, or its model has no entity for the class.
    case noEntity(className: String)

    public var description: String {
        switch self {
        case .notAStoredProperty(let entity, let keyPath):
            return "\(keyPath) is not a stored property of entity \(entity)"
        case .unrepresentableValue(let entity, let keyPath, let value):
            return "\(value) cannot be compared with \(keyPath) of entity \(entity)"
        case .noEntity(let className):
            return "no entity for class \(className) in the context's model"
        }
    }
}
