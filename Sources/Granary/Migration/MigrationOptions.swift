import Foundation

/// How a store written by another model version is brought to the coordinator's model when it is
/// added (Core Data's `NSMigratePersistentStoresAutomaticallyOption` and
/// `NSInferMappingModelAutomaticallyOption`, plus CoreStore's progressive migration).
public struct MigrationOptions: Sendable, Hashable {
    /// Migrate a store written by another model when it is added; when false, adding it throws
    /// `MigrationError.incompatibleModel` listing the differences.
    public var shouldMigrateStoreAutomatically: Bool
    /// Infer the mapping between versions that have no `MigrationStep`; when false, every step needs one.
    public var shouldInferMappingModelAutomatically: Bool
    /// Earlier versions of the model, oldest first. A store written by one of them is migrated through
    /// each later version in turn; the coordinator's model is the last step even if it is not listed.
    /// A store written by a version not listed is migrated in one step from the model it recorded.
    public var versions: [ManagedObjectModel]
    /// Hand-written steps between consecutive versions; they replace the inferred mapping there.
    public var steps: [MigrationStep]
    /// For caches: a store that cannot be migrated is emptied and started afresh with the new model
    /// (and a new identity) instead of failing. Its data is lost, so it is off by default.
    public var destroyAndRecreateOnIncompatibleModel: Bool
    /// Mapping models (`.xcmappingmodel` files read with `MappingModel(contentsOf:)`): for a pair of
    /// consecutive versions one covers, the migration follows it instead of inferring (a `MigrationStep`
    /// for the same pair still comes first).
    public var mappingModels: [MappingModel]
    /// The Swift stand-ins for the migration policy classes the mapping models name, by class name.
    public var migrationPolicies: [String: EntityMigrationPolicy]
    /// Removals that are meant although an element of the same kind and type was added beside them
    /// (`Entity` or `Entity.property`, by the older version's names): their data is dropped instead
    /// of the migration being refused with `MigrationError.unannouncedRenames`.
    public var acknowledgedRemovals: Set<String>
    /// Treats every removal beside a same-typed addition as meant, as Core Data does (dropping the
    /// removed element's data). Prefer `acknowledgedRemovals`, which names each one.
    public var allowsUnannouncedRenames: Bool
    /// Called as the migration goes (per table and every few thousand rows), on the thread adding the
    /// store.
    public var progress: (@Sendable (MigrationProgress) -> Void)?

    public init(
        shouldMigrateStoreAutomatically: Bool = true,
        shouldInferMappingModelAutomatically: Bool = true,
        versions: [ManagedObjectModel] = [],
        steps: [MigrationStep] = [],
        destroyAndRecreateOnIncompatibleModel: Bool = false,
        acknowledgedRemovals: Set<String> = [],
        allowsUnannouncedRenames: Bool = false,
        mappingModels: [MappingModel] = [],
        migrationPolicies: [String: EntityMigrationPolicy] = [:],
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) {
        self.mappingModels = mappingModels
        self.migrationPolicies = migrationPolicies
        self.acknowledgedRemovals = acknowledgedRemovals
        self.allowsUnannouncedRenames = allowsUnannouncedRenames
        self.shouldMigrateStoreAutomatically = shouldMigrateStoreAutomatically
        self.shouldInferMappingModelAutomatically = shouldInferMappingModelAutomatically
        self.versions = versions
        self.steps = steps
        self.destroyAndRecreateOnIncompatibleModel = destroyAndRecreateOnIncompatibleModel
        self.progress = progress
    }

    /// Options are equal when they migrate the same way: same switches, same versions and steps (by
    /// version hash). The progress handler does not count.
    public static func == (a: MigrationOptions, b: MigrationOptions) -> Bool {
        a.shouldMigrateStoreAutomatically == b.shouldMigrateStoreAutomatically
            && a.shouldInferMappingModelAutomatically == b.shouldInferMappingModelAutomatically
            && a.destroyAndRecreateOnIncompatibleModel == b.destroyAndRecreateOnIncompatibleModel
            && a.acknowledgedRemovals == b.acknowledgedRemovals && a.allowsUnannouncedRenames == b.allowsUnannouncedRenames
            && a.mappingModels.map(\.path) == b.mappingModels.map(\.path) && a.migrationPolicies.keys.sorted() == b.migrationPolicies.keys.sorted()
            && a.versions.map(\.versionHash) == b.versions.map(\.versionHash)
            && a.steps.map { [$0.source.versionHash, $0.destination.versionHash] } == b.steps.map { [$0.source.versionHash, $0.destination.versionHash] }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(shouldMigrateStoreAutomatically)
        hasher.combine(shouldInferMappingModelAutomatically)
        hasher.combine(destroyAndRecreateOnIncompatibleModel)
        hasher.combine(acknowledgedRemovals)
        hasher.combine(allowsUnannouncedRenames)
        hasher.combine(versions.map(\.versionHash))
    }
}

/// Where a migration is: which step, which table, how many rows.
public struct MigrationProgress: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        /// Rows are being read and mapped.
        case mapping
        /// The migrated store is being written and switched to.
        case writing
        /// Done: the store holds the new version.
        case finished
    }

    public var phase: Phase
    /// The step being run (1-based) and how many there are: one per pair of consecutive versions.
    public var step: Int
    public var stepCount: Int
    /// The entity hierarchy being mapped (named after its root entity), if any.
    public var entity: String?
    /// Hierarchies finished in this step, and how many the step has.
    public var entitiesCompleted: Int
    public var entityCount: Int
    /// Rows mapped so far in this step, and how many the step has.
    public var rowsCompleted: Int
    public var rowCount: Int
}

/// What a finished migration did.
public struct MigrationReport: Sendable {
    /// Model version labels (or hash prefixes) from the store's version to the new one.
    public var path: [String]
    /// The changes of each step, described.
    public var changes: [[ModelChange]]
    /// Rows written to the migrated store.
    public var rowsWritten: Int
    /// Rows of the old store dropped (removed entities, discarded by custom steps).
    public var rowsDropped: Int
    /// Whether the store was destroyed and recreated instead (`destroyAndRecreateOnIncompatibleModel`).
    public var wasRecreated: Bool
    /// The error that made it recreate the store, if it did.
    public var recreationReason: String?
}
