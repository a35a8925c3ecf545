import Foundation
import Granary

extension PersistentStoreEnsemble {
    /// Starts syncing the store (Ensembles' `leechPersistentStore`): prepares the ensemble's directory in
    /// the cloud if this is its first device, folds in the cloud's data, and sends the store's own.
    ///
    /// With ``SeedPolicy/mergeAllData`` the store keeps its objects: those the cloud does not know are
    /// sent to it, those it knows (by global identifier) take the cloud's values and deletions, and their
    /// to-many relationships keep the members of both. A store leeches once; it stays leeched across
    /// launches until ``deleech()``.
    /// - Throws: ``SyncError/alreadyLeeched``; ``SyncError/cloud(_:)``; ``SyncError/unsupportedCloudFormat(found:)``;
    ///   the merge errors of ``merge(options:)``. A leech that fails leaves the store as it was, not leeched.
    public func leech(seedPolicy: SeedPolicy = .mergeAllData) async throws(SyncError) {
        try await queue.run { () async throws(SyncError) in
            let (leeched, dismantled) = mutable.withLock { ($0.pipeline != nil, $0.dismantled) }
            guard !dismantled else { throw .eventStore("the ensemble was dismantled") }
            guard !leeched else { throw .alreadyLeeched }
            setStatus(.busy)
            let pipeline: EnsemblePipeline
            do throws(SyncError) {
                pipeline = try await seed(policy: seedPolicy)
            } catch {
                log(.error, "leech failed: \(error)")
                setStatus(.notLeeched)
                throw error
            }
            log(.trace, "leeched the store")
            setStatus(.idle)
            automaticMerger.start(self, policy: configuration.automaticMerging)
            // Leeched from here; the upload may fail (offline) and is then done by the next merge, which
            // also writes a missing registration.
            if let snapshot = try? await CloudSnapshot.take(of: cloudFileSystem, layout: layout) {
                do throws(SyncError) {
                    _ = try await pipeline.exporter.export(against: snapshot)
                } catch {
                    if case .storeIdentityCollision = error { throw forceDeleech(error) }
                }
            }
        }
    }

    /// Everything up to the leeched state (§8.3, §12.5): a new event store in the seeding state, the
    /// cloud's events downloaded and integrated with the store's own data as the seed, in one store save
    /// whose finalize moves the event store to leeched.
    private func seed(policy: SeedPolicy) async throws(SyncError) -> EnsemblePipeline {
        try local.create()
        if local.hasEventStore { try local.discardEventStore() }
        let eventStore: EventStore
        do {
            eventStore = try EventStore.open(at: local.eventStore)
            try eventStore.setLeechState(.seeding)
        } catch {
            throw SyncError(error)
        }
        let pipeline = EnsemblePipeline(eventStore: eventStore, ensemble: self)
        do {
            _ = try pipeline.transit.prepare()
            try await pipeline.checks.prepareForLeech()
            let snapshot = try await CloudSnapshot.take(of: cloudFileSystem, layout: layout)
            _ = try await pipeline.downloader.download(snapshot)
            let baselines = try await fetchBaselines(snapshot, pipeline: pipeline)
            let readiness = try self.readiness(eventStore, after: baselines)
            let builder = SeedBuilder(coordinator: coordinator, store: syncStore, eventStore: eventStore, schema: schema,
                                      identifiers: try globalIdentifiers())
            var integrator = try self.integrator(eventStore)
            integrator.baselines = baselines
            let outcome = try integrator.integrate(readiness.ready, seed: { overlay throws(SyncError) in
                let seed = try builder.build(overlay: overlay, policy: policy)
                return MergeIntegrator.Seed(changes: seed.changes, localKeys: seed.localKeys,
                                            historyToken: try HistoryReader.encode(seed.historyToken))
            }, leechState: .leeched)
            mutable.withLock { $0.pipeline = pipeline }
            if !outcome.changes.isEmpty { announce(outcome.changes) }
            return pipeline
        } catch {
            try? eventStore.close()
            try? local.discardEventStore()
            throw error
        }
    }
}
