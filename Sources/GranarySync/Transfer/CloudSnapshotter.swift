import Synchronization

/// Takes each merge's `CloudSnapshot` after the previous one, so that an ensemble whose listings did
/// not change is not parsed and sorted again (the polling budget, S3). One per open event store, like
/// the downloader.
final class CloudSnapshotter: Sendable {
    let fileSystem: any CloudFileSystem
    let layout: CloudLayout
    private let previous = Mutex<CloudSnapshot?>(nil)

    init(fileSystem: any CloudFileSystem, layout: CloudLayout) {
        self.fileSystem = fileSystem
        self.layout = layout
    }

    /// A snapshot of the ensemble now; see `CloudSnapshot.take(of:layout:after:)`.
    /// - Throws: `SyncError.cloud`.
    func take() async throws(SyncError) -> CloudSnapshot {
        let last = previous.withLock { $0 }
        let snapshot = try await CloudSnapshot.take(of: fileSystem, layout: layout, after: last)
        previous.withLock { $0 = snapshot }
        return snapshot
    }
}
