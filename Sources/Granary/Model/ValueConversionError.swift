/// Why a Swift value could not become a storage `Value` for an attribute, or a stored `Value` could not
/// become the attribute's Swift value.
///
/// Thrown by `AttributeType.storageValue(for:)` / `swiftValue(from:)` and by the same methods on
/// `AttributeDescription`, which fill in `attribute` as `"Entity.attribute"` so a message says where
/// the value was headed.
public enum ValueConversionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The value's Swift type is not one the attribute type accepts (a `String` for an integer, say).
    case typeMismatch(attribute: String?, type: AttributeType, valueType: String)
    /// The value has an accepted type but does not fit (70000 for `.integer16`, NaN for `.decimal`).
    case outOfRange(attribute: String?, type: AttributeType, value: String)
    /// A stored value has the wrong shape for the attribute: the store holds something this model did not write.
    case unexpectedStorageValue(attribute: String?, type: AttributeType, value: String)
    /// A `.transformable` attribute's type name has no codec: no `Codable` type, transformer or
    /// `ValueTransformer` is registered under it, and it is not a property-list type Granary archives
    /// (a platform class such as `UIColor`, or an app's transformer, not registered yet).
    case unregisteredTransformableType(attribute: String?, typeName: String)
    /// A transformable value could not be encoded or decoded by its codec: a `Codable` type's JSON, a
    /// transformer's conversion, or a stored keyed archive that is damaged or holds a class the default
    /// transformer does not allow.
    case transformFailed(attribute: String?, typeName: String, reason: String)

    /// The same error with its `attribute` set, for errors raised below the attribute that owns the value.
    func naming(_ attribute: String) -> ValueConversionError {
        switch self {
        case .typeMismatch(_, let type, let valueType):
            return .typeMismatch(attribute: attribute, type: type, valueType: valueType)
        case .outOfRange(_, let type, let value):
            return .outOfRange(attribute: attribute, type: type, value: value)
        case .unexpectedStorageValue(_, let type, let value):
            return .unexpectedStorageValue(attribute: attribute, type: type, value: value)
        case .unregisteredTransformableType(_, let typeName):
            return .unregisteredTransformableType(attribute: attribute, typeName: typeName)
        case .transformFailed(_, let typeName, let reason):
            return .transformFailed(attribute: attribute, typeName: typeName, reason: reason)
        }
    }

    public var description: String {
        switch self {
        case .typeMismatch(let attribute, let type, let valueType):
            return "\(Self.subject(attribute, type)) cannot hold a value of type \(valueType)"
        case .outOfRange(let attribute, let type, let value):
            return "\(value) does not fit \(Self.subject(attribute, type))\(Self.rangeNote(type))"
        case .unexpectedStorageValue(let attribute, let type, let value):
            return "the store holds \(value) for \(Self.subject(attribute, type)), which expects a \(type.columnType) column value"
        case .unregisteredTransformableType(let attribute, let typeName):
            let owner = attribute.map { " (attribute '\($0)')" } ?? ""
            return "no transformer is registered for transformable type '\(typeName)'\(owner): register one under that name "
                + "with AttributeType.registerTransformer(named:valueType:transform:reverseTransform:) or "
                + "ValueTransformer.setValueTransformer(_:forName:), or declare a Codable type with AttributeType.transformable(_:name:)"
        case .transformFailed(let attribute, let typeName, let reason):
            let owner = attribute.map { "attribute '\($0)'" } ?? "a transformable attribute"
            return "coding a value of \(owner) (transformable '\(typeName)') failed: \(reason)"
        }
    }

    private static func subject(_ attribute: String?, _ type: AttributeType) -> String {
        if let attribute { return "\(type) attribute '\(attribute)'" }
        return "an attribute of type \(type)"
    }

    private static func rangeNote(_ type: AttributeType) -> String {
        switch type {
        case .integer16: return " (\(Int16.min)...\(Int16.max))"
        case .integer32: return " (\(Int32.min)...\(Int32.max))"
        case .integer64: return " (\(Int64.min)...\(Int64.max))"
        default: return ""
        }
    }
}
