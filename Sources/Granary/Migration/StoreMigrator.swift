import Foundation

/// Brings a store written by an earlier model version to a model: finds the version that wrote it,
/// plans the steps (inferred or custom) and carries them out in one atomic switch.
///
/// `PersistentStoreCoordinator.addPersistentStore` runs it by itself (see `MigrationOptions`); use it
/// directly to inspect or migrate a store ahead of time, as `granary migrate` does.
///
/// ```swift
/// let migrator = StoreMigrator(model: v3, options: MigrationOptions(versions: [v1, v2]))
/// print(try migrator.plan(forStoreAt: url).changes)
/// try migrator.migrateStore(at: url)
/// ```
public struct StoreMigrator: Sendable {
    /// The model the store is brought to.
    public let model: ManagedObjectModel
    public let options: MigrationOptions

    public init(model: ManagedObjectModel, options: MigrationOptions = MigrationOptions()) {
        self.model = model
        self.options = options
    }

    /// What migrating a store would do.
    public struct Plan: Sendable {
        /// Whether the store was written by another model.
        public var isNeeded: Bool
        /// Labels of the versions the store passes through, from its own to the new one.
        public var path: [String]
        /// The changes of each step.
        public var changes: [[ModelChange]]
        /// Changes that inference cannot carry out, with their step's labels; migrating throws if any.
        public var problems: [(from: String, to: String, changes: [ModelChange])]
        fileprivate var mappings: [InferredMapping]
    }

    /// The plan for a store with this metadata (the store's record of the model that wrote it).
    /// - Throws: `MigrationError.unknownSourceModel` when the store's version is neither among
    ///   `options.versions` nor recorded in the store; `.invalidVersions` for a versions list with
    ///   duplicates; `.unreadableStoredModel` for a damaged record.
    public func plan(for metadata: StoreMetadata, store: String) throws(MigrationError) -> Plan {
        guard let storeHash = metadata.userInfo[PersistentStore.modelHashKey], storeHash != model.versionHash else {
            return Plan(isNeeded: false, path: [], changes: [], problems: [], mappings: [])
        }
        let chain = try versionChain(from: storeHash, metadata: metadata, store: store)
        var mappings: [InferredMapping] = []
        var problems: [(String, String, [ModelChange])] = []
        for (older, newer) in zip(chain, chain.dropFirst()) {
            let step = options.steps.first { $0.source.versionHash == older.versionHash && $0.destination.versionHash == newer.versionHash }
            let mappingModel = options.mappingModels.first { $0.covers(from: older, to: newer) }
            let mapping = InferredMapping(from: older, to: newer, step: step, options: options, mappingModel: mappingModel)
            var stepProblems = mapping.problems
            if step == nil && mappingModel == nil && !options.shouldInferMappingModelAutomatically {
                stepProblems.insert(ModelChange("*", nil, .entityAdded, problem: "mapping inference is off and no migration step covers this pair of versions"), at: 0)
            }
            if !stepProblems.isEmpty { problems.append((Self.label(older), Self.label(newer), stepProblems)) }
            mappings.append(mapping)
        }
        return Plan(isNeeded: true, path: chain.map(Self.label), changes: mappings.map(\.changes), problems: problems, mappings: mappings)
    }

    /// The plan for the store at `url`, read without changing it.
    /// - Throws: `MigrationError.storage` when the store cannot be opened; as `plan(for:store:)`.
    public func plan(forStoreAt url: URL) throws(MigrationError) -> Plan {
        let engine = try Self.reportingStorage { try Engine.open(.directory(url), options: .init(readOnly: true, createIfMissing: false)) }
        defer { try? engine.close() }
        return try plan(for: engine.metadata, store: url.path)
    }

    /// Migrates the store at `url` if its model differs, and closes it again.
    /// - Returns: What was done, or nil when the store was already at the model.
    /// - Throws: `MigrationError` (see `migrate(_:store:)`); `.storage` when the store cannot be opened.
    @discardableResult
    public func migrateStore(at url: URL) throws(MigrationError) -> MigrationReport? {
        let engine = try Self.reportingStorage { try Engine.open(.directory(url), options: .init(createIfMissing: false)) }
        defer { try? engine.close() }
        return try migrate(engine, store: url.path)
    }

    /// Migrates an open store if its model differs.
    /// - Returns: What was done, or nil when the store was already at the model.
    /// - Throws: `MigrationError.cannotInferMapping` listing every change that cannot be inferred (or a
    ///   mapping model's problems); `.unannouncedRenames` when the only problems are possible renames;
    ///   `.validationFailed` listing the migrated objects that fail the new model; `.mappingModel` for
    ///   an expression a mapping model's step cannot evaluate;
    ///   `.uniquenessViolation` naming the duplicates of a new uniqueness constraint; `.invalidObject`
    ///   and `.transformFailed` from custom steps; `.readOnly`; `.storage`. The store is unchanged then.
    @discardableResult
    public func migrate(_ engine: Engine, store: String) throws(MigrationError) -> MigrationReport? {
        let plan = try plan(for: engine.metadata, store: store)
        guard plan.isNeeded else { return nil }
        if let first = plan.problems.first {
            let renames = plan.mappings.flatMap(\.unannouncedRenames)
            if renames.count == plan.problems.reduce(0, { $0 + $1.changes.count }), let step = plan.mappings.first(where: { !$0.unannouncedRenames.isEmpty }) {
                throw .unannouncedRenames(from: Self.label(step.source), to: Self.label(step.destination), renames: step.unannouncedRenames)
            }
            throw .cannotInferMapping(from: first.from, to: first.to, problems: plan.problems.flatMap { $0.changes.map(\.description) })
        }
        if engine.options.isReadOnly { throw .readOnly(store: store) }
        let runner = MigrationRunner(steps: plan.mappings, progress: options.progress)
        let outcome = try Self.reportingStorage { try runner.run(on: engine) }
        return MigrationReport(path: plan.path, changes: plan.changes, rowsWritten: outcome.rowsWritten,
                               rowsDropped: outcome.rowsDropped, wasRecreated: false, recreationReason: nil)
    }

    /// Empties the store and gives it a new identity, keeping nothing: for
    /// `destroyAndRecreateOnIncompatibleModel`. Atomic like a migration.
    func recreate(_ engine: Engine, reason: String) throws(MigrationError) -> MigrationReport {
        try Self.reportingStorage {
            try engine.rewrite { rewrite in
                rewrite.metadata = StoreMetadata(schemaVersion: model.versionIdentifier)
                rewrite.metadata.record(model)
            }
        }
        return MigrationReport(path: [], changes: [], rowsWritten: 0, rowsDropped: 0, wasRecreated: true, recreationReason: reason)
    }

    /// The versions from the store's to the model: from `options.versions` when the store's is listed,
    /// else from the model the store recorded, straight to the new one.
    private func versionChain(from storeHash: String, metadata: StoreMetadata, store: String) throws(MigrationError) -> [ManagedObjectModel] {
        var versions = options.versions
        if let own = versions.firstIndex(where: { $0.versionHash == model.versionHash }) {
            versions.removeSubrange(own...)
        }
        versions.append(model)
        // Consecutive versions of a bundle that differ only in what is not stored (fetched properties,
        // derivations, user info) share a hash and a store layout: they count as one, the later. (One
        // model listed twice is still a mistake, reported below.)
        versions = versions.indices.filter { i in
            i == versions.count - 1 || versions[i + 1].versionHash != versions[i].versionHash || versions[i + 1] === versions[i]
        }.map { versions[$0] }
        var seen = Set<String>()
        for version in versions where !seen.insert(version.versionHash).inserted {
            throw .invalidVersions("version \(Self.label(version)) appears twice (two versions with the same version hash)")
        }
        if let start = versions.firstIndex(where: { $0.versionHash == storeHash }) {
            return Array(versions[start...])
        }
        guard let recorded = try StoredModel.from(metadata) else {
            throw .unknownSourceModel(store: store, storeHash: storeHash)
        }
        return [try recorded.makeModel(), model]
    }

    /// Runs `body`, passing migration errors through and reporting the engine's as `.storage`.
    private static func reportingStorage<R>(_ body: () throws -> R) throws(MigrationError) -> R {
        do {
            return try body()
        } catch let error as MigrationError {
            throw error
        } catch let error as StorageError {
            throw .storage(error)
        } catch {
            throw .storage(.invalidArgument(SafeDescription.of(error)))
        }
    }

    static func label(_ model: ManagedObjectModel) -> String {
        model.versionIdentifier ?? String(model.versionHash.prefix(12))
    }
}
