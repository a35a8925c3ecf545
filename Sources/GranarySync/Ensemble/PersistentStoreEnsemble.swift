import Foundation
import Granary
import Synchronization

/// Syncs one persistent store with the same store on other devices, through a cloud file system
/// (Ensembles' `CDEPersistentStoreEnsemble`).
///
/// Create one per store and keep it for as long as the store is open. `leech()` once to start syncing
/// (it survives relaunches), then `merge()` whenever the app wants to exchange changes: after saves, on a
/// timer, when the cloud reports new files. Local saves, by any context of any coordinator, are read from
/// the store's persistent history, so the model and the objects need no change beyond a global
/// identifier where objects created on two devices should become one (``Syncable`` or
/// ``EnsembleConfiguration/globalIdentifierAttribute``).
///
/// Operations run one at a time, in the order they were asked for. The merge saves into the store
/// through the ensemble's own coordinator, as transaction author `granary.sync`; the delegate hears what
/// it saved, to merge into the app's view context.
public final class PersistentStoreEnsemble: Sendable {
    /// The name all devices of the ensemble share; the ensemble's directory in the cloud.
    public let ensembleIdentifier: String
    /// The store being synced, as the app added it.
    public let persistentStore: PersistentStore
    public let managedObjectModel: ManagedObjectModel
    public let cloudFileSystem: any CloudFileSystem
    public let configuration: EnsembleConfiguration

    let layout: CloudLayout
    let local: EnsembleLocalDirectory
    /// The ensemble's own coordinator on the app's open store: merges save through it, so their history
    /// carries the merge's author and context name, and optimistic locking works against the app's saves.
    let coordinator: PersistentStoreCoordinator
    let syncStore: PersistentStore
    /// The synced shape of the model: what is captured and projected.
    let schema: LedgerSchema
    let queue = EnsembleOperationQueue()
    let automaticMerger = AutomaticMerger()
    let mutable: Mutex<MutableState>

    struct MutableState: ~Copyable {
        var pipeline: EnsemblePipeline?
        var status: SyncStatus
        var delegate = WeakDelegate()
        var dismantled = false
    }

    struct WeakDelegate {
        weak var value: (any PersistentStoreEnsembleDelegate)?
    }

    /// The local directories of ensembles open in this process: a second ensemble on the same store and
    /// identifier would capture the same saves twice.
    private static let openDirectories = Mutex<Set<String>>([])

    /// Opens the ensemble of `persistentStore`. Cheap: nothing touches the cloud until `leech()` or
    /// `merge()`, and a store that was leeched before is leeched again at once.
    /// - Throws: ``SyncError/invalidEnsembleIdentifier(_:)``, ``SyncError/historyTrackingDisabled(store:)``
    ///   for a store added without `persistentHistoryTracking`, ``SyncError/ensembleAlreadyOpen(path:)``
    ///   when an ensemble of this store and identifier is already open, ``SyncError/eventStore(_:)`` when
    ///   the local event store cannot be opened.
    public init(ensembleIdentifier: String, persistentStore: PersistentStore, managedObjectModel: ManagedObjectModel,
                cloudFileSystem: any CloudFileSystem, configuration: EnsembleConfiguration = EnsembleConfiguration()) throws(SyncError) {
        do {
            layout = try CloudLayout(ensembleIdentifier: ensembleIdentifier)
        } catch {
            throw .invalidEnsembleIdentifier(ensembleIdentifier)
        }
        guard persistentStore.tracksPersistentHistory else { throw .historyTrackingDisabled(store: persistentStore.url) }
        self.ensembleIdentifier = ensembleIdentifier
        self.persistentStore = persistentStore
        self.managedObjectModel = managedObjectModel
        self.cloudFileSystem = cloudFileSystem
        self.configuration = configuration
        schema = LedgerSchema(model: managedObjectModel, configuration: configuration)
        // Checked now, so a wrong identifier attribute is an error at launch rather than at the first merge.
        _ = try GlobalIdentifierSource(model: managedObjectModel, attribute: configuration.globalIdentifierAttribute, delegate: nil)
        let root = configuration.localDataRoot ?? EnsembleLocalDirectory.defaultRoot(forStoreAt: persistentStore.url)
        let local = EnsembleLocalDirectory(root: root, ensembleIdentifier: ensembleIdentifier, storeUUID: persistentStore.identifier)
        self.local = local
        let claimed = Self.openDirectories.withLock { $0.insert(local.url.path).inserted }
        guard claimed else { throw .ensembleAlreadyOpen(path: local.url.path) }
        coordinator = PersistentStoreCoordinator(managedObjectModel: managedObjectModel)
        do {
            syncStore = try coordinator.addPersistentStore(sharing: persistentStore, configuration: persistentStore.configurationName)
        } catch {
            _ = Self.openDirectories.withLock { $0.remove(local.url.path) }
            throw .storeMissing
        }
        local.removeStaleSiblings()
        local.emptyTrash()
        var eventStore: EventStore?
        do {
            eventStore = try Self.openExistingEventStore(local, coordinator: coordinator, store: syncStore)
        } catch {
            _ = Self.openDirectories.withLock { $0.remove(local.url.path) }
            throw error
        }
        mutable = Mutex(MutableState(pipeline: nil, status: eventStore == nil ? .notLeeched : .idle))
        if let eventStore {
            mutable.withLock { $0.pipeline = EnsemblePipeline(eventStore: eventStore, ensemble: self) }
            automaticMerger.start(self, policy: configuration.automaticMerging)
        }
    }

    deinit {
        dismantle()
    }

    /// An event store left by an earlier run, if it belongs to a leeched store.
    ///
    /// A leech killed before its store save (§12.5: still seeding, no pending merge, or one whose save
    /// never committed) left the app's store untouched, so its event store is discarded and the store is
    /// simply not leeched. A leech killed after its store save is finished from its pending record: the
    /// store already holds the cloud's objects, which a fresh leech would not know as the same objects.
    private static func openExistingEventStore(_ local: EnsembleLocalDirectory, coordinator: PersistentStoreCoordinator,
                                               store syncStore: PersistentStore) throws(SyncError) -> EventStore? {
        guard local.hasEventStore else { return nil }
        let store: EventStore
        do { store = try EventStore.open(at: local.eventStore) } catch { throw SyncError(error) }
        do throws(SyncError) {
            var state: EventStoreState
            do { state = try store.state() } catch { throw SyncError(error) }
            if state.leechState == .seeding && state.pendingMergeID != nil {
                _ = try MergeRecovery.recover(store, coordinator: coordinator, store: syncStore)
                do { state = try store.state() } catch { throw SyncError(error) }
            }
            if state.leechState == .leeched || state.leechState == .registered { return store }
        } catch {
            try? store.close()
            throw error
        }
        try? store.close()
        try local.discardEventStore()
        return nil
    }

    /// Whether the store is leeched: its saves are recorded for the other devices, and `merge()` works.
    public var isLeeched: Bool { mutable.withLock { $0.pipeline != nil } }

    /// Whether a leech, merge or deleech is running.
    public var isMerging: Bool { queue.isBusy }

    /// What the ensemble is doing or waiting for.
    public var status: SyncStatus { mutable.withLock { $0.status } }

    /// The newest history token the ensemble no longer needs: everything up to it was captured. An app
    /// that purges the store's persistent history itself purges up to this token at most; purging
    /// further makes the next merge rescan the whole store. Nil when the store is not leeched.
    public var purgeableHistoryToken: PersistentHistoryToken? {
        guard let eventStore = mutable.withLock({ $0.pipeline?.eventStore }), let state = try? eventStore.state() else { return nil }
        return (try? HistoryReader(coordinator: coordinator, store: syncStore).decode(state.historyToken)) ?? nil
    }

    /// Told what merges save and when the ensemble deleeches by itself; held weakly.
    public var delegate: (any PersistentStoreEnsembleDelegate)? {
        get { mutable.withLock { $0.delegate.value } }
        set { mutable.withLock { $0.delegate.value = newValue } }
    }

    /// Closes the local event store and lets another ensemble open this store. The ensemble cannot be used
    /// afterwards; the store stays leeched for the next ensemble opened on it.
    public func dismantle() {
        let pipeline = mutable.withLock { state -> EnsemblePipeline? in
            guard !state.dismantled else { return nil }
            state.dismantled = true
            defer { state.pipeline = nil }
            return state.pipeline
        }
        automaticMerger.stop()
        try? pipeline?.eventStore.close()
        // The ensemble's attachment keeps the app's store engine open; without removing it, the app could
        // not open its store again after removing it from its own coordinator.
        try? coordinator.remove(syncStore)
        _ = Self.openDirectories.withLock { $0.remove(local.url.path) }
    }

    /// Stops syncing the store: removes its registration from the cloud (when the cloud can be reached;
    /// other devices' data is left alone) and deletes the local record of events. The store's objects
    /// stay as they are.
    /// - Throws: ``SyncError/notLeeched``.
    public func deleech() async throws(SyncError) {
        try await queue.run { () async throws(SyncError) in
            let eventStore = try leechedPipeline().eventStore
            if let storeID = try? eventStore.state().storeID {
                if await !cloudFileSystem.isConnected { try? await cloudFileSystem.connect() }
                try? await cloudFileSystem.removeItem(atPath: layout.path(for: .registration(store: storeID)))
            }
            try discard(eventStore)
            log(.trace, "deleeched the store")
        }
    }

    /// The pipeline of a leeched store.
    func leechedPipeline() throws(SyncError) -> EnsemblePipeline {
        let (pipeline, dismantled) = mutable.withLock { ($0.pipeline, $0.dismantled) }
        guard !dismantled else { throw .eventStore("the ensemble was dismantled") }
        guard let pipeline else { throw .notLeeched }
        return pipeline
    }

    /// Closes and deletes the event store: the store is no longer leeched.
    func discard(_ eventStore: EventStore) throws(SyncError) {
        automaticMerger.stop()
        mutable.withLock {
            $0.pipeline = nil
            $0.status = .notLeeched
        }
        try? eventStore.close()
        try local.discardEventStore()
    }

    /// The ensemble deleeches itself (the cloud's identity changed, the registration is gone, another
    /// device has this store's identity) and tells the delegate why, once.
    func forceDeleech(_ reason: SyncError) -> SyncError {
        log(.error, "deleeched the store because \(reason)")
        if let pipeline = mutable.withLock({ $0.pipeline }) { try? discard(pipeline.eventStore) }
        delegate?.persistentStoreEnsemble(self, didDeleechWithError: reason)
        return reason
    }

    func setStatus(_ status: SyncStatus) {
        mutable.withLock { $0.status = status }
    }
}
