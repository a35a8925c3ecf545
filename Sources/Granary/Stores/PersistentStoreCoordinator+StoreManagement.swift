import Foundation
import GranaryStorage

/// Moving stores around, as Core Data's coordinator does: destroying one, replacing one with a copy of
/// another, and migrating an attached store to a new location or type.
///
/// Copies are whole snapshots (`Engine.copyContent(from:)`): the copy is taken from one consistent
/// state of the source while its writers go on, and lands in one atomic step, so a copy killed halfway
/// leaves the destination as it was. A copy keeps the store's identifier, so object IDs and their URIs
/// stay valid in it.
extension PersistentStoreCoordinator {
    /// Deletes the store at `url` (Core Data's `destroyPersistentStore(at:type:options:)`). A store of
    /// this coordinator at that URL is removed from it first; nothing at `url` is no error.
    /// - Throws: `ContextError.storeInUse` when another coordinator or process has it open;
    ///   `.storage` when its files cannot be removed.
    public func destroyPersistentStore(at url: URL, type: PersistentStore.StoreType = .durable,
                                       options: PersistentStore.Options = .init()) throws {
        guard type == .durable else { return }
        if let attached = persistentStore(for: url) { try remove(attached) }
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        // Opening takes the store's lock: it fails while anyone else has the store open.
        let engine = try Self.openExclusively(url, readOnly: false)
        do {
            try engine.close()
            try FileManager.default.removeItem(at: url)
        } catch let error as StorageError {
            throw ContextError.storage(error)
        } catch {
            throw ContextError.storage(.io(operation: "remove the store (\(error.localizedDescription))", path: url.path, errno: EIO))
        }
    }

    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL` (Core Data's
    /// `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:type:)`):
    /// restoring a backup, or publishing a store built elsewhere. The destination is created when
    /// missing. Either store may be attached to this coordinator: the source is read from a snapshot
    /// while it stays in use, and an attached destination is removed and added back with its options,
    /// as a new `PersistentStore` (find it with `persistentStore(for:)`; reset contexts that held its
    /// objects).
    /// - Throws: `ContextError.storeDoesNotExist` for a missing source; `.storeInUse` for a store
    ///   another coordinator or process has open; `.invalidRequest` for an in-memory type or a store
    ///   replaced by itself; `.storage` for the engine's errors.
    public func replacePersistentStore(at destinationURL: URL, destinationOptions: PersistentStore.Options? = nil,
                                       withPersistentStoreFrom sourceURL: URL, sourceOptions: PersistentStore.Options? = nil,
                                       type: PersistentStore.StoreType = .durable) throws {
        guard type == .durable else {
            throw ContextError.invalidRequest(entity: "-", reason: "an in-memory store has no location to replace")
        }
        guard destinationURL.standardizedFileURL != sourceURL.standardizedFileURL else {
            throw ContextError.invalidRequest(entity: "-", reason: "the store at \(sourceURL.path) cannot replace itself")
        }
        guard FileManager.default.fileExists(atPath: sourceURL.path) else { throw ContextError.storeDoesNotExist(sourceURL) }
        let source: Snapshot
        var sourceEngine: Engine?
        if let attached = persistentStore(for: sourceURL) {
            source = attached.engine.read()
        } else {
            let engine = try Self.openExclusively(sourceURL, readOnly: true)
            sourceEngine = engine
            source = engine.read()
        }
        defer { try? sourceEngine?.close() }

        let attachedDestination = persistentStore(for: destinationURL)
        let reattach = attachedDestination.map { ($0.configurationName, $0.options) }
        if let attachedDestination { try remove(attachedDestination) }
        let destination = try Self.openExclusively(destinationURL, readOnly: false)
        do {
            defer { try? destination.close() }
            try destination.copyContent(from: source)
            try destination.close()
        } catch let error as StorageError {
            throw ContextError.storage(error)
        }
        if let (configuration, options) = reattach {
            try addPersistentStore(type: .durable, configuration: configuration, at: destinationURL, options: destinationOptions ?? options)
        }
    }

    /// Copies an attached store to a new location or type, removes it from this coordinator and adds
    /// the copy in its place (Core Data's `migratePersistentStore(_:to:options:type:)`): durable to
    /// in-memory for a scratch copy, in-memory to durable to keep one, durable to durable to move or
    /// back up. The original store's files are left as they were. Object IDs stay valid: the copy
    /// keeps the store's identifier.
    /// - Parameters:
    ///   - store: an attached store of this coordinator.
    ///   - url: where a durable copy goes (nil for an in-memory one).
    ///   - options: how to open the copy; nil: the store's own.
    ///   - type: the copy's type.
    /// - Returns: the copy, attached with the store's configuration.
    /// - Throws: `ContextError.noPersistentStore` for a store not attached here or a durable type without
    ///   a URL; `.storeExists` when a store is at `url` already; `.storage` for the engine's errors (then
    ///   the original store stays attached and nothing is at `url`).
    @discardableResult
    public func migratePersistentStore(_ store: PersistentStore, to url: URL?, options: PersistentStore.Options? = nil,
                                       type: PersistentStore.StoreType) throws -> PersistentStore {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw ContextError.noPersistentStore("the store \(store.url?.path ?? store.identifier.uuidString) is not attached to this coordinator")
        }
        let options = options ?? store.options
        let source = store.engine.read()
        let copy: PersistentStore
        switch type {
        case .inMemory:
            do {
                let engine = try Engine.open(.inMemory)
                try engine.copyContent(from: source)
                copy = try PersistentStore(type: .inMemory, configurationName: store.configurationName, url: nil, options: options,
                                           model: managedObjectModel, mapping: mapping, opened: engine)
            } catch let error as StorageError {
                throw ContextError.storage(error)
            }
        case .durable:
            guard let url else { throw ContextError.noPersistentStore("a durable store needs a URL") }
            guard !FileManager.default.fileExists(atPath: url.path) else { throw ContextError.storeExists(url) }
            do {
                let engine = try Engine.open(.directory(url))
                do {
                    try engine.copyContent(from: source)
                    try engine.close()
                } catch {
                    try? engine.close()
                    try? FileManager.default.removeItem(at: url)
                    throw error
                }
            } catch let error as StorageError {
                throw ContextError.storage(error)
            }
            copy = try PersistentStore(type: .durable, configurationName: store.configurationName, url: url, options: options,
                                       model: managedObjectModel, mapping: mapping)
        }
        try replace(store, with: copy)
        return copy
    }

    /// The engine of the store at `url`, opened by this call alone.
    /// - Throws: `ContextError.storeInUse` when the store is locked by another opener; `.storage`.
    private static func openExclusively(_ url: URL, readOnly: Bool) throws -> Engine {
        do {
            return try Engine.open(.directory(url), options: .init(readOnly: readOnly, createIfMissing: !readOnly))
        } catch let error as StorageError {
            if case .lockHeld = error { throw ContextError.storeInUse(url) }
            throw ContextError.storage(error)
        }
    }
}
