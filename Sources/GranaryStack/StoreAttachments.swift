import Foundation
import Granary

/// The stores of one stack: which configuration is attached where, on which coordinators, and what
/// was detached (so that errors can say so).
///
/// Stores attached before `start()` are opened at once, so that a locked or damaged store is reported
/// by the call that asked for it, but on a private staging coordinator that no context uses: fetches
/// and saves before `start()` find no store and throw `StackError.notStarted`. `start()` moves them to
/// the stack's coordinators (sharing the open engine, so nothing is reopened).
final class StoreAttachments: @unchecked Sendable {
    // @unchecked: `state` is guarded by `lock`; coordinators are thread-safe.

    let containerName: String
    let model: ManagedObjectModel
    let defaultDirectory: URL
    /// The coordinators that get every store: the stack's main one first, then any that share it.
    let coordinators: [PersistentStoreCoordinator]
    private let staging: PersistentStoreCoordinator

    private struct Attachment {
        var configuration: StoreConfiguration
        var url: URL?
        var identifier: UUID
        /// The store on each coordinator that holds it (only the staging one before start).
        var placements: [(coordinator: PersistentStoreCoordinator, store: PersistentStore)]
    }
    private struct Detached {
        var configuration: String?
        var url: URL?
    }
    private struct State {
        var isStarted = false
        var attachments: [Attachment] = []
        var detachedStores: [UUID: Detached] = [:]
        /// Detached configurations by name ("" for the default one), latest location.
        var detachedConfigurations: [String: Detached] = [:]
    }
    private let lock = NSLock()
    private var state = State()

    init(containerName: String, model: ManagedObjectModel, defaultDirectory: URL, coordinators: [PersistentStoreCoordinator]) {
        self.containerName = containerName
        self.model = model
        self.defaultDirectory = defaultDirectory
        self.coordinators = coordinators
        self.staging = PersistentStoreCoordinator(managedObjectModel: model)
        for coordinator in coordinators {
            coordinator.missingStoreDiagnosis = { [weak self] entity, id in self?.diagnose(entity: entity, objectID: id) }
        }
    }

    var isStarted: Bool { lock.withLock { state.isStarted } }

    /// The attached stores as the main coordinator holds them (the staging ones before start).
    var persistentStores: [PersistentStore] { lock.withLock { state.attachments.compactMap { $0.placements.first?.store } } }

    // MARK: Attaching

    /// Opens the stores of `configurations` in `directory` (or the default directory) and attaches them:
    /// to every coordinator once started, to the staging coordinator before. All or nothing.
    func attach(_ configurations: [StoreConfiguration], in directory: URL?) throws(StackError) -> [PersistentStore] {
        try attach(requests(configurations, in: directory))
    }

    /// The requests for the stores of `configurations` in `directory` (or the default directory).
    func requests(_ configurations: [StoreConfiguration], in directory: URL?) -> [StoreRequest] {
        configurations.map { StoreRequest(configuration: $0, url: $0.url(in: directory ?? defaultDirectory, containerName: containerName)) }
    }

    /// Opens the stores requested, each at its own location, and attaches them (see `attach(_:in:)`).
    /// All or nothing.
    func attach(_ requests: [StoreRequest]) throws(StackError) -> [PersistentStore] {
        lock.lock()
        defer { lock.unlock() }
        var added: [Attachment] = []
        do {
            for request in requests {
                let attachment = try open(request, pending: added)
                added.append(attachment)
            }
        } catch {
            for attachment in added { try? remove(attachment) }
            throw error
        }
        for attachment in added {
            state.attachments.append(attachment)
            state.detachedConfigurations[attachment.configuration.name ?? ""] = nil
            state.detachedStores[attachment.identifier] = nil
        }
        return added.compactMap { $0.placements.first?.store }
    }

    private func open(_ request: StoreRequest, pending: [Attachment]) throws(StackError) -> Attachment {
        let (configuration, url) = (request.configuration, request.url)
        if let name = configuration.name, model.configurations[name] == nil {
            throw .unknownConfiguration(container: containerName, configuration: name, known: Array(model.configurations.keys))
        }
        if let clash = (state.attachments + pending).first(where: { $0.configuration.name == configuration.name }) {
            throw .alreadyAttached(container: containerName, configuration: configuration.name, url: clash.url)
        }
        do {
            if let url { try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true) }
            var attachment = Attachment(configuration: configuration, url: url, identifier: UUID(), placements: [])
            if state.isStarted {
                try place(&attachment, opening: { coordinator in
                    try coordinator.addPersistentStore(type: configuration.type, configuration: configuration.name, at: url,
                                                       options: configuration.options)
                })
            } else {
                let store = try staging.addPersistentStore(type: configuration.type, configuration: configuration.name, at: url,
                                                           options: configuration.options)
                attachment.placements = [(staging, store)]
                attachment.identifier = store.identifier
            }
            return attachment
        } catch {
            throw .attachFailed(container: containerName, configuration: configuration.name, url: url, underlying: error)
        }
    }

    /// Attaches a store to every coordinator: the first opens it (`open`), the others share it.
    private func place(_ attachment: inout Attachment, opening open: (PersistentStoreCoordinator) throws -> PersistentStore) throws {
        var placements: [(coordinator: PersistentStoreCoordinator, store: PersistentStore)] = []
        do {
            for coordinator in coordinators {
                let store = try placements.first.map { try coordinator.addPersistentStore(sharing: $0.store, configuration: attachment.configuration.name) }
                    ?? open(coordinator)
                placements.append((coordinator, store))
            }
        } catch {
            for placement in placements.reversed() { try? placement.coordinator.remove(placement.store) }
            throw error
        }
        attachment.placements = placements
        attachment.identifier = placements[0].store.identifier
    }

    private func remove(_ attachment: Attachment) throws {
        for placement in attachment.placements.reversed() { try placement.coordinator.remove(placement.store) }
    }

    // MARK: Starting

    /// Moves the staged stores to the coordinators; with none staged, attaches `defaults` first.
    func start(defaults: [StoreRequest]) throws(StackError) {
        let isEmpty = lock.withLock { state.attachments.isEmpty }
        if isEmpty && !isStarted { _ = try attach(defaults) }
        lock.lock()
        defer { lock.unlock() }
        if state.isStarted { throw .alreadyStarted(container: containerName) }
        var moved: [Attachment] = []
        for var attachment in state.attachments {
            let staged = attachment.placements[0]
            let name = attachment.configuration.name
            do {
                try place(&attachment, opening: { coordinator in try coordinator.addPersistentStore(sharing: staged.store, configuration: name) })
            } catch {
                for done in moved { try? remove(done) }
                throw .attachFailed(container: containerName, configuration: attachment.configuration.name, url: attachment.url,
                                    underlying: error)
            }
            moved.append(attachment)
        }
        // Every store is now open on the coordinators too; the staging copies can go.
        for attachment in state.attachments { try? remove(attachment) }
        state.attachments = moved
        state.isStarted = true
    }

    // MARK: Detaching

    /// Detaches the stores (given as any coordinator's or the staging copy) from every coordinator.
    /// - Returns: The identifiers of the detached stores, for purging contexts.
    func detach(_ stores: [PersistentStore]) throws(StackError) -> Set<UUID> {
        lock.lock()
        defer { lock.unlock() }
        var indexes: [Int] = []
        for store in stores {
            guard let index = state.attachments.firstIndex(where: { $0.identifier == store.identifier
                && $0.configuration.name == store.configurationName })
            else {
                throw .notAttached(container: containerName, store: store.url?.path ?? "in memory \(store.identifier)")
            }
            if !indexes.contains(index) { indexes.append(index) }
        }
        var detached = Set<UUID>()
        var failure: StackError?
        for index in indexes.sorted(by: >) {
            let attachment = state.attachments.remove(at: index)
            let record = Detached(configuration: attachment.configuration.name, url: attachment.url)
            state.detachedStores[attachment.identifier] = record
            state.detachedConfigurations[attachment.configuration.name ?? ""] = record
            detached.insert(attachment.identifier)
            do { try remove(attachment) } catch {
                // Detached all the same (the coordinators no longer route to it); report the first failure.
                failure = failure ?? .detachFailed(container: containerName, store: attachment.url?.path ?? "in memory \(attachment.identifier)",
                                                   underlying: error)
            }
        }
        if let failure { throw failure }
        return detached
    }

    // MARK: Explaining

    /// Why no store holds `entity` (or the object): the error fetches and saves throw.
    func diagnose(entity: String, objectID: ManagedObjectID?) -> any Error {
        lock.withLock {
            if !state.isStarted { return StackError.notStarted(container: containerName, entity: entity) }
            if let uuid = objectID?.persistentStoreIdentifier, let gone = state.detachedStores[uuid] {
                return StackError.storeDetached(container: containerName, configuration: gone.configuration, url: gone.url, entity: entity)
            }
            for (name, gone) in state.detachedConfigurations {
                let entities = name.isEmpty ? Set(model.entitiesByName.keys) : model.configurations[name] ?? []
                if entities.contains(entity) {
                    return StackError.storeDetached(container: containerName, configuration: gone.configuration, url: gone.url, entity: entity)
                }
            }
            let attached = state.attachments.map { $0.configuration.name ?? "default" }
            return StackError.noStoreForEntity(container: containerName, entity: entity, attachedConfigurations: attached)
        }
    }
}

/// One store to open: a configuration and where (nil for an in-memory store).
struct StoreRequest: Sendable {
    var configuration: StoreConfiguration
    var url: URL?
}
