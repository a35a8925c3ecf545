/// A kind of object in the model, its properties and its place in an inheritance hierarchy: Core Data's
/// `NSEntityDescription`.
///
/// Construct one for a model built at run time and pass it to `ManagedObjectModel(entities:)`, or declare
/// it with `Entity(_:)` in a model block. An entity you construct stands alone: it knows only its own
/// properties, and `superentity` is nil. The entities a model hands out are resolved: they include
/// inherited properties and reach their super- and sub-entities. Descriptions are immutable values;
/// two are equal when they are the same declaration in the same model.
public struct EntityDescription: Sendable, Hashable, CustomStringConvertible {
    let storage: EntityStorage
    /// The model's resolved entities, or nil for a description not (yet) in a model.
    let graph: ModelGraph?

    /// An entity description for a model built at run time.
    ///
    /// - Parameters:
    ///   - name: The entity's name, unique in its model.
    ///   - objectType: The class that represents the entity's objects. Any class is accepted here; the
    ///     object layer checks that it is a managed object class when it instantiates one.
    ///   - isAbstract: Whether the entity has no objects of its own, only sub-entities' objects.
    ///   - superentityName: The entity this one inherits from; the model resolves it by name.
    ///   - properties: Attributes and relationships in declared order.
    ///   - uniquenessConstraints: Property lists whose combined values must be unique among objects of
    ///     this entity (and its sub-entities).
    ///   - indexes: Fetch indexes over the entity's attributes.
    ///   - renamingIdentifier: The entity's name in an earlier model version, or an identifier both versions
    ///     carry, so that migration renames the entity instead of dropping one and adding another.
    ///   - fetchedProperties: Properties whose values are fetches, evaluated when read and never stored.
    ///   - userInfo: Xcode's "User Info" pane of the entity: settings for code that reads the model
    ///     (GranaryConnect's `uniquenessAttributes`, say). Not part of the version hash, as in Core Data.
    public init(
        name: String,
        objectType: (any AnyObject.Type)? = nil,
        isAbstract: Bool = false,
        superentityName: String? = nil,
        properties: [PropertyDescription] = [],
        uniquenessConstraints: [[String]] = [],
        indexes: [FetchIndexDescription] = [],
        renamingIdentifier: String? = nil,
        fetchedProperties: [FetchedPropertyDescription] = [],
        userInfo: [String: String] = [:]
    ) {
        let declaration = EntityDeclaration(
            name: name, objectType: objectType, isAbstract: isAbstract, superentityName: superentityName,
            properties: properties.map { $0.declared(in: name) }, uniquenessConstraints: uniquenessConstraints,
            indexes: indexes, renamingIdentifier: renamingIdentifier,
            fetchedProperties: fetchedProperties.map { $0.declared(in: name) }, userInfo: userInfo)
        self.init(storage: EntityStorage(standalone: declaration), graph: nil)
    }

    init(storage: EntityStorage, graph: ModelGraph?) {
        self.storage = storage
        self.graph = graph
    }

    // MARK: Declaration

    /// The entity's name, unique in its model; the table of a root entity is named after it.
    public var name: String { storage.declaration.name }
    /// The class given with `as:` / `objectType:`, if any.
    public var objectType: (any AnyObject.Type)? { storage.declaration.objectType }
    /// Identifies `objectType` without holding it, for lookups keyed by class.
    public var classIdentifier: ObjectIdentifier? { storage.declaration.objectType.map(ObjectIdentifier.init) }
    /// The module-qualified name of `objectType` (Core Data's `managedObjectClassName`).
    public var className: String? { storage.declaration.objectType.map { String(reflecting: $0) } }
    /// An abstract entity has no objects of its own, only objects of its sub-entities.
    public var isAbstract: Bool { storage.declaration.isAbstract }
    /// The name of the entity this one inherits from, as declared.
    public var superentityName: String? { storage.declaration.superentityName }
    /// The properties this entity declares itself, in declared order.
    public var declaredProperties: [PropertyDescription] { storage.visibleDeclaredProperties }
    /// Property lists whose combined values must be unique; includes only this entity's own constraints.
    public var uniquenessConstraints: [[String]] { storage.declaration.uniquenessConstraints }
    /// The entity's own user info (Core Data's `userInfo`, Xcode's "User Info" pane); a superentity's
    /// entries are not inherited here.
    public var userInfo: [String: String] { storage.declaration.userInfo }
    /// The indexes this entity declares with `Index`; `isIndexed` attributes are not repeated here.
    public var indexes: [FetchIndexDescription] { storage.declaration.indexes }
    /// The entity's name in the previous model version, for migration.
    public var renamingIdentifier: String? { storage.declaration.renamingIdentifier }

    // MARK: Properties, own and inherited

    /// Inherited properties first (from the root down), then this entity's, each group in declared order.
    public var properties: [PropertyDescription] { storage.visibleProperties }
    /// `properties` by name.
    public var propertiesByName: [String: PropertyDescription] { storage.visiblePropertiesByName }
    /// The attributes, own and inherited, by name.
    public var attributesByName: [String: AttributeDescription] { storage.attributesByName }
    /// The relationships, own and inherited, by name.
    public var relationshipsByName: [String: RelationshipDescription] { storage.visibleRelationshipsByName }
    /// The attributes among `properties`, in the same order.
    public var attributes: [AttributeDescription] { storage.visibleProperties.compactMap(\.attribute) }
    /// The relationships among `properties`, in the same order.
    public var relationships: [RelationshipDescription] { storage.visibleProperties.compactMap(\.relationship) }
    /// The fetched properties, own and inherited (inherited first), in declared order. They are not among
    /// `properties`, which lists what objects store: read them with `ManagedObject.value(forKey:)` or
    /// `ManagedObject.fetchedObjects(forKey:as:)`.
    public var fetchedProperties: [FetchedPropertyDescription] { storage.fetchedProperties }
    /// `fetchedProperties` by name.
    public var fetchedPropertiesByName: [String: FetchedPropertyDescription] { storage.fetchedPropertiesByName }

    // MARK: Hierarchy

    /// The entity this one inherits from; nil for a root, and for an entity outside a model.
    public var superentity: EntityDescription? {
        guard let graph, let index = storage.superIndex else { return nil }
        return EntityDescription(storage: graph.entities[index], graph: graph)
    }

    /// The entities that name this one as superentity, ordered by name.
    public var subentities: [EntityDescription] {
        guard let graph else { return [] }
        return storage.subIndices.map { EntityDescription(storage: graph.entities[$0], graph: graph) }
    }

    /// Every entity below this one, depth first with siblings ordered by name: the order of their storage
    /// entity codes.
    public var allSubentities: [EntityDescription] {
        guard let graph else { return [] }
        return storage.descendantIndices.map { EntityDescription(storage: graph.entities[$0], graph: graph) }
    }

    /// The top of this entity's hierarchy (itself for a root): the entity whose table stores its objects.
    public var rootEntity: EntityDescription {
        guard let graph else { return self }
        return EntityDescription(storage: graph.entities[storage.rootIndex], graph: graph)
    }

    /// Whether this entity is `other` or inherits from it.
    public func isKind(of other: EntityDescription) -> Bool {
        var current: EntityDescription? = self
        while let entity = current {
            if entity == other { return true }
            current = entity.superentity
        }
        return false
    }

    // MARK: Identity

    /// Whether both describe the same declaration in the same model (or are the same standalone entity).
    public static func == (a: EntityDescription, b: EntityDescription) -> Bool {
        a.storage === b.storage
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(storage))
    }

    public var description: String {
        var header = "entity \(name)"
        if let superentityName { header += " : \(superentityName)" }
        if isAbstract { header += " (abstract)" }
        return ([header] + properties.map { "  " + $0.description }).joined(separator: "\n")
    }
}

/// What an entity declares, before a model resolves it.
struct EntityDeclaration: Sendable {
    let name: String
    let objectType: (any AnyObject.Type)?
    let isAbstract: Bool
    let superentityName: String?
    let properties: [PropertyDescription]
    let uniquenessConstraints: [[String]]
    let indexes: [FetchIndexDescription]
    let renamingIdentifier: String?
    var fetchedProperties: [FetchedPropertyDescription] = []
    var userInfo: [String: String] = [:]
}

/// An entity's declaration and its resolution in one model; shared by every `EntityDescription` copy.
final class EntityStorage: Sendable {
    let declaration: EntityDeclaration
    let superIndex: Int?
    let subIndices: [Int]
    let descendantIndices: [Int]
    let rootIndex: Int
    /// Every property, own and inherited, hidden inverses of one-sided relationships included: what the
    /// object graph and storage work with. The public API shows `visibleProperties`.
    let properties: [PropertyDescription]
    let propertiesByName: [String: PropertyDescription]
    let attributesByName: [String: AttributeDescription]
    let relationshipsByName: [String: RelationshipDescription]
    /// `properties` without hidden inverses, and the same by name.
    let visibleProperties: [PropertyDescription]
    let visiblePropertiesByName: [String: PropertyDescription]
    let visibleRelationshipsByName: [String: RelationshipDescription]
    let visibleDeclaredProperties: [PropertyDescription]
    /// Fetched properties, inherited first.
    let fetchedProperties: [FetchedPropertyDescription]
    let fetchedPropertiesByName: [String: FetchedPropertyDescription]
    /// The object layer's layout of this entity, made on first use (`EntityLayout.of`).
    let layout = LayoutSlot()

    init(
        declaration: EntityDeclaration, superIndex: Int?, subIndices: [Int], descendantIndices: [Int], rootIndex: Int,
        properties: [PropertyDescription], fetchedProperties: [FetchedPropertyDescription]? = nil
    ) {
        self.declaration = declaration
        self.fetchedProperties = fetchedProperties ?? declaration.fetchedProperties
        fetchedPropertiesByName = Dictionary(
            self.fetchedProperties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.superIndex = superIndex
        self.subIndices = subIndices
        self.descendantIndices = descendantIndices
        self.rootIndex = rootIndex
        self.properties = properties
        // A standalone entity may still hold duplicate names (the model rejects them); keep the first.
        propertiesByName = Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        attributesByName = propertiesByName.compactMapValues(\.attribute)
        relationshipsByName = propertiesByName.compactMapValues(\.relationship)
        visibleProperties = properties.filter { !$0.isHiddenInverse }
        visiblePropertiesByName = propertiesByName.filter { !$0.value.isHiddenInverse }
        visibleRelationshipsByName = relationshipsByName.filter { !$0.value.isHiddenInverse }
        visibleDeclaredProperties = declaration.properties.filter { !$0.isHiddenInverse }
    }

    convenience init(standalone declaration: EntityDeclaration) {
        self.init(
            declaration: declaration, superIndex: nil, subIndices: [], descendantIndices: [], rootIndex: 0,
            properties: declaration.properties)
    }
}

/// The resolved entities of one model, by position; entities refer to each other by index into it, so
/// the hierarchy has no reference cycles.
final class ModelGraph: Sendable {
    let entities: [EntityStorage]

    init(entities: [EntityStorage]) {
        self.entities = entities
    }
}
