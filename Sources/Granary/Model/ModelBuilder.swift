/// One item of a model declaration block: an entity or a configuration.
///
/// You rarely name this type: `Entity` and `Configuration` items in a `ManagedObjectModel(version:) { … }`
/// block become components through `ModelBuilder`.
public enum ModelComponent: Sendable {
    /// An entity, standalone until the model resolves it.
    case entity(EntityDescription)
    /// A named set of entity names.
    case configuration(name: String, entities: Set<String>)
}

/// One item of an entity declaration block: a property, a uniqueness constraint, an index or a fetched
/// property.
///
/// You rarely name this type: `Attribute`, `Relationship`, `Unique` and `Index` items in an
/// `Entity(…) { … }` block become components through `EntityBuilder`.
public enum EntityComponent: Sendable {
    /// An attribute or relationship, in declared order.
    case property(PropertyDescription)
    /// Property names whose combined values must be unique.
    case uniquenessConstraint([String])
    /// A named index.
    case index(FetchIndexDescription)
    /// A fetched property, evaluated when read.
    case fetchedProperty(FetchedPropertyDescription)
}

/// Collects `Entity` and `Configuration` items (and `EntityDescription`s) into a model; supports `if`,
/// `if`/`else`, `switch` and `for`.
@resultBuilder
public enum ModelBuilder {
    public static func buildExpression(_ item: Entity) -> [ModelComponent] { [.entity(item.entity)] }
    public static func buildExpression(_ item: EntityDescription) -> [ModelComponent] { [.entity(item)] }
    public static func buildExpression(_ item: Configuration) -> [ModelComponent] {
        [.configuration(name: item.name, entities: item.entityNames)]
    }
    public static func buildExpression(_ items: [ModelComponent]) -> [ModelComponent] { items }
    public static func buildBlock(_ parts: [ModelComponent]...) -> [ModelComponent] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [ModelComponent]?) -> [ModelComponent] { part ?? [] }
    public static func buildEither(first part: [ModelComponent]) -> [ModelComponent] { part }
    public static func buildEither(second part: [ModelComponent]) -> [ModelComponent] { part }
    public static func buildArray(_ parts: [[ModelComponent]]) -> [ModelComponent] { parts.flatMap { $0 } }
}

/// Collects `Attribute`, `Relationship`, `Unique` and `Index` items (and descriptions) into an entity;
/// supports `if`, `if`/`else`, `switch` and `for`.
@resultBuilder
public enum EntityBuilder {
    public static func buildExpression(_ item: Attribute) -> [EntityComponent] { [.property(.attribute(item.attribute))] }
    public static func buildExpression(_ item: Relationship) -> [EntityComponent] {
        [.property(.relationship(item.relationship))]
    }
    public static func buildExpression(_ item: Unique) -> [EntityComponent] { [.uniquenessConstraint(item.properties)] }
    public static func buildExpression(_ item: Index) -> [EntityComponent] { [.index(item.index)] }
    public static func buildExpression(_ item: AttributeDescription) -> [EntityComponent] { [.property(.attribute(item))] }
    public static func buildExpression(_ item: RelationshipDescription) -> [EntityComponent] {
        [.property(.relationship(item))]
    }
    public static func buildExpression(_ item: PropertyDescription) -> [EntityComponent] { [.property(item)] }
    public static func buildExpression(_ item: FetchIndexDescription) -> [EntityComponent] { [.index(item)] }
    public static func buildExpression(_ item: FetchedProperty) -> [EntityComponent] { [.fetchedProperty(item.fetchedProperty)] }
    public static func buildExpression(_ item: FetchedPropertyDescription) -> [EntityComponent] { [.fetchedProperty(item)] }
    public static func buildExpression(_ items: [EntityComponent]) -> [EntityComponent] { items }
    public static func buildBlock(_ parts: [EntityComponent]...) -> [EntityComponent] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [EntityComponent]?) -> [EntityComponent] { part ?? [] }
    public static func buildEither(first part: [EntityComponent]) -> [EntityComponent] { part }
    public static func buildEither(second part: [EntityComponent]) -> [EntityComponent] { part }
    public static func buildArray(_ parts: [[EntityComponent]]) -> [EntityComponent] { parts.flatMap { $0 } }
}
