import Foundation
import Granary

/// The parts a leeched ensemble merges with, made once per open event store: the downloader keeps the
/// names it has handled in memory and the checks remember `format.json`, so an idle merge costs a
/// listing and a set comparison (S3), not a lookup per file.
final class EnsemblePipeline: Sendable {
    let eventStore: EventStore
    let transit: TransitDirectories
    let checks: CloudChecks
    let downloader: Downloader
    let exporter: Exporter
    let snapshots: CloudSnapshotter

    init(eventStore: EventStore, ensemble: PersistentStoreEnsemble) {
        self.eventStore = eventStore
        eventStore.localModelHash.withLock { $0 = ensemble.managedObjectModel.versionHash }
        transit = TransitDirectories(root: ensemble.local.transit)
        checks = CloudChecks(fileSystem: ensemble.cloudFileSystem, layout: ensemble.layout, eventStore: eventStore, transit: transit)
        snapshots = CloudSnapshotter(fileSystem: ensemble.cloudFileSystem, layout: ensemble.layout)
        downloader = Downloader(fileSystem: ensemble.cloudFileSystem, layout: ensemble.layout, eventStore: eventStore, transit: transit)
        exporter = Exporter(fileSystem: ensemble.cloudFileSystem, layout: ensemble.layout, eventStore: eventStore, transit: transit,
                            registration: RegistrationInfo(persistentStoreUUID: ensemble.persistentStore.identifier,
                                                           modelHash: ensemble.managedObjectModel.versionHash))
    }
}
