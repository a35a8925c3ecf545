import Foundation

extension PersistentStore {
    /// The keys of a store's metadata dictionary (`PersistentStoreCoordinator.metadataForPersistentStore(type:at:)`),
    /// spelled as Core Data spells its own where Core Data has one.
    public enum MetadataKey {
        /// The store's UUID as a string (Core Data's `NSStoreUUIDKey`): the host of its objects' URIs.
        public static let storeUUID = "NSStoreUUID"
        /// The store's type, `PersistentStore.StoreType`'s raw value (Core Data's `NSStoreTypeKey`).
        public static let storeType = "NSStoreType"
        /// The version hash of each entity of the model that wrote the store, hexadecimal strings by entity
        /// name (Core Data's `NSStoreModelVersionHashesKey`, whose hashes are data).
        public static let modelVersionHashes = "NSStoreModelVersionHashes"
        /// The version identifiers of that model: its `versionIdentifier`, if it has one (Core Data's
        /// `NSStoreModelVersionIdentifiersKey`).
        public static let modelVersionIdentifiers = "NSStoreModelVersionIdentifiers"
        /// The version hash of that whole model (`ManagedObjectModel.versionHash`): what opening compares
        /// to decide whether the store needs migrating.
        public static let modelVersionHash = "GranaryModelVersionHash"
    }

    /// The metadata of an engine as Core Data's dictionary: the keys of `MetadataKey`, and every user
    /// entry (`setMetadata(_:for:)`) as a string.
    static func metadataDictionary(_ metadata: StoreMetadata, type: StoreType) -> [String: any Sendable] {
        var dictionary: [String: any Sendable] = [:]
        for (key, value) in metadata.userInfo { dictionary[key] = value }
        dictionary[MetadataKey.storeUUID] = metadata.storeUUID.uuidString
        dictionary[MetadataKey.storeType] = type.rawValue
        // The record of the model the store keeps holds every entity's stored shape, hence its hash; a
        // store written before stores kept the record, or with a damaged one, has only the model's hash.
        if let recorded = try? StoredModel.from(metadata)?.makeModel() {
            dictionary[MetadataKey.modelVersionHashes] = recorded.entityVersionHashes
            dictionary[MetadataKey.modelVersionIdentifiers] = recorded.versionIdentifier.map { [$0] } ?? [String]()
        }
        return dictionary
    }
}

extension PersistentStoreCoordinator {
    /// The metadata of the store at `url`, read without opening it for writing, so that an app can
    /// decide what to do before adding it: Core Data's `metadataForPersistentStore(type:at:options:)`.
    ///
    /// Compare it with a model by `ManagedObjectModel.isConfiguration(withName:compatibleWithStoreMetadata:)`
    /// to know whether adding the store would migrate it. The store must not be open for writing, in
    /// this process or another (the engine's lock is then held: the store's own `metadata`, or
    /// `metadata(for:)`, reads an attached store).
    ///
    /// ```swift
    /// let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .durable, at: url)
    /// if !model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { /* migrate first */ }
    /// ```
    /// - Parameters:
    ///   - type: `.durable`; an in-memory store has no metadata before it is added.
    ///   - url: The store's directory.
    /// - Returns: The keys of `PersistentStore.MetadataKey` and the store's user entries.
    /// - Throws: `ContextError.storeDoesNotExist` when nothing is at `url`; `.noPersistentStore` for an
    ///   in-memory type; `.storage` when the store cannot be read (not a store, damaged, or open for
    ///   writing: `StorageError.lockHeld`).
    public static func metadataForPersistentStore(type: PersistentStore.StoreType = .durable, at url: URL) throws(ContextError) -> [String: any Sendable] {
        guard type == .durable else {
            throw .noPersistentStore("an in-memory store has no metadata before it is added to a coordinator")
        }
        guard FileManager.default.fileExists(atPath: url.path) else { throw .storeDoesNotExist(url) }
        let engine: Engine
        do {
            engine = try Engine.open(.directory(url), options: .init(readOnly: true, createIfMissing: false))
        } catch let error as StorageError {
            throw .storage(error)
        } catch {
            throw .storage(.invalidArgument(SafeDescription.of(error)))
        }
        defer { try? engine.close() }
        return PersistentStore.metadataDictionary(engine.metadata, type: type)
    }

    /// The metadata of an attached store, as `metadataForPersistentStore(type:at:)` gives it for a store
    /// on disk: Core Data's `metadata(for:)`.
    /// - Parameter store: A store of this coordinator (or of another; its metadata is read all the same).
    public func metadata(for store: PersistentStore) -> [String: any Sendable] {
        PersistentStore.metadataDictionary(store.metadata, type: store.type)
    }
}
