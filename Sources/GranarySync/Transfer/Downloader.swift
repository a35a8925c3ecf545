import Foundation
import Synchronization

/// Brings the events of other stores from the cloud into the event store (§9 step 5; events only:
/// baselines and data files come with their slices).
///
/// For each event file not handled before, in count order: download to the transit folder, verify
/// (framing, checksum, and that the payload is the event its name promises), import as downloaded, and
/// record the name in `remoteFile` — imports and names of up to `batchSize` files per commit. A file
/// that fails verification is not yet arrived: it is reported, not recorded, never imported, and
/// downloaded again next merge. This store's own files are skipped (it has their events).
///
/// The names already handled are kept in memory (read from `remoteFile` once per process), so a merge
/// that finds nothing new costs one set difference over the listing and no event-store read.
final class Downloader: Sendable {
    struct Report: Hashable, Sendable {
        /// Events imported by this run, in the order they were committed.
        var imported: [EventID] = []
        /// Files left for a later merge, and why.
        var diagnostics: [TransferDiagnostic] = []
        /// How many files were downloaded.
        var downloadedFiles = 0
    }

    let fileSystem: any CloudFileSystem
    let layout: CloudLayout
    let eventStore: EventStore
    let transit: TransitDirectories
    let batchSize: Int
    /// Names imported or skipped for good; nil until first needed.
    private let handled = Mutex<Set<String>?>(nil)

    init(fileSystem: any CloudFileSystem, layout: CloudLayout, eventStore: EventStore, transit: TransitDirectories,
         batchSize: Int = 100) {
        self.fileSystem = fileSystem
        self.layout = layout
        self.eventStore = eventStore
        self.transit = transit
        self.batchSize = max(1, batchSize)
    }

    /// Downloads the event files of `snapshot` not handled before.
    ///
    /// A cloud error stops the run after committing what was verified so far; nothing is lost and
    /// nothing is imported twice when the next merge continues.
    /// - Throws: `SyncError.cloud` when a download fails for another reason than the file being gone;
    ///   `.eventStore`.
    func download(_ snapshot: CloudSnapshot) async throws(SyncError) -> Report {
        var report = Report()
        let known = try handledNames()
        if !snapshot.isUnchanged { try forgetUnlisted(known, snapshot: snapshot) }
        let fresh = zip(snapshot.events, snapshot.eventFileNames).filter { !known.contains($0.1) }.map(\.0)
        guard !fresh.isEmpty else { return report }

        let own: StoreID
        do { own = try eventStore.state().storeID } catch { throw SyncError(error) }
        var ownNames: [String] = []
        var groups: [(names: [CloudFileName], parts: Int)] = []
        for name in fresh {
            guard case let .event(count, store, revision, part) = name else { continue }
            if store == own {
                ownNames.append(name.fileName)
                continue
            }
            if let last = groups.last, case let .event(c, s, r, _) = last.names[0], c == count, s == store, r == revision {
                groups[groups.count - 1].names.append(name)
            } else {
                groups.append(([name], part?.count ?? 1))
            }
        }
        // Own files need no download, now or later.
        handled.withLock { $0?.formUnion(ownNames) }

        var pendingEvents: [Event] = []
        var pendingPayloads: [EventID: Data] = [:]
        var pendingFiles: [RemoteFileRecord] = []
        func commit() throws(SyncError) {
            guard !pendingFiles.isEmpty else { return }
            do { report.imported += try eventStore.importDownloaded(pendingEvents, payloads: pendingPayloads, files: pendingFiles) } catch { throw SyncError(error) }
            let names = pendingFiles.map(\.name)
            handled.withLock { $0?.formUnion(names) }
            pendingEvents = []
            pendingPayloads = [:]
            pendingFiles = []
        }

        for (names, parts) in groups {
            let first = names[0].fileName
            guard names.count == parts, Set(names.map(\.fileName)).count == parts else {
                report.diagnostics.append(.incompleteEvent(name: first, partsListed: names.count, parts: parts))
                continue
            }
            var files: [(name: CloudFileName, bytes: Data)] = []
            var vanished = false
            for name in names {
                do {
                    files.append((name, try await transit.fetch(layout.path(for: name), name: name.fileName, from: fileSystem)))
                    report.downloadedFiles += 1
                } catch .notFound {
                    report.diagnostics.append(.vanishedFile(name: name.fileName))
                    vanished = true
                    break
                } catch {
                    // Keep what was verified: the next merge goes on from there.
                    try commit()
                    throw .cloud(error)
                }
            }
            if vanished { continue }
            let event: Event
            do {
                let read = try EventFileParts.eventAndPayload(from: files)
                event = read.event
                pendingPayloads[event.id] = read.payload
            } catch {
                report.diagnostics.append(.damagedFile(name: first, reason: error.description))
                continue
            }
            pendingEvents.append(event)
            pendingFiles += files.map { RemoteFileRecord(name: $0.name.fileName, kind: .eventPart, size: Int64($0.bytes.count)) }
            if pendingFiles.count >= batchSize { try commit() }
        }
        try commit()
        return report
    }

    /// Drops handled names the listing no longer has (events removed once a baseline covered them), so
    /// that neither `remoteFile` nor the set in memory grows with every event ever synced.
    private func forgetUnlisted(_ known: Set<String>, snapshot: CloudSnapshot) throws(SyncError) {
        let gone = known.subtracting(snapshot.eventFileNames)
        guard !gone.isEmpty else { return }
        do { try eventStore.forgetRemoteFiles(gone) } catch { throw SyncError(error) }
        handled.withLock { $0?.subtract(gone) }
    }

    /// Forgets the names held in memory, so the next run reads `remoteFile` again (after another
    /// component changed the table, or in tests).
    func forgetHandledNames() {
        handled.withLock { $0 = nil }
    }

    private func handledNames() throws(SyncError) -> Set<String> {
        if let names = handled.withLock({ $0 }) { return names }
        let names: Set<String>
        do { names = try eventStore.remoteFileNames() } catch { throw SyncError(error) }
        handled.withLock { $0 = names }
        return names
    }
}
