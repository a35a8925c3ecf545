/// One way a property's value fails its description: missing, of the wrong type, or breaking a rule.
///
/// Returned (not thrown) by `AttributeDescription.validate(_:)` and `RelationshipDescription.validate(count:)`,
/// so a caller can collect every problem of an object before reporting them; a context wraps them in its
/// own save error.
public struct ValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the value.
    public enum Reason: Sendable, Hashable {
        /// A required property is nil (or a required to-many relationship is empty).
        case missing
        /// The value cannot be stored as this attribute's type; the message says why.
        case invalidValue(String)
        /// Below a `.range` minimum; both as text.
        case belowMinimum(value: String, minimum: String)
        /// Above a `.range` maximum; both as text.
        case aboveMaximum(value: String, maximum: String)
        /// Shorter than a `.length` minimum.
        case tooShort(length: Int, minimum: Int)
        /// Longer than a `.length` maximum.
        case tooLong(length: Int, maximum: Int)
        /// The string does not wholly match a `.regex` pattern.
        case patternMismatch(pattern: String)
        /// A to-many relationship below its `minCount`: a non-empty one, or an empty non-optional one.
        case tooFew(count: Int, minimum: Int)
        /// A to-many relationship above its `maxCount`.
        case tooMany(count: Int, maximum: Int)
        /// A `.custom` rule rejected the value with this message.
        case custom(rule: String, message: String)
    }

    /// The entity that declares the property, when known.
    public let entityName: String?
    /// The attribute or relationship whose value failed.
    public let propertyName: String
    public let reason: Reason

    /// A validation failure; validation methods make these, and tests or custom validators may too.
    public init(entityName: String?, propertyName: String, reason: Reason) {
        self.entityName = entityName
        self.propertyName = propertyName
        self.reason = reason
    }

    public var description: String {
        let subject = entityName.map { "'\($0).\(propertyName)'" } ?? "'\(propertyName)'"
        switch reason {
        case .missing:
            return "\(subject) is required but has no value"
        case .invalidValue(let message):
            return "\(subject): \(message)"
        case .belowMinimum(let value, let minimum):
            return "\(subject) is \(value), below the minimum \(minimum)"
        case .aboveMaximum(let value, let maximum):
            return "\(subject) is \(value), above the maximum \(maximum)"
        case .tooShort(let length, let minimum):
            return "\(subject) has length \(length), shorter than the minimum \(minimum)"
        case .tooLong(let length, let maximum):
            return "\(subject) has length \(length), longer than the maximum \(maximum)"
        case .patternMismatch(let pattern):
            return "\(subject) does not match the pattern \(pattern)"
        case .tooFew(let count, let minimum):
            return "\(subject) has \(count) objects, fewer than the minimum \(minimum)"
        case .tooMany(let count, let maximum):
            return "\(subject) has \(count) objects, more than the maximum \(maximum)"
        case .custom(let rule, let message):
            return "\(subject) fails \(rule): \(message)"
        }
    }
}
