import Foundation
import Granary

extension PersistentStoreEnsemble {
    /// Exchanges changes with the other devices: records the store's saves since the last merge, downloads
    /// and integrates the other devices' events, and uploads this device's (Ensembles' `merge`).
    ///
    /// Events that cannot be integrated yet (an event they depend on has not arrived, or they come from a
    /// model version this app does not know) wait, and the merge still succeeds; ``status`` says what
    /// waits. When the delegate refuses the merged changes or they fail validation, nothing is saved and
    /// the error is thrown — after this device's own changes were uploaded, so one device's unresolved
    /// merge never holds back what it sends.
    /// - Throws: ``SyncError/notLeeched``; ``SyncError/cloud(_:)`` when the cloud fails (retry later; local
    ///   changes stay recorded); ``SyncError/cloudIdentityChanged``, ``SyncError/storeUnregistered`` or
    ///   ``SyncError/storeIdentityCollision(storeID:)`` after deleeching the store;
    ///   ``SyncError/mergeCancelled``, ``SyncError/mergeValidationFailed(_:)``, ``SyncError/storeBusy(attempts:)``.
    @discardableResult
    public func merge(options: MergeOptions = []) async throws(SyncError) -> MergeReport {
        try await queue.run { () async throws(SyncError) -> MergeReport in
            let pipeline = try leechedPipeline()
            setStatus(.busy)
            let started = ContinuousClock.now
            do throws(SyncError) {
                let report = try await runMerge(pipeline, options: options)
                log(.trace, "merged in \(SyncLog.milliseconds(since: started)): \(report)")
                return report
            } catch {
                log(.error, "merge failed after \(SyncLog.milliseconds(since: started)): \(error)")
                if isLeeched { setStatus(.idle) }
                throw error
            }
        }
    }

    private func runMerge(_ pipeline: EnsemblePipeline, options: MergeOptions) async throws(SyncError) -> MergeReport {
        let eventStore = pipeline.eventStore
        var report = MergeReport()
        _ = try MergeRecovery.recover(eventStore, coordinator: coordinator, store: syncStore)

        switch try await pipeline.checks.beforeMerge() {
        case .ok: break
        case let .forcedDeleech(reason): throw forceDeleech(reason)
        }

        var step = ContinuousClock.now
        func stepDone(_ what: @autoclosure () -> String) {
            log(.verbose, "\(what()) in \(SyncLog.milliseconds(since: step))")
            step = ContinuousClock.now
        }
        stepDone("recovered and checked the cloud")
        let recorder = try changeRecorder(eventStore)
        report.capturedLocalChanges = try recorder.capture() != nil
        stepDone(report.capturedLocalChanges ? "recorded local changes" : "found no local changes")
        // M8 on one device: new objects repeating a live object's global ID are folded into it, as the
        // event just captured already says.
        report.changes = try LocalDuplicateMerger.merge(recorder.localDuplicates, coordinator: coordinator)

        let snapshot = try await pipeline.snapshots.take()
        let downloads = try await pipeline.downloader.download(snapshot)
        report.downloadedEvents = downloads.imported.count
        report.diagnostics = downloads.diagnostics.map(\.description)
        for diagnostic in report.diagnostics { log(.warning, "\(diagnostic)") }
        stepDone("listed the cloud and downloaded \(downloads.imported.count) events")

        // §9 step 6: baselines not yet covered are joined by the integration, before the events; readiness
        // is judged against what they bring (M32).
        let baselines = try await fetchBaselines(snapshot, pipeline: pipeline)
        report.diagnostics += baselines.diagnostics
        for diagnostic in baselines.diagnostics { log(.warning, "\(diagnostic)") }
        var integrationError: SyncError?
        let readiness = try self.readiness(eventStore, after: baselines)
        var waiting = readiness.waiting
        if !readiness.alreadyIntegrated.isEmpty && baselines.joined.isEmpty {
            // Copies of events the stored vector already covers (integrated through a baseline earlier):
            // settled, so that later merges do not read them again. Not when this merge joins baselines:
            // then they are covered only by the joined vector, which the integration's finalize commits.
            do { try eventStore.commit(EventStoreStep(integrated: readiness.alreadyIntegrated)) } catch { throw SyncError(error) }
        }
        if !readiness.ready.isEmpty || !baselines.joined.isEmpty {
            var integrator = try self.integrator(eventStore)
            integrator.baselines = baselines
            integrator.beforeRetry = { () throws(SyncError) in _ = try recorder.capture() }
            do {
                let outcome = try integrator.integrate(readiness.ready)
                report.integratedEvents = outcome.integrated.count
                report.changes.inserted.formUnion(outcome.changes.inserted)
                report.changes.updated.formUnion(outcome.changes.updated)
                report.changes.deleted.formUnion(outcome.changes.deleted)
                waiting += outcome.waiting.map { ReadinessCheck.Waiting(id: $0, reason: .missingDependency($0)) }
            } catch {
                switch error {
                case .mergeCancelled, .mergeValidationFailed, .storeBusy: integrationError = error
                default: throw error
                }
            }
        }
        stepDone("integrated \(report.integratedEvents) events")
        if !report.changes.isEmpty { announce(report.changes) }

        do {
            report.exportedEvents = try await pipeline.exporter.export(against: snapshot).exported.count
        } catch {
            if case .storeIdentityCollision = error { throw forceDeleech(error) }
            throw error
        }
        stepDone("exported \(report.exportedEvents) events")
        if let integrationError { throw integrationError }
        await dropDataFilesCovered(by: baselines, pipeline: pipeline)
        // §9 step 9, on the listing taken before this merge's exports (they wait for the next rebase). A
        // listing unchanged since the last merge brings no new facts for the policy (any export of that
        // merge shows in this listing), so the check, which reads the event table, is skipped.
        if options.contains(.forceRebase) || !snapshot.isUnchanged {
            _ = try await rebaser(pipeline).rebaseIfNeeded(policy: configuration.rebase, force: options.contains(.forceRebase),
                                                          suppress: options.contains(.suppressRebase), snapshot: snapshot,
                                                          downloadDirectory: pipeline.transit.download)
        }
        stepDone("checked whether to rebase")
        report.waitingEvents = waiting.count
        for event in waiting {
            log(.warning, "event \(event.id) waits: \(event.reason)")
        }
        setStatus(Self.status(waiting: waiting))
        return report
    }

    /// The status after a merge that left `waiting` events.
    static func status(waiting: [ReadinessCheck.Waiting]) -> SyncStatus {
        let hashes = Set(waiting.compactMap { waiting -> String? in
            if case let .unknownModel(hash) = waiting.reason { return hash } else { return nil }
        })
        if !hashes.isEmpty { return .waitingForModelVersion(hashes: hashes.sorted()) }
        let files = Set(waiting.compactMap { waiting -> String? in
            if case let .missingDataFile(name) = waiting.reason { return name.fileName } else { return nil }
        })
        if !files.isEmpty { return .waitingForDataFiles(names: files.sorted()) }
        return waiting.isEmpty ? .idle : .waitingForEvents(count: waiting.count)
    }

    /// The model versions whose events this device can integrate.
    var knownModelHashes: Set<String> {
        Set([managedObjectModel.versionHash] + configuration.previousModels.map(\.versionHash))
    }

    /// Global identifiers for new objects: the delegate first, then the `Syncable` key or the configured
    /// attribute, else random (plan §7).
    func globalIdentifiers() throws(SyncError) -> GlobalIdentifierSource {
        try GlobalIdentifierSource(model: managedObjectModel, attribute: configuration.globalIdentifierAttribute) { [weak self] _, objects in
            guard let self, let delegate = self.delegate else { return nil }
            return delegate.persistentStoreEnsemble(self, globalIdentifiersForManagedObjects: objects)
        }
    }

    func changeRecorder(_ eventStore: EventStore) throws(SyncError) -> LocalChangeRecorder {
        LocalChangeRecorder(coordinator: coordinator, store: syncStore, eventStore: eventStore, schema: schema,
                            identifiers: try globalIdentifiers(), purgesHistory: configuration.purgesHistory)
    }

    /// An integrator saving through the ensemble's coordinator, with the delegate's hooks.
    func integrator(_ eventStore: EventStore) throws(SyncError) -> MergeIntegrator {
        var integrator = MergeIntegrator(eventStore: eventStore, coordinator: coordinator, store: syncStore, schema: schema)
        let identifiers = try globalIdentifiers()
        integrator.newGlobalID = { object in
            let entity = object.entity.name
            return (try? identifiers.identifiers(entity: entity, objects: [object]).ids.first) ?? UUID().uuidString
        }
        integrator.hooks = MergeIntegrator.Hooks(
            shouldSave: { [weak self] saving, reparation in
                guard let self, let delegate = self.delegate else { return true }
                return delegate.persistentStoreEnsemble(self, shouldSaveMergedChangesIn: saving, reparationContext: reparation)
            },
            didFailToSave: { [weak self] saving, error, reparation in
                guard let self, let delegate = self.delegate else { return false }
                return delegate.persistentStoreEnsemble(self, didFailToSaveMergedChangesIn: saving, error: error,
                                                        reparationContext: reparation)
            })
        return integrator
    }

    /// Tells the delegate and observers of `persistentStoreEnsembleDidSaveMergeChanges` what a merge saved.
    func announce(_ changes: ContextChanges) {
        delegate?.persistentStoreEnsemble(self, didSaveMergeChangesWith: changes)
        NotificationCenter.default.post(name: .persistentStoreEnsembleDidSaveMergeChanges, object: self,
                                        userInfo: [ContextChanges.userInfoKey: changes])
    }
}

extension Notification.Name {
    /// Posted after a merge saved changes from other devices into the store; `object` is the
    /// ``PersistentStoreEnsemble`` and `userInfo[ContextChanges.userInfoKey]` the saved `ContextChanges`
    /// (Ensembles' `CDEPersistentStoreEnsembleDidSaveMergeChangesNotification`).
    public static let persistentStoreEnsembleDidSaveMergeChanges = Notification.Name("GranarySync.persistentStoreEnsembleDidSaveMergeChanges")
}
