import Foundation

extension ManagedObjectModel {
    /// Whether a store with this metadata opens with this model as it is, without migrating: Core
    /// Data's `isConfiguration(withName:compatibleWithStoreMetadata:)`, for an app that decides for
    /// itself when to migrate (with `MigrationOptions.shouldMigrateStoreAutomatically` off, an
    /// incompatible store fails to open).
    ///
    /// A Granary store records the whole model that wrote it, and opening migrates it when that model
    /// differs in any entity, so the answer compares the whole model (its version hash, or else every
    /// entity's hash) where Core Data compares the configuration's entities only: a store of one
    /// configuration is incompatible with a model changed only in another's entities.
    /// - Parameters:
    ///   - configuration: The configuration the store would be added for, or nil for every entity.
    ///   - metadata: From `PersistentStoreCoordinator.metadataForPersistentStore(type:at:)` or
    ///     `metadata(for:)`.
    /// - Returns: False also when the model has no such configuration, or the metadata records no model.
    public func isConfiguration(withName configuration: String?, compatibleWithStoreMetadata metadata: [String: Any]) -> Bool {
        if let configuration, configurations[configuration] == nil { return false }
        if let hash = metadata[PersistentStore.MetadataKey.modelVersionHash] as? String { return hash == versionHash }
        if let hashes = metadata[PersistentStore.MetadataKey.modelVersionHashes] as? [String: String] { return hashes == entityVersionHashes }
        return false
    }
}
