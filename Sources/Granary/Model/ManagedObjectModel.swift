/// The schema of an object graph: its entities, their properties and relationships, and named
/// configurations of entities. Core Data's `NSManagedObjectModel`.
///
/// Build one with the declarative form, `ManagedObjectModel(version:) { Entity(…) { … } }`, or at run
/// time from descriptions with `ManagedObjectModel(entities:configurations:versionIdentifier:)`. Building
/// checks the whole model and resolves inheritance, so a model that exists is valid. A model is immutable
/// and `Sendable`: share one instance between coordinators, contexts and threads.
public final class ManagedObjectModel: Sendable, CustomStringConvertible {
    /// The resolved entities, in declared order.
    public let entities: [EntityDescription]
    /// `entities` by name.
    public let entitiesByName: [String: EntityDescription]
    /// Named subsets of the entities (entity names by configuration name), for stores that hold only some.
    public let configurations: [String: Set<String>]
    /// A label of your choosing (Core Data's `versionIdentifiers`); not part of `versionHash`.
    public let versionIdentifier: String?
    /// Hex SHA-256 over what decides storage (see `entityVersionHashes`): two models with the same hash
    /// can open each other's stores without migration.
    public let versionHash: String
    /// Hex SHA-256 per entity name over the entity's name, abstractness, superentity, own properties
    /// (names, types, optionality, transient flags; relationship destinations, inverses, to-many and
    /// ordered flags), uniqueness constraints and indexes. Default values, validation, delete rules,
    /// counts and renaming identifiers are left out. Migration compares these to find what changed.
    public let entityVersionHashes: [String: String]

    /// A model from descriptions: the Core Data–style form for models assembled at run time.
    ///
    /// - Parameters:
    ///   - entities: Every entity, sub-entities included; superentities and relationship destinations are
    ///     resolved by name, in any order.
    ///   - configurations: Entity names by configuration name.
    ///   - versionIdentifier: A label for this version of the model.
    /// - Throws: `ModelError` for the first problem found: duplicate or invalid names, unknown superentities
    ///   or inheritance cycles, shadowed properties, unknown relationship destinations or inverses that do
    ///   not point back, invalid counts, uniqueness constraints or indexes naming unknown, transient or
    ///   to-many properties, engine index name clashes, transient attributes that are indexed or required
    ///   without a default, default values of the wrong type, inapplicable validation rules, invalid
    ///   regular expressions, derivations that do not parse or do not fit the model
    ///   (`.invalidDerivation`), fetched properties of unknown entities or with predicates or sort keys that
    ///   do not fit (`.invalidFetchedProperty`), configurations naming unknown entities.
    public init(
        entities: [EntityDescription],
        configurations: [String: Set<String>] = [:],
        versionIdentifier: String? = nil
    ) throws(ModelError) {
        var resolver = ModelResolver(declarations: entities.map(\.storage.declaration), configurations: configurations)
        let result = try resolver.resolve()
        let graph = result.graph
        self.entities = graph.entities.map { EntityDescription(storage: $0, graph: graph) }
        self.entitiesByName = Dictionary(uniqueKeysWithValues: self.entities.map { ($0.name, $0) })
        self.configurations = configurations
        self.versionIdentifier = versionIdentifier
        self.versionHash = result.versionHash
        self.entityVersionHashes = result.entityVersionHashes
        ModelClassRegistry.register(self)
    }

    /// A model from a declaration block: `Entity` and `Configuration` items.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel(version: "1") {
    ///     Entity("Person", as: Person.self) {
    ///         Attribute("name", .string)
    ///         Relationship("friends", toMany: "Person", inverse: "friends")
    ///     }
    ///     Configuration("Local", entities: "Person")
    /// }
    /// ```
    /// - Throws: `ModelError.duplicateConfiguration` when the block names a configuration twice, and every
    ///   error of `init(entities:configurations:versionIdentifier:)`.
    public convenience init(version: String? = nil, @ModelBuilder _ content: () -> [ModelComponent]) throws(ModelError) {
        var entities: [EntityDescription] = []
        var configurations: [String: Set<String>] = [:]
        for component in content() {
            switch component {
            case .entity(let entity):
                entities.append(entity)
            case .configuration(let name, let names):
                if configurations.updateValue(names, forKey: name) != nil { throw .duplicateConfiguration(name) }
            }
        }
        try self.init(entities: entities, configurations: configurations, versionIdentifier: version)
    }

    /// One model holding the entities and configurations of several (Core Data's `init(byMerging:)`).
    ///
    /// Use it to combine models declared by separate modules.
    /// - Throws: `ModelError.duplicateEntity` when two models declare one entity name,
    ///   `.duplicateConfiguration` when two declare one configuration name, and every error of
    ///   `init(entities:configurations:versionIdentifier:)`.
    public convenience init(merging models: [ManagedObjectModel], versionIdentifier: String? = nil) throws(ModelError) {
        var configurations: [String: Set<String>] = [:]
        for model in models {
            for (name, entities) in model.configurations where configurations.updateValue(entities, forKey: name) != nil {
                throw .duplicateConfiguration(name)
            }
        }
        try self.init(entities: models.flatMap(\.entities), configurations: configurations, versionIdentifier: versionIdentifier)
    }

    /// The entity with this name, if the model has one.
    public func entity(named name: String) -> EntityDescription? {
        entitiesByName[name]
    }

    /// The first entity, in declared order, whose objects are instances of exactly `type`.
    ///
    /// Use it to find the entity of a class, for example when inserting an object by its type.
    public func entity(for type: any AnyObject.Type) -> EntityDescription? {
        let identifier = ObjectIdentifier(type)
        return entities.first { $0.classIdentifier == identifier }
    }

    /// The configuration names, sorted.
    public var configurationNames: [String] { configurations.keys.sorted() }

    /// The entities of a configuration in declared order; every entity for `nil`, and `nil` for a
    /// configuration the model does not have.
    ///
    /// Use it when adding a store for one configuration, to know which entities it holds.
    public func entities(forConfiguration name: String?) -> [EntityDescription]? {
        guard let name else { return entities }
        guard let names = configurations[name] else { return nil }
        return entities.filter { names.contains($0.name) }
    }

    /// The entity a relationship of this model points to.
    public func destinationEntity(of relationship: RelationshipDescription) -> EntityDescription? {
        entitiesByName[relationship.destinationEntityName]
    }

    /// The relationship on the destination entity that points back at `relationship`, or nil for a
    /// one-sided relationship.
    public func inverseRelationship(of relationship: RelationshipDescription) -> RelationshipDescription? {
        guard let name = relationship.inverseName else { return nil }
        return destinationEntity(of: relationship)?.relationshipsByName[name]
    }

    public var description: String {
        let header = "model \(versionIdentifier ?? "(unversioned)") \(versionHash.prefix(12))"
        return ([header] + entities.map(\.description)).joined(separator: "\n")
    }
}
