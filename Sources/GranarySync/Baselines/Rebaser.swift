import Foundation
import GranaryStorage

/// Writes a baseline of this store's ledger and removes from the cloud what it makes unnecessary, in the
/// order of §12.7, on any `CloudFileSystem`:
///
/// 1. write the baseline's parts (each upload atomic) and check that the listing shows all of them;
/// 2. commit `state.baselineID` and mark the events the cutoff covers (one event-store commit);
/// 3. remove the covered events and the baselines the new one dominates;
/// 4. remove this store's data files nothing refers to any more (`DataFileCleaner`).
///
/// Removal comes only after the baseline is visible, so no device can miss both the events and the
/// baseline. A kill after step 1 leaves an extra baseline, equivalent to its events (M32): peers that
/// join it and peers that do not agree, and the next rebase dominates it. A kill during step 3 leaves
/// some covered files, which `removeCovered` takes away at the next rebase.
struct Rebaser: Sendable {
    let fileSystem: any CloudFileSystem
    let layout: CloudLayout
    let eventStore: EventStore
    /// Where parts are staged before upload (`transit/upload/`); must exist.
    let transitDirectory: URL
    var maximumPartPayload = SyncConstants.maximumPartPayload

    /// What a rebase did.
    struct Outcome: Hashable, Sendable {
        var baseline: BaselineSummary
        var parts: [CloudFileName]
        /// Whether the listing showed every part after the upload; when not, nothing was committed or
        /// removed.
        var isVisible: Bool
        var removedEvents: [CloudFileName] = []
        var removedBaselines: [CloudFileName] = []
        /// This store's data files removed from the cloud because nothing refers to them any more.
        var removedDataFiles: [CloudFileName] = []
    }

    /// Rebases: a baseline of the stored ledger, with vector `state.integrated` and the largest
    /// integrated count, then the removal of the events in `eventNames` that `cutoff` covers and of the
    /// baselines in `baselineNames` the new one dominates (those whose vectors this store has recorded).
    /// - Parameter cutoff: from `RebaseCutoff`; it is met with the integrated vector again here, so that
    ///   nothing this store has not integrated is ever removed.
    /// - Throws: `SyncError.cloud` for a failed upload, listing or removal (the steps done stay done);
    ///   `.eventStore` for the event store or the staging files.
    func rebase(cutoff: RevisionVector, eventNames: [CloudFileName], baselineNames: [CloudFileName]) async throws(SyncError) -> Outcome {
        // 1. Write, streaming the ledger from one snapshot, so that the baseline's ledger is exactly the
        // fold of the events its vector names.
        let snapshot = eventStore.engine.read()
        let path = eventStore.directory.path
        let state: EventStoreState, count: Int64
        do {
            state = try EventStore.state(in: snapshot, path: path)
            count = try eventStore.integratedGlobalCount(in: snapshot)
        } catch {
            throw Self.syncError(error, "read the state for a baseline")
        }
        let summary = BaselineSummary(id: UUID(), writer: state.storeID, globalCount: count, vector: state.integrated)
        let cutoff = cutoff.met(with: state.integrated)
        var writer = BaselineWriter(summary: summary, directory: transitDirectory, maximumPayload: maximumPartPayload)
        // The data files the baseline names, so that the clean-up of step 4 need not read it back.
        var references = Set<CloudFileName>()
        do {
            try LedgerRowStream.forEachObject(in: snapshot, path: path) { object in
                references.formUnion(LargeValues.references(in: object))
                try writer.append(object)
            }
        } catch {
            throw Self.syncError(error, "read the ledger for a baseline")
        }
        let parts = try writer.finish()
        defer { for part in parts { try? FileManager.default.removeItem(at: part.url) } }
        do {
            try await connectIfNeeded()
            for part in parts {
                try await fileSystem.uploadLocalFile(at: part.url, toPath: layout.path(for: part.name))
            }
        } catch {
            throw .cloud(error)
        }
        var outcome = Outcome(baseline: summary, parts: parts.map(\.name), isVisible: try await isVisible(parts))
        guard outcome.isVisible else { return outcome }

        // 2. Commit.
        let record = BaselineRecord(summary: summary, parts: parts.count, bytes: Int64(parts.reduce(0) { $0 + $1.size }), role: .written)
        do { try eventStore.commitRebase(record, cutoff: cutoff) } catch { throw SyncError(error) }

        // 3. Remove.
        (outcome.removedEvents, outcome.removedBaselines) = try await removeCovered(
            eventNames: eventNames, baselineNames: baselineNames.filter { BaselineSummary.stem(of: $0) != summary.stem },
            cutoff: cutoff, dominatedBy: summary.vector)

        // 4. The data files only the covered events named.
        outcome.removedDataFiles = try await DataFileCleaner(fileSystem: fileSystem, layout: layout, eventStore: eventStore,
                                                             transitDirectory: transitDirectory,
                                                             knownBaselineReferences: [summary.stem: references])
            .clean().removedFiles
        return outcome
    }

    /// §9 step 9: the cutoff from the registrations and the event store, the policy's decision on the
    /// listing, and the rebase if it says so; nil when it does not.
    /// - Parameters:
    ///   - registrations: every registered store (from `stores/`) with its registration date.
    ///   - events, baselines: the files of `events/` and `baselines/` with their sizes, as listed.
    /// - Throws: what `rebase(cutoff:eventNames:baselineNames:)` throws; `SyncError.eventStore`.
    func rebaseIfNeeded(policy: RebasePolicy, force: Bool = false, suppress: Bool = false, registrations: [StoreID: Date],
                        now: Date = Date(), events: [(name: CloudFileName, size: Int64)],
                        baselines: [(name: CloudFileName, size: Int64)]) async throws(SyncError) -> Outcome? {
        let cutoff: RevisionVector
        do {
            cutoff = try RebaseCutoff.vector(from: eventStore, registrations: registrations, now: now, inactiveAfter: policy.inactiveAfter)
        } catch {
            throw SyncError(error)
        }
        let facts = RebasePolicy.Facts(events: events, baselines: baselines, cutoff: cutoff)
        guard policy.shouldRebase(facts, force: force, suppress: suppress) else { return nil }
        return try await rebase(cutoff: cutoff, eventNames: events.map(\.name), baselineNames: baselines.map(\.name))
    }

    /// Removes the events of `eventNames` that `cutoff` covers and the baselines of `baselineNames`
    /// whose recorded vector `vector` covers (all their parts). Removing a file already gone is success.
    /// - Throws: `SyncError.cloud`, `.eventStore`.
    func removeCovered(eventNames: [CloudFileName], baselineNames: [CloudFileName], cutoff: RevisionVector,
                       dominatedBy vector: RevisionVector) async throws(SyncError) -> (events: [CloudFileName], baselines: [CloudFileName]) {
        let records: [String: BaselineRecord]
        do { records = try eventStore.baselineRecords() } catch { throw SyncError(error) }
        let events = eventNames.filter { name in
            guard case let .event(_, store, revision, _) = name else { return false }
            return cutoff[store] >= revision
        }
        let baselines = baselineNames.filter { name in
            guard let stem = BaselineSummary.stem(of: name), let record = records[stem] else { return false }
            return record.summary.vector.isCovered(by: vector)
        }
        do {
            try await connectIfNeeded()
            for name in events + baselines { try await fileSystem.removeItem(atPath: layout.path(for: name)) }
        } catch {
            throw .cloud(error)
        }
        return (events, baselines)
    }

    private static func syncError(_ error: any Error, _ operation: String) -> SyncError {
        switch error {
        case let error as SyncError: error
        case let error as EventStoreError: SyncError(error)
        default: .eventStore("\(operation): \(error)")
        }
    }

    private func isVisible(_ parts: [BaselineWriter.PartFile]) async throws(SyncError) -> Bool {
        let listed: [CloudItem]
        do { listed = try await fileSystem.contentsOfDirectory(atPath: layout.baselinesDirectory) } catch { throw .cloud(error) }
        var sizes: [String: Int64] = [:]
        for case let .file(name, size) in listed { sizes[name] = size }
        return parts.allSatisfy { sizes[$0.name.fileName] == Int64($0.size) }
    }

    private func connectIfNeeded() async throws(CloudFileSystemError) {
        if await !fileSystem.isConnected { try await fileSystem.connect() }
    }
}

extension BaselineSummary {
    /// The stem of a baseline file's name, shared by its parts; nil for another kind of name.
    static func stem(of name: CloudFileName) -> String? {
        guard case let .baseline(count, id, store, _) = name else { return nil }
        return "\(count)_\(id.uuidString)_\(store)"
    }
}
