/// Why a `ManagedObjectModel` could not be built. Every message names the entity and property involved.
///
/// Thrown by the model's initializers, which check the whole model before anyone can use it; the first
/// problem found, in declaration order, is reported.
public enum ModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where a property list that must name stored, single-valued properties is used.
    public enum Usage: Sendable, Hashable, CustomStringConvertible {
        /// A uniqueness constraint, by its property names.
        case uniquenessConstraint([String])
        /// A `FetchIndexDescription`, by name.
        case index(String)

        public var description: String {
            switch self {
            case .uniquenessConstraint(let properties):
                return "uniqueness constraint (" + properties.joined(separator: ", ") + ")"
            case .index(let name):
                return "index '\(name)'"
            }
        }
    }

    /// Two entities share a name.
    case duplicateEntity(String)
    /// A name is empty, starts with `_` (reserved for storage columns), or contains `.` or whitespace.
    /// `entity` is nil when the bad name is an entity's or a configuration's own.
    case invalidName(String, entity: String?, reason: String)
    /// An entity declares two properties with one name.
    case duplicateProperty(entity: String, property: String)
    /// An entity declares a property its superentity (or an ancestor) already has.
    case shadowedProperty(entity: String, property: String, superentity: String)
    /// An entity names a superentity the model does not declare.
    case unknownSuperentity(entity: String, superentity: String)
    /// Following superentities leads back to where it started; the entities on the loop, in order.
    case inheritanceCycle([String])
    /// A relationship points to an entity the model does not declare.
    case unknownDestination(entity: String, relationship: String, destination: String)
    /// The destination entity has no property named as the relationship's inverse.
    case missingInverse(entity: String, relationship: String, destination: String, inverse: String)
    /// The inverse exists but does not point back: it is an attribute, names another inverse, or leads
    /// to an entity this one is not a kind of.
    case inverseMismatch(entity: String, relationship: String, inverse: String, reason: String)
    /// Counts or ordering that cannot hold: a negative `minCount`, `maxCount` below it, an ordered to-one.
    case invalidRelationship(entity: String, relationship: String, reason: String)
    /// A uniqueness constraint or index names a property the entity does not have.
    case unknownProperty(entity: String, property: String, usage: Usage)
    /// A uniqueness constraint or index names a property with no single stored value (to-many, transient).
    case unindexableProperty(entity: String, property: String, usage: Usage, reason: String)
    /// A uniqueness constraint or index that is empty or names a property twice.
    case invalidIndex(entity: String, usage: Usage, reason: String)
    /// A sub-entity's uniqueness constraint names only inherited properties; its unique index would also
    /// bind rows of sibling entities.
    case inheritedUniquenessConstraint(entity: String, properties: [String], superentity: String)
    /// Two indexes of one entity hierarchy would get the same engine index name.
    case duplicateIndex(entity: String, index: String)
    /// A transient flag combined with a setting that cannot work (indexed, or required with no default).
    case transientConflict(entity: String, attribute: String, reason: String)
    /// An attribute of type `.undefined` that is not transient: such values have no storage form, so
    /// Core Data and Granary allow the type only on transient attributes.
    case undefinedTypeNotTransient(entity: String, attribute: String)
    /// A derived attribute whose `derivationExpression` does not parse, names a property the entity (or a
    /// related one) does not have, or yields values the attribute's type cannot hold.
    case invalidDerivation(entity: String, attribute: String, expression: String, reason: String)
    /// A fetched property whose destination entity does not exist, whose predicate does not parse, whose
    /// sort keys name unknown properties, or whose name another property already has.
    case invalidFetchedProperty(entity: String, property: String, reason: String)
    /// A default value that the attribute's type does not accept; `reason` is the conversion error.
    case invalidDefaultValue(entity: String, attribute: String, reason: String)
    /// A `.regex` rule whose pattern does not compile.
    case invalidRegex(entity: String, attribute: String, pattern: String, reason: String)
    /// A validation rule that does not apply to the attribute's type, or whose bounds are inverted.
    case inapplicableValidationRule(entity: String, attribute: String, rule: String, reason: String)
    /// A configuration names an entity the model does not declare.
    case unknownConfigurationEntity(configuration: String, entity: String)
    /// A declaration block or a merge names one configuration twice.
    case duplicateConfiguration(String)

    public var description: String {
        switch self {
        case .duplicateEntity(let name):
            return "the model declares entity '\(name)' more than once"
        case .invalidName(let name, let entity, let reason):
            let owner = entity.map { " in entity '\($0)'" } ?? ""
            return "invalid name '\(name)'\(owner): \(reason)"
        case .duplicateProperty(let entity, let property):
            return "entity '\(entity)' declares property '\(property)' more than once"
        case .shadowedProperty(let entity, let property, let superentity):
            return "entity '\(entity)' declares property '\(property)', which it already inherits from '\(superentity)'"
        case .unknownSuperentity(let entity, let superentity):
            return "entity '\(entity)' names superentity '\(superentity)', which the model does not declare"
        case .inheritanceCycle(let entities):
            return "entities inherit from each other in a cycle: " + (entities + entities.prefix(1)).joined(separator: " -> ")
        case .unknownDestination(let entity, let relationship, let destination):
            return "relationship '\(entity).\(relationship)' points to entity '\(destination)', which the model does not declare"
        case .missingInverse(let entity, let relationship, let destination, let inverse):
            return "relationship '\(entity).\(relationship)' names inverse '\(inverse)', but entity '\(destination)' has no such property"
        case .inverseMismatch(let entity, let relationship, let inverse, let reason):
            return "relationship '\(entity).\(relationship)' and its inverse '\(inverse)' do not point at each other: \(reason)"
        case .invalidRelationship(let entity, let relationship, let reason):
            return "relationship '\(entity).\(relationship)': \(reason)"
        case .unknownProperty(let entity, let property, let usage):
            return "\(usage) of entity '\(entity)' names property '\(property)', which the entity does not have"
        case .unindexableProperty(let entity, let property, let usage, let reason):
            return "\(usage) of entity '\(entity)' cannot include '\(property)': \(reason)"
        case .invalidIndex(let entity, let usage, let reason):
            return "\(usage) of entity '\(entity)': \(reason)"
        case .inheritedUniquenessConstraint(let entity, let properties, let superentity):
            return "uniqueness constraint (\(properties.joined(separator: ", "))) of entity '\(entity)' names only "
                + "inherited properties, so it would also bind other kinds of '\(superentity)': declare it on "
                + "'\(superentity)' or include a property of '\(entity)'"
        case .duplicateIndex(let entity, let index):
            return "entity '\(entity)' would create index '\(index)', a name its entity hierarchy already uses"
        case .transientConflict(let entity, let attribute, let reason):
            return "transient attribute '\(entity).\(attribute)': \(reason)"
        case .undefinedTypeNotTransient(let entity, let attribute):
            return "attribute '\(entity).\(attribute)' has the undefined type, which only a transient attribute may have: "
                + "make it transient, or give it a type that can be stored"
        case .invalidDerivation(let entity, let attribute, let expression, let reason):
            return "derived attribute '\(entity).\(attribute)' (derivation \(expression)): \(reason)"
        case .invalidFetchedProperty(let entity, let property, let reason):
            return "fetched property '\(entity).\(property)': \(reason)"
        case .invalidDefaultValue(let entity, let attribute, let reason):
            return "default value of attribute '\(entity).\(attribute)' is invalid: \(reason)"
        case .invalidRegex(let entity, let attribute, let pattern, let reason):
            return "attribute '\(entity).\(attribute)' has an invalid regular expression \(pattern): \(reason)"
        case .inapplicableValidationRule(let entity, let attribute, let rule, let reason):
            return "validation rule \(rule) of attribute '\(entity).\(attribute)': \(reason)"
        case .unknownConfigurationEntity(let configuration, let entity):
            return "configuration '\(configuration)' names entity '\(entity)', which the model does not declare"
        case .duplicateConfiguration(let name):
            return "the model declares configuration '\(name)' more than once"
        }
    }
}
