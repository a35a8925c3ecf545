import Granary

/// Core Data's `NSExpressionDescription`: a name and an expression whose value dictionary results hold
/// under it (an aggregate such as `sum:(amount)`, a key path, or the evaluated object's ID). Put it in
/// `NSFetchRequest.propertiesToFetch` of a `.dictionaryResultType` request; Granary's form is
/// `ExpressionDescription`.
open class NSExpressionDescription: CustomStringConvertible {
    /// The key of the value in each dictionary.
    public var name: String = ""
    /// What is computed.
    public var expression: NSExpression?
    /// The type the value is returned as; `.undefinedAttributeType` keeps the expression's own.
    public var expressionResultType: NSAttributeType = .undefinedAttributeType

    /// An empty description, configured through its properties as in Core Data.
    public init() {}

    public var description: String { "\(name) = \(expression?.description ?? "nil")" }

    /// The fetched property this description asks for in a fetch of `entity`: the object's ID for the
    /// evaluated object (under `FetchRequest.objectIDKey`, the one name Granary returns it under),
    /// else Granary's `ExpressionDescription`.
    /// - Throws: `ContextError.invalidAggregate` for no expression or one Granary does not compute;
    ///   `.invalidRequest` for the evaluated object under another name.
    func fetchProperty(entity: String) throws -> FetchProperty {
        guard let expression else {
            throw ContextError.invalidAggregate(entity: entity, name: name, keyPath: "nil", reason: "the expression description has no expression")
        }
        let objectIDKey = FetchRequest<ManagedObject>.objectIDKey
        if expression.expressionType == .evaluatedObject {
            guard name == objectIDKey else {
                throw ContextError.invalidRequest(entity: entity, reason: "the evaluated object (its ID) is fetched under the name '\(objectIDKey)', not '\(name)'")
            }
            return .property(objectIDKey)
        }
        return .expression(ExpressionDescription(name: name, expression: try expression.granaryExpression(name: name, entity: entity),
                                                 resultType: expressionResultType.attributeType))
    }
}

/// Core Data's `NSAttributeType`: the type of an attribute or of an expression's result, with Core
/// Data's raw values. `attributeType` is Granary's `AttributeType`.
public enum NSAttributeType: UInt, Sendable, Hashable {
    case undefinedAttributeType = 0
    case integer16AttributeType = 100
    case integer32AttributeType = 200
    case integer64AttributeType = 300
    case decimalAttributeType = 400
    case doubleAttributeType = 500
    case floatAttributeType = 600
    case stringAttributeType = 700
    case booleanAttributeType = 800
    case dateAttributeType = 900
    case binaryDataAttributeType = 1000
    case uuidAttributeType = 1100
    case uriAttributeType = 1200
    case transformableAttributeType = 1800
    case objectIDAttributeType = 2000

    /// Granary's type: `.undefined` for the undefined and object ID types (an object ID keeps its own
    /// type), `secureUnarchiveFromData` for transformable.
    public var attributeType: AttributeType {
        switch self {
        case .undefinedAttributeType, .objectIDAttributeType: return .undefined
        case .integer16AttributeType: return .integer16
        case .integer32AttributeType: return .integer32
        case .integer64AttributeType: return .integer64
        case .decimalAttributeType: return .decimal
        case .doubleAttributeType: return .double
        case .floatAttributeType: return .float
        case .stringAttributeType: return .string
        case .booleanAttributeType: return .boolean
        case .dateAttributeType: return .date
        case .binaryDataAttributeType: return .binaryData
        case .uuidAttributeType: return .uuid
        case .uriAttributeType: return .uri
        case .transformableAttributeType: return .secureUnarchiveFromData
        }
    }
}
