import Foundation
import Synchronization

/// Sends this store's new events to the cloud and registers the store (§9 step 8, §12.4).
///
/// Events go in count order, in batches: each file is staged in the transit folder, uploaded (atomic),
/// and once the whole batch is up its events are marked exported in one commit. A kill between an
/// upload and its commit leaves the event unexported; the next run uploads the same name with the same
/// bytes (the file is a pure function of the stored payload, I1), so peers see no change and nothing
/// is duplicated.
///
/// A name of this store that is already in the cloud with other bytes — a whole, valid file, not a
/// damaged copy of ours — was written by another device using this store's identity (a restored
/// backup): ``SyncError/storeIdentityCollision(storeID:)``, after which the store must be deleeched.
final class Exporter: Sendable {
    struct Report: Hashable, Sendable {
        /// Events marked exported by this run, in count order.
        var exported: [EventID] = []
        /// Names uploaded.
        var uploaded: [String] = []
        /// Names found in the cloud with exactly the bytes of this store's copy (an export killed
        /// before its commit), marked exported without an upload.
        var alreadyPresent: [String] = []
        /// Damaged copies of this store's files that were replaced.
        var replaced: [String] = []
        /// Whether this run wrote the registration (or found it written) and moved the store to registered.
        var registered = false
        /// Exported files of this store found in the cloud at another size than their bytes (truncated,
        /// or replaced by a sync service's copy), uploaded again.
        var repaired: [String] = []
        /// Hidden temp files of killed uploads removed from the ensemble's directories.
        var removedAbandonedUploads = 0
        /// This store's data files uploaded (new ones, and exported ones the listing no longer shows).
        var uploadedDataFiles: [String] = []
    }

    let fileSystem: any CloudFileSystem
    let layout: CloudLayout
    let eventStore: EventStore
    let transit: TransitDirectories
    let registration: RegistrationInfo
    let batchSize: Int
    let partPayloadLimit: Int
    /// This store's exported files already found at their right size, by name: each is checked once per
    /// process (and again if its listed size changes), not at every merge.
    private let verifiedSizes = Mutex<[String: Int64]>([:])
    /// Whether `verifiedSizes` holds the sizes the event store recorded at export.
    private let loadedOwnSizes = Mutex(false)
    /// How many exports ran in this process, for the periodic content check.
    private let exportRuns = Mutex(0)
    /// Every how many exports this store's files are downloaded and compared (0: never).
    let contentCheckInterval: Int
    /// When this process last removed abandoned uploads: a walk of every directory, so at most hourly.
    private let lastSweep = Mutex<ContinuousClock.Instant?>(nil)
    static let sweepInterval = Duration.seconds(3600)

    init(fileSystem: any CloudFileSystem, layout: CloudLayout, eventStore: EventStore, transit: TransitDirectories,
         registration: RegistrationInfo = RegistrationInfo(), batchSize: Int = 20,
         partPayloadLimit: Int = SyncConstants.maximumPartPayload, contentCheckInterval: Int = 50) {
        self.fileSystem = fileSystem
        self.layout = layout
        self.eventStore = eventStore
        self.transit = transit
        self.registration = registration
        self.batchSize = max(1, batchSize)
        self.partPayloadLimit = max(1, partPayloadLimit)
        self.contentCheckInterval = max(0, contentCheckInterval)
    }

    /// Exports every local unexported event, then writes the registration if the store is leeched but not
    /// registered yet. `snapshot` is this merge's listing, which the collision checks read.
    ///
    /// A cloud error stops the run after committing the batches fully uploaded; the rest goes next merge.
    /// - Throws: `SyncError.storeIdentityCollision` (deleech the store); `.cloud`; `.eventStore`.
    func export(against snapshot: CloudSnapshot) async throws(SyncError) -> Report {
        var report = Report()
        let state: EventStoreState
        let events: [StoredEventPayload]
        do {
            state = try eventStore.state()
            events = try eventStore.unexportedEventPayloads()
        } catch {
            throw SyncError(error)
        }
        // A revision of this store that it has not made yet can only be another device's.
        for case let .event(_, store, revision, _) in snapshot.events where store == state.storeID && revision >= state.nextRevision {
            throw .storeIdentityCollision(storeID: state.storeID.description)
        }

        let interval = contentCheckInterval
        let checksContents = exportRuns.withLock { runs in
            runs += 1
            return interval > 0 && runs % interval == 0
        }
        // Data files first: a peer must never see an event whose own-store data file is missing (M15).
        try await exportDataFiles(against: snapshot, checksContents: checksContents, report: &report)

        var batch: [EventID] = []
        var batchFiles: [(name: String, size: Int64)] = []
        func commit() throws(SyncError) {
            guard !batch.isEmpty else { return }
            do { try eventStore.markExported(batch, files: batchFiles) } catch { throw SyncError(error) }
            report.exported += batch
            batch = []
            batchFiles = []
        }
        for event in events {
            let files = EventFileParts.files(id: event.id, globalCount: event.globalCount, payload: event.payload,
                                             partPayloadLimit: partPayloadLimit)
            do {
                for (name, bytes) in files { try await put(name, bytes, snapshot: snapshot, store: state.storeID, report: &report) }
            } catch {
                try commit()
                throw error
            }
            batch.append(event.id)
            batchFiles += files.map { ($0.name.fileName, Int64($0.bytes.count)) }
            if batch.count >= batchSize { try commit() }
        }
        try commit()
        try await repairOwnFiles(in: snapshot, store: state.storeID, checksContents: checksContents, report: &report)

        if state.leechState == .leeched {
            try await register(state.storeID, snapshot: snapshot)
            report.registered = true
        }
        report.removedAbandonedUploads = await sweepAbandonedUploads()
        return report
    }

    /// Uploads this store's data files not exported yet, and again those exported that `snapshot` no
    /// longer lists or lists at another size (removed or cut short by a user or a sync service: only the
    /// writer can put them back, and events naming them wait until it does), then marks them exported in
    /// one commit. A kill before the commit uploads the same bytes under the same name again. With
    /// `checksContents`, the exported ones listed at their size are downloaded and compared too (a
    /// flipped byte shows in nothing else), and replaced when they differ.
    private func exportDataFiles(against snapshot: CloudSnapshot, checksContents: Bool, report: inout Report) async throws(SyncError) {
        let entries: [CloudFileName: DataFileEntry]
        do { entries = try eventStore.dataFileEntries() } catch { throw SyncError(error) }
        let own = entries.values.filter(\.isOwn)
        let due = Set(own.filter { !$0.isExported || snapshot.size(of: $0.name) != $0.fileSize }.map(\.name))
        let checked = checksContents ? Set(own.map(\.name)).subtracting(due) : []
        guard !due.isEmpty || !checked.isEmpty else { return }
        let files: [DataFileRecord]
        do { files = try eventStore.dataFiles(named: due.union(checked)) } catch { throw SyncError(error) }
        var uploaded: [CloudFileName] = []
        for file in files {
            let bytes = LargeValues.fileBytes(of: file)
            if checked.contains(file.name) {
                let remote: Data?
                do { remote = try await transit.fetch(layout.path(for: file.name), name: file.name.fileName, from: fileSystem) } catch .notFound {
                    remote = nil
                } catch {
                    throw .cloud(error)
                }
                guard remote != bytes else { continue }
                try await upload(bytes, name: file.name)
                report.repaired.append(file.name.fileName)
                continue
            }
            // Listed at its size: a copy of an earlier, uncommitted upload (uploads are atomic).
            if snapshot.size(of: file.name) != Int64(bytes.count) {
                do { try await upload(bytes, name: file.name) } catch {
                    do { try eventStore.markDataFilesExported(uploaded) } catch { throw SyncError(error) }
                    throw error
                }
                report.uploadedDataFiles.append(file.name.fileName)
            }
            uploaded.append(file.name)
        }
        do { try eventStore.markDataFilesExported(uploaded) } catch { throw SyncError(error) }
    }

    /// §9 step 10: removes the temp files of uploads killed before their rename (any device's, once an
    /// hour old: younger ones may still be running), at the first export of the process and then at most
    /// hourly. Best effort: a failure here is not the export's, and the next sweep tries again.
    private func sweepAbandonedUploads() async -> Int {
        let now = ContinuousClock.now
        let due = lastSweep.withLock { last in
            guard last.map({ now - $0 >= Self.sweepInterval }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return 0 }
        return (try? await TransitDirectories.removeAbandonedUploads(on: fileSystem, under: layout.root)) ?? 0
    }

    /// Self-healing (§5.1): only this store may write its names, so a copy of one of its exported files
    /// listed at the wrong size — cut short by a sync service, or replaced by a conflicted copy — is
    /// uploaded again from the bytes kept; readers that refused the damaged copy take the whole one at
    /// their next merge. A damaged copy of the right size (a flipped byte) shows only in its contents:
    /// every `contentCheckInterval`-th export downloads this store's files and compares them.
    private func repairOwnFiles(in snapshot: CloudSnapshot, store: StoreID, checksContents: Bool,
                                report: inout Report) async throws(SyncError) {
        // The sizes recorded at export, once per process; then those this process verified or uploaded.
        if !loadedOwnSizes.withLock({ $0 }) {
            let recorded: [String: Int64]
            do { recorded = try eventStore.ownFileSizes() } catch { throw SyncError(error) }
            verifiedSizes.withLock { sizes in sizes.merge(recorded) { mine, _ in mine } }
            loadedOwnSizes.withLock { $0 = true }
        }
        let verified = verifiedSizes.withLock { $0 }
        // One event's files at a time: the parts of a large event are listed together, and its payload
        // is read and cut once for all of them.
        var current: (revision: Int64, files: [(name: CloudFileName, bytes: Data)])?
        for (name, text) in zip(snapshot.events, snapshot.eventFileNames) {
            guard case let .event(_, writer, revision, _) = name, writer == store, let listed = snapshot.sizes[text],
                  checksContents || verified[text] != listed else { continue }
            if current?.revision != revision {
                let stored: (event: StoredEventPayload, status: EventStatus)?
                do { stored = try eventStore.storedPayload(of: EventID(store: store, revision: revision)) } catch { throw SyncError(error) }
                // Unexported events were handled by the export above; unknown ones are the collision check's.
                let files = stored.flatMap { stored in
                    stored.status == .exported ? EventFileParts.files(id: stored.event.id, globalCount: stored.event.globalCount,
                                                                      payload: stored.event.payload, partPayloadLimit: partPayloadLimit) : nil
                }
                current = (revision, files ?? [])
            }
            guard let file = current?.files.first(where: { $0.name == name }) else { continue }
            if checksContents || Int64(file.bytes.count) != listed {
                let remote: Data?
                do { remote = try await transit.fetch(layout.path(for: name), name: text, from: fileSystem) } catch .notFound {
                    remote = nil
                } catch {
                    throw .cloud(error)
                }
                // A whole file of another writer under this name is a collision, not damage to repair.
                if let remote, remote != file.bytes, (try? EventFile(decoding: remote, name: text)) != nil {
                    throw .storeIdentityCollision(storeID: store.description)
                }
                if remote != file.bytes {
                    try await upload(file.bytes, name: name)
                    report.repaired.append(text)
                }
            }
            let size = Int64(file.bytes.count)
            verifiedSizes.withLock { $0[text] = size }
        }
    }

    /// Uploads `bytes` as `name` unless the cloud already has exactly them.
    private func put(_ name: CloudFileName, _ bytes: Data, snapshot: CloudSnapshot, store: StoreID,
                     report: inout Report) async throws(SyncError) {
        let path = layout.path(for: name)
        if snapshot.contains(name) {
            let remote: Data?
            do { remote = try await transit.fetch(path, name: name.fileName, from: fileSystem) } catch .notFound {
                remote = nil
            } catch {
                throw .cloud(error)
            }
            if let remote {
                if remote == bytes {
                    report.alreadyPresent.append(name.fileName)
                    verifiedSizes.withLock { $0[name.fileName] = Int64(bytes.count) }
                    return
                }
                // A whole file of ours with other contents: someone else writes under our identity. A
                // damaged copy (truncated, a flipped byte) is ours to replace.
                if (try? EventFile(decoding: remote, name: name.fileName)) != nil {
                    throw .storeIdentityCollision(storeID: store.description)
                }
                report.replaced.append(name.fileName)
            }
        }
        try await upload(bytes, name: name)
        report.uploaded.append(name.fileName)
        // Just written whole: the next listings need not check it again until the next content check.
        verifiedSizes.withLock { $0[name.fileName] = Int64(bytes.count) }
    }

    private func register(_ store: StoreID, snapshot: CloudSnapshot) async throws(SyncError) {
        let name = CloudFileName.registration(store: store)
        if !snapshot.contains(name) {
            let file = StoreRegistration(store: store, ensemble: layout.ensembleIdentifier, registeredAt: Date(),
                                         persistentStoreUUID: registration.persistentStoreUUID,
                                         modelHash: registration.modelHash, library: StoreRegistration.libraryName)
            let bytes: Data
            do { bytes = try file.encoded() } catch { throw .eventStore("cannot encode the registration: \(error)") }
            try await upload(bytes, name: name)
        }
        do { try eventStore.setLeechState(.registered) } catch { throw SyncError(error) }
    }

    private func upload(_ bytes: Data, name: CloudFileName) async throws(SyncError) {
        let staged = try transit.stageUpload(bytes, name: name.fileName)
        defer { try? FileManager.default.removeItem(at: staged) }
        do { try await fileSystem.uploadLocalFile(at: staged, toPath: layout.path(for: name)) } catch { throw .cloud(error) }
    }
}
