import Synchronization

/// Named moments inside the engine's multi-step file protocols, where a crash test can stop the
/// process for real (SIGKILL) to prove that recovery handles a crash exactly there.
///
/// Random-time kills rarely land between two particular system calls; these points make the
/// interesting windows of a rewrite reachable on every run. With no handler installed, reaching a point
/// costs one lock.
@_spi(CrashTesting)
public enum StorageTestHooks {
    public enum Point: String, Sendable, CaseIterable {
        /// A rewrite's snapshot is fully written to its temporary file, not yet synced or renamed.
        case rewriteSnapshotWritten = "rewrite-snapshot-written"
        /// A rewrite's snapshot has been renamed into place and the directory synced: the switch.
        case rewriteSwitched = "rewrite-switched"
        /// After the switch, the fresh log segment exists; the old files are not yet removed.
        case rewriteSegmentCreated = "rewrite-segment-created"
    }

    private static let handler = Mutex<(@Sendable (Point) -> Void)?>(nil)

    /// Installs the handler called at every point (`nil` removes it). Process-wide: for crash-test
    /// child processes, not for tests that share a process.
    public static func install(_ body: (@Sendable (Point) -> Void)?) {
        handler.withLock { $0 = body }
    }

    static func reach(_ point: Point) {
        handler.withLock { $0 }?(point)
    }
}
