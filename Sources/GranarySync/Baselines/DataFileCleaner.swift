import Foundation

/// Drops the data files nothing refers to any more (M15), after a rebase has marked the events its
/// baseline covers, or after a merge found another device's baseline: from the event store every
/// unreferenced file (own or downloaded), and from the cloud the unreferenced files this store wrote —
/// only a file's writer removes it.
///
/// Referenced means named by a register of the ledger (the next baseline is made from it) or by an event
/// the event store holds and no baseline covers yet (peers may still download it). The rows go first, in
/// one commit, then the cloud files: a kill in between leaves own cloud files without a row, which the
/// next clean-up removes, since an own file is always stored before it is uploaded.
struct DataFileCleaner: Sendable {
    let fileSystem: any CloudFileSystem
    let layout: CloudLayout
    let eventStore: EventStore

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
        outcome.droppedRows = entries.keys.filter { !referenced.contains($0) }.sorted { $0.fileName < $1.fileName }
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
}
