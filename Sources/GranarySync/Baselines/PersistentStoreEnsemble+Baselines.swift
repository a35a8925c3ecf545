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

    /// After a merge that found baselines it had not recorded (joined, or covered by what it had):
    /// drops the data files only the events they cover named, so that a device that never rebases
    /// itself does not keep every value it ever received. Best effort: a failure leaves the files for the
    /// clean-up after the next baseline, and does not fail a merge that did its work.
    func dropDataFilesCovered(by baselines: BaselineIntegrator.Result, pipeline: EnsemblePipeline) async {
        let found = baselines.joined + baselines.seen
        guard !found.isEmpty else { return }
        let vector = found.reduce(RevisionVector()) { $0.joined(with: $1.summary.vector) }
        do {
            var known: [String: Set<CloudFileName>] = [:]
            for baseline in baselines.baselines {
                known[baseline.summary.stem] = baseline.ledger.objects.values.reduce(into: Set()) { $0.formUnion(LargeValues.references(in: $1)) }
            }
            let cleaner = DataFileCleaner(fileSystem: cloudFileSystem, layout: layout, eventStore: pipeline.eventStore,
                                          transitDirectory: pipeline.transit.download, knownBaselineReferences: known)
            let outcome = try await cleaner.clean(exceptEventsCoveredBy: vector)
            log(.verbose, "dropped \(outcome.droppedRows.count) data files, removed \(outcome.removedFiles.count) of this store's from the cloud")
        } catch {
            log(.warning, "data files left after a baseline: \(error)")
        }
    }

    /// The rebaser of this ensemble's cloud and event store.
    func rebaser(_ pipeline: EnsemblePipeline) -> Rebaser {
        Rebaser(fileSystem: cloudFileSystem, layout: layout, eventStore: pipeline.eventStore, transitDirectory: pipeline.transit.upload)
    }
}
