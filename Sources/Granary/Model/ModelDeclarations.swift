/// An entity in a model declaration block, with its properties, constraints and indexes in a trailing
/// block.
///
/// ```swift
/// Entity("Employee", as: Employee.self, parent: "Person") {
///     Attribute("salary", .decimal, optional: true)
///     Relationship("manager", to: "Employee", inverse: "reports")
///     Unique("email")
/// }
/// ```
public struct Entity: Sendable {
    /// The description this declaration builds (standalone until a model resolves it).
    public let entity: EntityDescription

    /// An entity whose objects are instances of `type`. Any class is accepted; the object layer checks
    /// that it is a managed object class.
    public init<T: AnyObject>(
        _ name: String,
        as type: T.Type,
        abstract: Bool = false,
        parent: String? = nil,
        renamingIdentifier: String? = nil,
        userInfo: [String: String] = [:],
        @EntityBuilder _ content: () -> [EntityComponent] = { [] }
    ) {
        entity = Self.make(name, type, abstract, parent, renamingIdentifier, userInfo, content())
    }

    /// An entity without a class of its own; its objects use the object layer's generic class.
    public init(
        _ name: String,
        abstract: Bool = false,
        parent: String? = nil,
        renamingIdentifier: String? = nil,
        userInfo: [String: String] = [:],
        @EntityBuilder _ content: () -> [EntityComponent] = { [] }
    ) {
        entity = Self.make(name, nil, abstract, parent, renamingIdentifier, userInfo, content())
    }

    private static func make(
        _ name: String, _ type: (any AnyObject.Type)?, _ abstract: Bool, _ parent: String?, _ renaming: String?,
        _ userInfo: [String: String], _ components: [EntityComponent]
    ) -> EntityDescription {
        var properties: [PropertyDescription] = []
        var constraints: [[String]] = []
        var indexes: [FetchIndexDescription] = []
        var fetchedProperties: [FetchedPropertyDescription] = []
        for component in components {
            switch component {
            case .property(let property): properties.append(property)
            case .uniquenessConstraint(let names): constraints.append(names)
            case .index(let index): indexes.append(index)
            case .fetchedProperty(let fetched): fetchedProperties.append(fetched)
            }
        }
        return EntityDescription(
            name: name, objectType: type, isAbstract: abstract, superentityName: parent, properties: properties,
            uniquenessConstraints: constraints, indexes: indexes, renamingIdentifier: renaming,
            fetchedProperties: fetchedProperties, userInfo: userInfo)
    }
}

/// An attribute in an entity block. Unlike `AttributeDescription`, it is required unless `optional: true`.
///
/// ```swift
/// Attribute("email", .string, optional: true, validation: [.regex(#"[^@]+@[^@]+"#)])
/// Attribute("searchName", .string, optional: true, derivation: "canonical:(name)")
/// ```
public struct Attribute: Sendable {
    /// The description this declaration builds.
    public let attribute: AttributeDescription

    /// A required (unless `optional`), stored (unless `transient`) attribute.
    public init(
        _ name: String,
        _ type: AttributeType,
        optional: Bool = false,
        defaultValue: (any Sendable)? = nil,
        transient: Bool = false,
        indexed: Bool = false,
        validation: [ValidationRule] = [],
        renamingIdentifier: String? = nil,
        derivation: String? = nil,
        preservesValueInHistoryOnDeletion: Bool = false
    ) {
        attribute = AttributeDescription(
            name: name, type: type, isOptional: optional, defaultValue: defaultValue, isTransient: transient,
            isIndexed: indexed, validationRules: validation, renamingIdentifier: renamingIdentifier,
            derivationExpression: derivation, preservesValueInHistoryOnDeletion: preservesValueInHistoryOnDeletion)
    }
}

/// A fetched property in an entity block: a fetch of `entity`'s objects, run when the property is first
/// read (see `FetchedPropertyDescription`).
///
/// ```swift
/// FetchedProperty("sameLanguage", entity: "Book", predicate: "language == $FETCH_SOURCE.language AND SELF != $FETCH_SOURCE")
/// ```
public struct FetchedProperty: Sendable {
    /// The description this declaration builds.
    public let fetchedProperty: FetchedPropertyDescription

    /// A fetched property of the objects of `entity` that match `predicate`, in the order of `sortKeys`.
    public init(
        _ name: String,
        entity destination: String,
        predicate: String? = nil,
        sortKeys: [SortKey] = [],
        userInfo: [String: String] = [:]
    ) {
        fetchedProperty = FetchedPropertyDescription(
            name: name, destinationEntityName: destination, predicateFormat: predicate, sortKeys: sortKeys,
            userInfo: userInfo)
    }
}

/// A relationship in an entity block: `to:` for to-one, `toMany:` for to-many. Optional by default.
/// Leave out `inverse:` for a one-sided relationship (see "Relationships without an inverse" in
/// <doc:DefiningAModel>).
///
/// ```swift
/// Relationship("manager", to: "Employee", inverse: "reports")
/// Relationship("reports", toMany: "Employee", inverse: "manager", deleteRule: .nullify)
/// Relationship("favorites", toMany: "Book")   // one-sided
/// ```
public struct Relationship: Sendable {
    /// The description this declaration builds.
    public let relationship: RelationshipDescription

    /// A to-one relationship; with no `inverse`, a one-sided one. A `transient` one is kept in memory only.
    public init(
        _ name: String,
        to destination: String,
        inverse: String? = nil,
        deleteRule: DeleteRule = .nullify,
        optional: Bool = true,
        transient: Bool = false,
        renamingIdentifier: String? = nil
    ) {
        relationship = RelationshipDescription(
            name: name, destinationEntityName: destination, inverseName: inverse, isToMany: false,
            deleteRule: deleteRule, isOptional: optional, renamingIdentifier: renamingIdentifier, isTransient: transient)
    }

    /// A to-many relationship, ordered or not, with optional bounds on its count; with no `inverse`, a
    /// one-sided one. A `transient` one is kept in memory only.
    public init(
        _ name: String,
        toMany destination: String,
        ordered: Bool = false,
        inverse: String? = nil,
        deleteRule: DeleteRule = .nullify,
        optional: Bool = true,
        minCount: Int = 0,
        maxCount: Int? = nil,
        transient: Bool = false,
        renamingIdentifier: String? = nil
    ) {
        relationship = RelationshipDescription(
            name: name, destinationEntityName: destination, inverseName: inverse, isToMany: true, isOrdered: ordered,
            deleteRule: deleteRule, isOptional: optional, minCount: minCount, maxCount: maxCount,
            renamingIdentifier: renamingIdentifier, isTransient: transient)
    }
}

/// A uniqueness constraint in an entity block: no two objects of the entity may share the values of
/// these properties (objects with a nil among them are exempt).
public struct Unique: Sendable {
    /// The constrained property names, in the order of the unique index's columns.
    public let properties: [String]

    /// A constraint over one or more attributes or to-one relationships.
    public init(_ properties: String...) {
        self.properties = properties
    }

    /// A constraint over a list of property names built at run time.
    public init(_ properties: [String]) {
        self.properties = properties
    }
}

/// An index in an entity block: `Index("bySalary", "salary")` for ascending properties, or
/// `Index("byNameAndBorn", .ascending("name"), .descending("born"))` to choose directions.
public struct Index: Sendable {
    /// The description this declaration builds.
    public let index: FetchIndexDescription

    /// An index over properties, each ascending.
    public init(_ name: String, _ properties: String...) {
        index = FetchIndexDescription(name: name, elements: properties.map { FetchIndexElement(propertyName: $0) })
    }

    /// An index over properties with a direction each.
    public init(_ name: String, _ elements: FetchIndexElement...) {
        index = FetchIndexDescription(name: name, elements: elements)
    }
}

/// A named configuration in a model block: the entities a store added for this configuration holds.
public struct Configuration: Sendable {
    public let name: String
    /// The entities of the configuration, by name.
    public let entityNames: Set<String>

    /// A configuration of the named entities.
    public init(_ name: String, entities: String...) {
        self.init(name, entities: Set(entities))
    }

    /// A configuration of a set of entity names built at run time.
    public init(_ name: String, entities: Set<String>) {
        self.name = name
        self.entityNames = entities
    }
}
