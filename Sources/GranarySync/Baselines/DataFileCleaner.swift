import Foundation

/// Drops the data files nothing refers to any more (M15), after a rebase has marked the events its
/// baseline covers, or after a merge found another device's baseline: from the event store every
/// unreferenced file (own or downloaded), and from the cloud the unreferenced files this store wrote —
/// only a file's writer removes it.
///
/// Referenced means named by a register of the ledger (the next baseline is made from it), by an event
/// the event store holds and no baseline covers yet (peers may still download it), or by a baseline the
/// cloud still lists. The last matters when this store's ledger has moved past a value that another
/// device's baseline still holds: a device that lacks the events that baseline covers must join it, and
/// cannot without its data files, so the writer keeps them (and uploads them again if they go missing)
/// for as long as the baseline is listed. Listed baselines are read whole only when some file would
/// otherwise be dropped, and a baseline whose parts are not all listed yet (an upload under way) keeps
/// every file this time.
///
/// The rows go first, in one commit, then the cloud files: a kill in between leaves own cloud files
/// without a row, which the next clean-up removes, since an own file is always stored before it is
/// uploaded.
struct DataFileCleaner: Sendable {
    let fileSystem: any CloudFileSystem
    let layout: CloudLayout
    let eventStore: EventStore
    /// Where the parts of listed baselines are downloaded to when their references must be read; must exist.
    let transitDirectory: URL
    /// The data files of baselines already read whole (the one a rebase just wrote, those a merge
    /// joined), by stem: not downloaded again.
    var knownBaselineReferences: [String: Set<CloudFileName>] = [:]

    /// What one clean-up removed.
    struct Outcome: Hashable, Sendable {
        /// Rows dropped from the event store.
        var droppedRows: [CloudFileName] = []
        /// This store's files removed from the cloud.
        var removedFiles: [CloudFileName] = []
    }

    /// Removes what nothing refers to; events `baselineVector` covers refer to nothing (see
    /// `EventStore.referencedDataFiles(exceptEventsCoveredBy:)`).
    /// - Throws: `SyncError.eventStore`; `.cloud` when the listing or a removal fails (the rows stay
    ///   dropped; the files go at the next clean-up).
    func clean(exceptEventsCoveredBy baselineVector: RevisionVector = RevisionVector()) async throws(SyncError) -> Outcome {
        var outcome = Outcome()
        let own: StoreID, entries: [CloudFileName: DataFileEntry], referenced: Set<CloudFileName>
        do {
            own = try eventStore.state().storeID
            entries = try eventStore.dataFileEntries()
            referenced = try eventStore.referencedDataFiles(exceptEventsCoveredBy: baselineVector)
        } catch {
            throw SyncError(error)
        }
        var unreferenced = entries.keys.filter { !referenced.contains($0) }
        if !unreferenced.isEmpty {
            guard let named = try await namedByListedBaselines() else { return outcome }
            unreferenced.removeAll { named.contains($0) }
        }
        outcome.droppedRows = unreferenced.sorted { $0.fileName < $1.fileName }
        do { try eventStore.removeDataFiles(outcome.droppedRows) } catch { throw SyncError(error) }
        let kept = Set(entries.keys).subtracting(outcome.droppedRows)
        do {
            if await !fileSystem.isConnected { try await fileSystem.connect() }
            let listed: [CloudItem]
            // No `data/` (a user cleared it): nothing of ours to remove; the next merge makes it again.
            do { listed = try await fileSystem.contentsOfDirectory(atPath: layout.dataDirectory) } catch .notFound { listed = [] }
            for case let .file(text, _) in listed {
                guard let name = try? CloudFileName.parse(text), case .data = name, name.writer == own, !kept.contains(name) else { continue }
                try await fileSystem.removeItem(atPath: layout.path(for: name))
                outcome.removedFiles.append(name)
            }
        } catch {
            throw .cloud(error)
        }
        return outcome
    }

    /// The data files named by the baselines `baselines/` lists, or nil when one of them is not whole
    /// yet (its parts are still being uploaded, or a kill left it incomplete): its references are
    /// unknown, so nothing may be dropped. A baseline gone since the listing (dominated and removed) or
    /// damaged (no device can join it) names nothing.
    /// - Throws: `SyncError.cloud`, `.eventStore` for the transit files.
    private func namedByListedBaselines() async throws(SyncError) -> Set<CloudFileName>? {
        let listed: [CloudItem]
        do {
            if await !fileSystem.isConnected { try await fileSystem.connect() }
            do { listed = try await fileSystem.contentsOfDirectory(atPath: layout.baselinesDirectory) } catch .notFound { listed = [] }
        } catch {
            throw .cloud(error)
        }
        let baselines = BaselineSummary.listed(listed.compactMap { item in
            guard case let .file(text, _) = item else { return nil }
            return try? CloudFileName.parse(text)
        })
        guard baselines.incomplete.isEmpty else { return nil }
        let reader = BaselineIntegrator(fileSystem: fileSystem, layout: layout, eventStore: eventStore, transitDirectory: transitDirectory)
        var names = Set<CloudFileName>()
        for (stem, parts) in baselines.complete {
            if let known = knownBaselineReferences[stem] {
                names.formUnion(known)
                continue
            }
            var files: [(name: CloudFileName, bytes: Data)] = []
            do {
                for name in parts { files.append((name, try await reader.download(name))) }
            } catch .cloud(.notFound) {
                continue
            }
            guard let baseline = try? BaselineFile.decode(parts: files) else { continue }
            for object in baseline.ledger.objects.values { names.formUnion(LargeValues.references(in: object)) }
        }
        return names
    }
}
