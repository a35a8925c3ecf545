import Foundation

/// A typed value property of an entity: Core Data's `NSAttributeDescription`.
///
/// Construct it directly for models built at run time, or declare it with `Attribute(_:_:)` inside an
/// `Entity` block. It is immutable; the entity that holds it fills in `entityName`, and the model stores
/// `defaultValue` in the type's canonical Swift form (an integer literal given for a `.double` attribute
/// reads back as a `Double`).
public struct AttributeDescription: Sendable, CustomStringConvertible {
    /// The attribute's key: unique within its entity and its entity's ancestors.
    public let name: String
    /// The type of the attribute's values, which decides its column type.
    public let type: AttributeType
    /// Whether the value may be nil when the object is saved.
    public let isOptional: Bool
    /// The value a newly inserted object starts with; does not affect storage or the version hash.
    public let defaultValue: (any Sendable)?
    /// A transient attribute lives only in memory: it has no column and is nil when an object is fetched.
    public let isTransient: Bool
    /// Shortcut for a single-attribute ascending index named after the attribute.
    public let isIndexed: Bool
    /// Rules `validate(_:)` applies to non-nil values; they do not affect storage.
    public let validationRules: [ValidationRule]
    /// The attribute's name in the previous model version, for migration.
    public let renamingIdentifier: String?
    /// The entity that declares this attribute (for inherited attributes, the superentity); nil until an
    /// `EntityDescription` holds it.
    public let entityName: String?
    /// For a derived attribute (Core Data's `NSDerivedAttributeDescription`), the expression its value is
    /// computed from at each save of the object: a key path (`name`, `author.name`), `lowercase:(name)`,
    /// `uppercase:(name)`, `canonical:(name)`, `books.@count`, `books.@sum.pages` (also `@max`, `@min`,
    /// `@avg`) or `now()`. Nil for an attribute the app sets.
    public let derivationExpression: String?
    /// Whether a deleted object's value of this attribute is kept in the tombstone of its delete in the
    /// store's persistent history (Core Data's `preservesValueInHistoryOnDeletion`): for the attributes
    /// that identify an object to whoever reads the history later (a unique identifier, a title). Does
    /// not affect storage or the version hash.
    public let preservesValueInHistoryOnDeletion: Bool
    /// The parsed `derivationExpression`, or why it does not parse (building the model reports it).
    let derivation: Result<DerivationExpression, DerivationParseFailure>?
    /// The compiled `.regex` rules, keyed by pattern and anchored at both ends; a pattern that does not
    /// compile is absent, and building the model reports it.
    private let expressions: [String: NSRegularExpression]

    /// An attribute description.
    ///
    /// `isOptional` defaults to `true`, as in Core Data, so ported code behaves the same; the `Attribute`
    /// declaration defaults to required.
    public init(
        name: String,
        type: AttributeType,
        isOptional: Bool = true,
        defaultValue: (any Sendable)? = nil,
        isTransient: Bool = false,
        isIndexed: Bool = false,
        validationRules: [ValidationRule] = [],
        renamingIdentifier: String? = nil,
        derivationExpression: String? = nil,
        preservesValueInHistoryOnDeletion: Bool = false
    ) {
        self.init(
            name: name, type: type, isOptional: isOptional, defaultValue: defaultValue, isTransient: isTransient,
            isIndexed: isIndexed, validationRules: validationRules, renamingIdentifier: renamingIdentifier,
            entityName: nil, derivationExpression: derivationExpression,
            preservesValueInHistoryOnDeletion: preservesValueInHistoryOnDeletion)
    }

    private init(
        name: String, type: AttributeType, isOptional: Bool, defaultValue: (any Sendable)?, isTransient: Bool,
        isIndexed: Bool, validationRules: [ValidationRule], renamingIdentifier: String?, entityName: String?,
        derivationExpression: String?, preservesValueInHistoryOnDeletion: Bool
    ) {
        self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.isTransient = isTransient
        self.isIndexed = isIndexed
        self.validationRules = validationRules
        self.renamingIdentifier = renamingIdentifier
        self.entityName = entityName
        self.derivationExpression = derivationExpression
        self.derivation = derivationExpression.map { text in
            Result { () throws(DerivationParseFailure) in try DerivationExpression(parsing: text) }
        }
        var expressions: [String: NSRegularExpression] = [:]
        for case .regex(let pattern) in validationRules where (try? NSRegularExpression(pattern: pattern)) != nil {
            expressions[pattern] = try? NSRegularExpression(pattern: #"\A(?:"# + pattern + #")\z"#)
        }
        self.expressions = expressions
    }

    /// `"Entity.attribute"`, or just the name before an entity holds the attribute.
    public var qualifiedName: String {
        entityName.map { "\($0).\(name)" } ?? name
    }

    /// Whether the value is computed from `derivationExpression` at save rather than set by the app.
    public var isDerived: Bool { derivationExpression != nil }

    public var description: String {
        "attribute \(qualifiedName): \(type)\(isOptional ? "?" : "")\(isTransient ? " transient" : "")"
            + (derivationExpression.map { " derived from \($0)" } ?? "")
    }

    func declared(in entity: String) -> AttributeDescription {
        AttributeDescription(
            name: name, type: type, isOptional: isOptional, defaultValue: defaultValue, isTransient: isTransient,
            isIndexed: isIndexed, validationRules: validationRules, renamingIdentifier: renamingIdentifier,
            entityName: entity, derivationExpression: derivationExpression,
            preservesValueInHistoryOnDeletion: preservesValueInHistoryOnDeletion)
    }

    func withDefaultValue(_ value: (any Sendable)?) -> AttributeDescription {
        AttributeDescription(
            name: name, type: type, isOptional: isOptional, defaultValue: value, isTransient: isTransient,
            isIndexed: isIndexed, validationRules: validationRules, renamingIdentifier: renamingIdentifier,
            entityName: entityName, derivationExpression: derivationExpression,
            preservesValueInHistoryOnDeletion: preservesValueInHistoryOnDeletion)
    }

    // MARK: Values

    /// The storage value for a Swift value of this attribute: `type.storageValue(for:)` with errors that
    /// name the attribute.
    /// - Throws: `ValueConversionError` (`.typeMismatch`, `.outOfRange`, `.unregisteredTransformableType`,
    ///   `.transformFailed`) with `attribute` set to `qualifiedName`.
    public func storageValue(for value: Any?) throws(ValueConversionError) -> Value {
        do {
            return try type.storageValue(for: value)
        } catch {
            throw error.naming(qualifiedName)
        }
    }

    /// The Swift value for a stored value of this attribute: `type.swiftValue(from:)` with errors that
    /// name the attribute.
    /// - Throws: `ValueConversionError` (`.unexpectedStorageValue`, `.unregisteredTransformableType`,
    ///   `.transformFailed`) with `attribute` set to `qualifiedName`.
    public func swiftValue(from value: Value) throws(ValueConversionError) -> (any Sendable)? {
        do {
            return try type.swiftValue(from: value)
        } catch {
            throw error.naming(qualifiedName)
        }
    }

    // MARK: Validation

    /// Every way `value` fails this attribute: missing when required, not convertible to the type, or
    /// breaking a validation rule; empty when the value is valid.
    ///
    /// Use it before saving. Rules see the value in the type's canonical Swift form (an `Int` set on an
    /// `.integer16` attribute is checked as `Int16`), and a value that cannot be converted is reported
    /// once, as `.invalidValue`, without running the rules.
    public func validate(_ value: Any?) -> [ValidationError] {
        if type == .undefined {
            // Any value goes; only a required one must be there.
            let isMissing = ManagedValueCoercion.unwrap(value) == nil || value is NSNull
            return isMissing && !isOptional ? [failure(.missing)] : []
        }
        let canonical: Any?
        if let value, let fast = type.canonicalFastPath(value) {
            // Values set through typed setters are already canonical: only the rules are left to check.
            canonical = fast
        } else {
            let stored: Value
            do {
                stored = try storageValue(for: value)
            } catch {
                return [failure(.invalidValue(error.description))]
            }
            if stored.isNull {
                if !isOptional { return [failure(.missing)] }
                canonical = nil
            } else if case .transformable = type {
                canonical = value
            } else {
                canonical = try? type.swiftValue(from: stored)
            }
        }
        var errors: [ValidationError] = []
        for rule in validationRules {
            if let reason = check(rule, canonical) { errors.append(failure(reason)) }
        }
        return errors
    }

    private func check(_ rule: ValidationRule, _ value: Any?) -> ValidationError.Reason? {
        if case .custom(let name, let body) = rule {
            return body(value).map { .custom(rule: name, message: $0) }
        }
        guard let value else { return nil }
        switch rule {
        case .range(let min, let max):
            if let min, min.compare(value) == .orderedAscending {
                return .belowMinimum(value: display(value), minimum: min.description)
            }
            if let max, max.compare(value) == .orderedDescending {
                return .aboveMaximum(value: display(value), maximum: max.description)
            }
        case .length(let min, let max):
            let length: Int
            if let s = value as? String {
                length = s.count
            } else if let d = value as? Data {
                length = d.count
            } else {
                return nil
            }
            if let min, length < min { return .tooShort(length: length, minimum: min) }
            if let max, length > max { return .tooLong(length: length, maximum: max) }
        case .regex(let pattern):
            guard let s = value as? String else { return nil }
            guard let expression = expressions[pattern],
                expression.firstMatch(in: s, options: [], range: NSRange(s.startIndex..., in: s)) != nil
            else { return .patternMismatch(pattern: pattern) }
        case .custom:
            break
        }
        return nil
    }

    private func display(_ value: Any) -> String {
        if let date = value as? Date { return SafeDescription.iso8601(date) }
        return SafeDescription.of(value)
    }

    private func failure(_ reason: ValidationError.Reason) -> ValidationError {
        ValidationError(entityName: entityName, propertyName: name, reason: reason)
    }
}
