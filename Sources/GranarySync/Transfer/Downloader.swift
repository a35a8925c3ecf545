import Foundation
import Synchronization

/// Brings the events of other stores from the cloud into the event store, with the data files they
/// name (§9 step 5; baselines are read by `BaselineIntegrator`).
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
        /// Data files downloaded and stored for the events held as downloaded.
        var storedDataFiles: [CloudFileName] = []
        /// The data files the events imported by this run name.
        var namedDataFiles: Set<CloudFileName> = []
    }

    let fileSystem: any CloudFileSystem
    let layout: CloudLayout
    let eventStore: EventStore
    let transit: TransitDirectories
    let batchSize: Int
    /// Names imported or skipped for good; nil until first needed.
    private let handled = Mutex<Set<String>?>(nil)
    /// The data files that events held as downloaded name and the store lacked after the last run; nil
    /// until first needed (then read from the downloaded events once per process). Later runs add what
    /// the events they import name, so no run decodes the downloaded events again.
    private let wantedDataFiles = Mutex<Set<CloudFileName>?>(nil)

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
        // Before the import: read afterwards, the downloaded events would be decoded once more (the
        // readiness check reads them next, from what the import keeps in memory).
        let wanted = try wantedDataFileNames()
        var report = try await downloadEvents(snapshot)
        try await fetchDataFiles(wanted.union(report.namedDataFiles), snapshot: snapshot, report: &report)
        return report
    }

    /// The data files of `names` the store lacks (M15), fetched from the listing so that the readiness
    /// check finds them; a damaged copy is downloaded again at each merge until it is whole.
    private func fetchDataFiles(_ names: Set<CloudFileName>, snapshot: CloudSnapshot, report: inout Report) async throws(SyncError) {
        guard !names.isEmpty else { return }
        let fetcher = DataFileFetcher(fileSystem: fileSystem, layout: layout, eventStore: eventStore, transit: transit)
        let fetched: DataFileFetcher.Report
        do { fetched = try await fetcher.fetch(names, listed: snapshot) } catch {
            // Not known which were stored: the next run reads the downloaded events again.
            wantedDataFiles.withLock { $0 = nil }
            throw error
        }
        report.storedDataFiles = fetched.stored
        report.downloadedFiles += fetched.stored.count
        report.diagnostics += fetched.diagnostics
        wantedDataFiles.withLock { $0 = fetched.missing }
    }

    private func wantedDataFileNames() throws(SyncError) -> Set<CloudFileName> {
        if let names = wantedDataFiles.withLock({ $0 }) { return names }
        var names = Set<CloudFileName>()
        do {
            for event in try eventStore.events(withStatus: .downloaded) { names.formUnion(LargeValues.references(in: event.changes)) }
        } catch {
            throw SyncError(error)
        }
        wantedDataFiles.withLock { $0 = names }
        return names
    }

    private func downloadEvents(_ snapshot: CloudSnapshot) async throws(SyncError) -> Report {
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
            report.namedDataFiles.formUnion(LargeValues.references(in: event.changes))
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
        wantedDataFiles.withLock { $0 = nil }
    }

    private func handledNames() throws(SyncError) -> Set<String> {
        if let names = handled.withLock({ $0 }) { return names }
        let names: Set<String>
        do { names = try eventStore.remoteFileNames() } catch { throw SyncError(error) }
        handled.withLock { $0 = names }
        return names
    }
}
