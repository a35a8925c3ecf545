import Foundation

/// A hand-made mapping between two model versions, as Xcode's mapping model editor makes it
/// (Core Data's `NSMappingModel`): for each entity mapping, which source entity's objects become which
/// destination entity's, how each destination attribute and relationship gets its value, and which
/// migration policy (by class name) takes part.
///
/// Load one with `init(contentsOf:)` from an `.xcmappingmodel` and list it in
/// `MigrationOptions.mappingModels`: for the pair of versions it covers, the migration uses it instead of
/// inference, as Core Data does. It can do what inference cannot, such as moving attributes into objects
/// of a new related entity. Policy class names map to `EntityMigrationPolicy` values the app registers
/// in `MigrationOptions.migrationPolicies`.
public struct MappingModel: Sendable {
    /// The version names (`Model 2`) of the models it maps from and to, from the paths the file
    /// records; nil when it records none.
    public var sourceVersionName: String?
    public var destinationVersionName: String?
    /// The version hashes (`ManagedObjectModel.versionHash`) of the two models, when known: a mapping
    /// model bound to them (`bound(from:to:)`) covers exactly that pair, as Core Data's matches by
    /// version hashes. Files from Xcode record Core Data's hashes, which Granary does not compute, so a
    /// loaded mapping model has none and matches by version name.
    public var sourceVersionHash: String?
    public var destinationVersionHash: String?
    /// The entity mappings, in the order Xcode numbers them.
    public var entityMappings: [EntityMapping]
    /// Where it was read from, for messages.
    public var path: String

    /// What an entity mapping does (`NSEntityMappingType`).
    public enum MappingType: String, Sendable, Hashable {
        /// In Core Data, destination objects made by the policy's own code. An `EntityMigrationPolicy`
        /// supplies functions, not object creation, so Granary carries it out as `transform`.
        case custom
        /// A destination entity with no source: no objects are made.
        case add
        /// A source entity with no destination: its objects are dropped.
        case remove
        /// Objects are carried over unchanged.
        case copy
        /// Objects are carried over through the property mappings.
        case transform
    }

    /// How one source entity's objects become one destination entity's (`NSEntityMapping`).
    public struct EntityMapping: Sendable {
        /// The name relationship mappings use to find it (`PersonToPerson`).
        public var name: String
        public var mappingType: MappingType
        public var sourceEntityName: String?
        public var destinationEntityName: String?
        /// The class name given in Xcode's "Custom Policy" field, looked up in
        /// `MigrationOptions.migrationPolicies`.
        public var migrationPolicyClassName: String?
        public var attributeMappings: [PropertyMapping]
        public var relationshipMappings: [PropertyMapping]
        /// A predicate (Xcode's "Filter Predicate", in `NSPredicate` format) the source objects must
        /// satisfy to be mapped; the others get no destination object from this mapping.
        public var sourceFilter: String?

        public init(name: String, mappingType: MappingType, sourceEntityName: String?, destinationEntityName: String?,
                    migrationPolicyClassName: String? = nil, attributeMappings: [PropertyMapping] = [],
                    relationshipMappings: [PropertyMapping] = [], sourceFilter: String? = nil) {
            self.sourceFilter = sourceFilter
            self.name = name
            self.mappingType = mappingType
            self.sourceEntityName = sourceEntityName
            self.destinationEntityName = destinationEntityName
            self.migrationPolicyClassName = migrationPolicyClassName
            self.attributeMappings = attributeMappings
            self.relationshipMappings = relationshipMappings
        }
    }

    /// How one destination property gets its value (`NSPropertyMapping`); no expression leaves the
    /// property at its default.
    public struct PropertyMapping: Sendable, Hashable {
        /// The destination property's name.
        public var name: String
        public var valueExpression: MappingExpression?

        public init(name: String, valueExpression: MappingExpression?) {
            self.name = name
            self.valueExpression = valueExpression
        }
    }

    /// A mapping model built in code.
    public init(from sourceVersionName: String?, to destinationVersionName: String?, entityMappings: [EntityMapping], path: String = "(in code)") {
        self.sourceVersionName = sourceVersionName
        self.destinationVersionName = destinationVersionName
        self.entityMappings = entityMappings
        self.path = path
    }

    /// This mapping model bound to two model versions by their version hashes, so that it covers that
    /// pair only, whatever the versions are named.
    public func bound(from source: ManagedObjectModel, to destination: ManagedObjectModel) -> MappingModel {
        var bound = self
        bound.sourceVersionHash = source.versionHash
        bound.destinationVersionHash = destination.versionHash
        bound.sourceVersionName = nil
        bound.destinationVersionName = nil
        return bound
    }

    /// Whether this mapping model covers migrating from `source` to `destination`: the versions it
    /// records are theirs (by version hash when bound, else by version name), and every entity it maps
    /// from or to exists in them.
    ///
    /// Core Data matches by entity version hashes, which Xcode computes with Core Data's own hashing;
    /// Granary's hashes differ, so it matches the version names the file records and checks the
    /// entities instead.
    public func covers(from source: ManagedObjectModel, to destination: ManagedObjectModel) -> Bool {
        if let sourceVersionHash, sourceVersionHash != source.versionHash { return false }
        if let destinationVersionHash, destinationVersionHash != destination.versionHash { return false }
        if let sourceVersionName, sourceVersionName != source.versionIdentifier { return false }
        if let destinationVersionName, destinationVersionName != destination.versionIdentifier { return false }
        return entityMappings.allSatisfy { mapping in
            mapping.sourceEntityName.map { source.entity(named: $0) != nil } ?? true
                && mapping.destinationEntityName.map { destination.entity(named: $0) != nil } ?? true
        }
    }
}
