import Foundation
import Synchronization

/// The checks a merge makes before it touches the cloud's files (§9 step 2), and the preparation of the
/// ensemble's directory at leech (§12.5).
///
/// A check either passes, finds that the store must stop syncing (``Outcome/forcedDeleech(_:)``: the
/// cloud is another one, or this store's registration was removed), or throws: a backend that cannot
/// answer now is an error to retry, never a reason to deleech.
final class CloudChecks: Sendable {
    enum Outcome: Sendable {
        case ok
        /// The store must be deleeched, for the reason given (`.cloudIdentityChanged`, `.storeUnregistered`).
        case forcedDeleech(SyncError)
    }

    let fileSystem: any CloudFileSystem
    let layout: CloudLayout
    let eventStore: EventStore
    let transit: TransitDirectories
    /// `format.json` is never changed once written, so it is read once per process, not at every merge.
    private let formatChecked = Mutex(false)

    init(fileSystem: any CloudFileSystem, layout: CloudLayout, eventStore: EventStore, transit: TransitDirectories) {
        self.fileSystem = fileSystem
        self.layout = layout
        self.eventStore = eventStore
        self.transit = transit
    }

    /// The merge's checks, in order: leeched; connected; the identity is the one recorded at leech; the
    /// registration is present (once written); `format.json` is a version this library reads.
    /// - Throws: `SyncError.notLeeched`; `.cloud` when the backend fails (a missing file is an answer, not
    ///   a failure); `.unsupportedCloudFormat` for a newer format; `.corruptCloudFile` for an unreadable
    ///   or (not yet) missing `format.json`; `.eventStore`.
    func beforeMerge() async throws(SyncError) -> Outcome {
        let state: EventStoreState
        do { state = try eventStore.state() } catch { throw SyncError(error) }
        guard state.leechState == .leeched || state.leechState == .registered else { throw .notLeeched }
        try await connect()
        let current = try await identity()
        let recorded: RecordedCloudIdentity?
        do { recorded = try eventStore.recordedCloudIdentity() } catch { throw SyncError(error) }
        // No identity recorded can only be a store leeched by something else than `prepareForLeech`: it
        // cannot be shown to be the same cloud, so it is treated as another one.
        guard let recorded, recorded.identity == current else { return .forcedDeleech(.cloudIdentityChanged) }
        if state.leechState == .registered {
            let registration = layout.path(for: .registration(store: state.storeID))
            let existence: FileExistence
            do { existence = try await fileSystem.fileExists(atPath: registration) } catch { throw .cloud(error) }
            guard existence.exists else { return .forcedDeleech(.storeUnregistered) }
        } else {
            // Leeched but not registered yet (the leech's upload failed): no registration to look for, but
            // an ensemble directory gone means the same — its data was removed.
            let existence: FileExistence
            do { existence = try await fileSystem.fileExists(atPath: layout.root) } catch { throw .cloud(error) }
            guard existence.isDirectory else { return .forcedDeleech(.storeUnregistered) }
        }
        try await checkFormat(writingIfMissing: false)
        return .ok
    }

    /// Prepares the ensemble for this store's first leech: connects, creates the ensemble's directories,
    /// writes `format.json` when there is none (or checks the one there), and records the cloud's
    /// identity in the event store. Idempotent, so a leech killed after it runs it again.
    /// - Throws: `SyncError.cloud`, `.unsupportedCloudFormat`, `.corruptCloudFile` for an unreadable
    ///   `format.json`, `.eventStore`.
    func prepareForLeech() async throws(SyncError) {
        try await connect()
        let current = try await identity()
        for directory in layout.directories {
            do { try await fileSystem.createDirectory(atPath: directory) } catch { throw .cloud(error) }
        }
        try await checkFormat(writingIfMissing: true)
        do { try eventStore.recordCloudIdentity(current) } catch { throw SyncError(error) }
    }

    private func connect() async throws(SyncError) {
        guard await !fileSystem.isConnected else { return }
        do { try await fileSystem.connect() } catch { throw .cloud(error) }
    }

    private func identity() async throws(SyncError) -> CloudIdentity? {
        do { return try await fileSystem.fetchUserIdentity() } catch { throw .cloud(error) }
    }

    private func checkFormat(writingIfMissing: Bool) async throws(SyncError) {
        guard !formatChecked.withLock({ $0 }) else { return }
        let path = layout.formatFile
        let existence: FileExistence
        do { existence = try await fileSystem.fileExists(atPath: path) } catch { throw .cloud(error) }
        if !existence.exists {
            // At a merge, the registration was found, so the ensemble exists: a missing marker is a copy
            // still arriving (a sync service), left for a later merge rather than rewritten.
            guard writingIfMissing else { throw .corruptCloudFile(name: path, reason: "format.json is missing") }
            let bytes: Data
            do { bytes = try CloudLayout.FormatMarker.current.encoded() } catch { throw .eventStore("cannot encode format.json: \(error)") }
            let staged = try transit.stageUpload(bytes, name: "format.json")
            defer { try? FileManager.default.removeItem(at: staged) }
            do { try await fileSystem.uploadLocalFile(at: staged, toPath: path) } catch { throw .cloud(error) }
        } else {
            let bytes: Data
            do { bytes = try await transit.fetch(path, name: "format.json", from: fileSystem) } catch { throw .cloud(error) }
            do {
                _ = try CloudLayout.FormatMarker.decode(bytes, name: path)
            } catch let .unsupportedFormatVersion(_, found, _) {
                throw .unsupportedCloudFormat(found: Int(found))
            } catch {
                throw .corruptCloudFile(name: path, reason: error.description)
            }
        }
        formatChecked.withLock { $0 = true }
    }
}
