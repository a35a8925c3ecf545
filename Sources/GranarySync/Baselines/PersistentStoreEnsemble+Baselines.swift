import Foundation

/// The merge pipeline's baseline steps (§9 steps 6 and 9), for `merge()` and `leech()`.
extension PersistentStoreEnsemble {
    /// The baselines of `snapshot` this store has not integrated, read and checked (not yet joined).
    func fetchBaselines(_ snapshot: CloudSnapshot, pipeline: EnsemblePipeline) async throws(SyncError) -> BaselineIntegrator.Result {
        let integrated: RevisionVector
        do { integrated = try pipeline.eventStore.state().integrated } catch { throw SyncError(error) }
        let integrator = BaselineIntegrator(fileSystem: cloudFileSystem, layout: layout, eventStore: pipeline.eventStore,
                                            transitDirectory: pipeline.transit.download,
                                            dataFiles: DataFileFetcher(fileSystem: cloudFileSystem, layout: layout,
                                                                       eventStore: pipeline.eventStore, transit: pipeline.transit))
        return try await integrator.fetch(snapshot.baselines, integrated: integrated)
    }

    /// The downloaded events ready once `baselines` are joined: those the baselines cover are already
    /// integrated, and those that depended only on covered events are ready now, not a merge later.
    func readiness(_ eventStore: EventStore, after baselines: BaselineIntegrator.Result) throws(SyncError) -> ReadinessCheck.Result {
        guard !baselines.joined.isEmpty else { return try ReadinessCheck.run(on: eventStore, knownModelHashes: knownModelHashes) }
        do {
            let downloaded = try eventStore.events(withStatus: .downloaded)
            return ReadinessCheck.evaluate(downloaded, integrated: baselines.integrated, knownModelHashes: knownModelHashes,
                                           heldDataFiles: try ReadinessCheck.heldDataFiles(of: downloaded, in: eventStore))
        } catch {
            throw SyncError(error)
        }
    }

    /// The rebaser of this ensemble's cloud and event store.
    func rebaser(_ pipeline: EnsemblePipeline) -> Rebaser {
        Rebaser(fileSystem: cloudFileSystem, layout: layout, eventStore: pipeline.eventStore, transitDirectory: pipeline.transit.upload)
    }
}
