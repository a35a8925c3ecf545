import Foundation
import Synchronization

/// The files behind a durable store: the lock, the log segments, the snapshots; recovery on open,
/// group commit, and checkpoints.
///
/// Layout of `Name.granary/`: `LOCK` (flock'ed while open), `log-<base LSN>.wal` segments (the newest
/// one receives appends), `snapshot-<LSN>.snap` (all commits up to that LSN). A checkpoint first starts a
/// new segment, then writes the snapshot beside it, and only once the snapshot and the directory entry
/// are on disk deletes the segments it covers. Whatever moment a crash hits, the directory holds a
/// snapshot plus the segments after it, or the old snapshot plus all segments after that.
final class DurableStorage: @unchecked Sendable {
    // @unchecked: `writer`, `segments`, `logBytesSinceCheckpoint` change only under the engine's write
    // lock; everything the sync path shares lives in `syncState` (an NSCondition guards it).

    struct Segment {
        var baseLSN: UInt64
        var path: String
    }

    let directory: String
    let options: Engine.Options
    private let lockFile: PosixFile
    private var writer: LogWriter?
    private var segments: [Segment]
    private var logBytesSinceCheckpoint: Int64 = 0

    private let syncCondition = NSCondition()
    private struct SyncState {
        var appendedLSN: UInt64
        var syncedLSN: UInt64
        var isSyncing = false
        var failure: String?
        var writer: LogWriter?
        var isClosed = false
    }
    private var syncState: SyncState

    private struct CheckpointState {
        var isBackgroundRunning = false
        var lastLSN: UInt64?
        var lastDate: Date?
        var lastError: String?
        var snapshotPath: String?
    }
    private let checkpointState = Mutex(CheckpointState())
    /// The store's record of its own files (see `StoreManifest`); written under `manifestLock`, which
    /// is held across the write so that copies are written in sequence order.
    private var manifest: StoreManifest
    private let manifestLock = NSLock()
    /// Serializes checkpoints; always taken before the engine's write lock.
    let checkpointLock = NSLock()
    private var flusher: Thread?

    private init(directory: String, options: Engine.Options, lockFile: PosixFile, writer: LogWriter?,
                 segments: [Segment], lsn: UInt64, snapshotPath: String?, snapshotLSN: UInt64?, manifest: StoreManifest) {
        self.directory = directory
        self.manifest = manifest
        self.options = options
        self.lockFile = lockFile
        self.writer = writer
        self.segments = segments
        self.syncState = SyncState(appendedLSN: lsn, syncedLSN: lsn, writer: writer)
        checkpointState.withLock {
            $0.snapshotPath = snapshotPath
            $0.lastLSN = snapshotLSN
        }
    }

    static func segmentName(_ base: UInt64) -> String { String(format: "log-%016llx.wal", base) }
    static func snapshotName(_ lsn: UInt64) -> String { String(format: "snapshot-%016llx.snap", lsn) }

    private static func parse(_ name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let hex = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard hex.count == 16 else { return nil }
        return UInt64(hex, radix: 16)
    }

    private func path(_ name: String) -> String { directory + "/" + name }

    // MARK: Opening and recovery

    static func open(directory: String, options: Engine.Options) throws -> (DurableStorage, EngineState, RecoveryReport) {
        let readOnly = options.isReadOnly
        if !PosixFile.exists(directory) {
            if readOnly || !options.createIfMissing {
                throw StorageError.io(operation: "open store", path: directory, errno: ENOENT)
            }
            try PosixFile.makeDirectory(directory)
        }
        if readOnly || !options.createIfMissing {
            let isStore = try PosixFile.list(directory).contains { $0 == "LOCK" || $0.hasSuffix(".wal") || $0.hasSuffix(".snap") }
            if !isStore {
                throw StorageError.invalidArgument("\(directory) is not a Granary store: it holds no LOCK, log or snapshot file")
            }
        }
        let lockFile = try PosixFile.open(directory + "/LOCK", mode: readOnly ? .readOnly : .create)
        guard try takeLock(lockFile, shared: readOnly) else {
            lockFile.close()
            throw StorageError.lockHeld(path: directory)
        }

        var report = RecoveryReport()
        let names = try PosixFile.list(directory)
        var snapshots: [(UInt64, String)] = []
        var segments: [Segment] = []
        for name in names {
            if let lsn = parse(name, prefix: "snapshot-", suffix: ".snap") { snapshots.append((lsn, name)) }
            if let base = parse(name, prefix: "log-", suffix: ".wal") { segments.append(Segment(baseLSN: base, path: directory + "/" + name)) }
            if name.hasSuffix(".tmp") && !readOnly {
                // A checkpoint that died before its rename; the log still holds everything it covered.
                try PosixFile.remove(directory + "/" + name)
                report.removedFiles.append(name)
            }
        }
        snapshots.sort { $0.0 < $1.0 }
        segments.sort { $0.baseLSN < $1.baseLSN }

        let reading = try StoreManifest.read(in: directory)
        let isNewStore = snapshots.isEmpty && segments.isEmpty && reading.newest == nil
        if !isNewStore {
            report.manifestProblems = reading.missing.map { "\($0) is missing" } + reading.damaged.map { "\($0) is damaged" }
        }
        var recovery = try recover(directory: directory, options: options, snapshots: snapshots, segments: segments,
                                   manifest: reading.newest, report: report)
        if !readOnly { try recovery.quarantineDamagedSegments() }
        var state = recovery.state
        report = recovery.report
        var liveSegments = recovery.liveSegments
        var lastScan = recovery.lastScan
        let snapshotPath = snapshots.last.map { directory + "/" + $0.1 }

        var writer: LogWriter?
        var manifest = reading.newest ?? StoreManifest(newestSegmentBase: 1, snapshotLSN: 0, durableLSN: 0, isClosed: false)
        if !readOnly {
            if let (segment, scan) = lastScan, scan.firstMissingLSN != state.lsn + 1,
               scan.validEnd >= Int64(LogFormat.fileHeaderSize) {
                // Every record of the newest segment is older than the snapshot (a rewrite died after
                // its switch): appending there would leave a gap in its LSNs. The snapshot is on disk,
                // so the segment is redundant.
                try PosixFile.remove(segment.path)
                report.removedFiles.append((segment.path as NSString).lastPathComponent)
                liveSegments.removeAll { $0.path == segment.path }
                lastScan = nil
            }
            if let (segment, scan) = lastScan, scan.validEnd >= Int64(LogFormat.fileHeaderSize) {
                writer = try LogWriter.openForAppend(path: segment.path, validEnd: scan.validEnd, nextLSN: state.lsn + 1)
            } else {
                if let (torn, _) = lastScan {
                    // Died while creating the segment: its header never fully reached the disk.
                    try PosixFile.remove(torn.path)
                    liveSegments.removeAll { $0.path == torn.path }
                }
                let segment = Segment(baseLSN: state.lsn + 1, path: directory + "/" + segmentName(state.lsn + 1))
                writer = try LogWriter.create(path: segment.path, baseLSN: segment.baseLSN)
                try PosixFile.syncDirectory(directory)
                liveSegments.append(segment)
            }
            for (lsn, name) in snapshots.dropLast() where lsn < state.lsn || snapshotPath != nil {
                try PosixFile.remove(directory + "/" + name)
                report.removedFiles.append(name)
            }
            // From here the store's files are what the manifest describes; it is written before the
            // first commit of a new store, so a log with commits always has one.
            manifest.newestSegmentBase = writer!.baseLSN
            manifest.snapshotLSN = report.snapshotLSN ?? 0
            manifest.durableLSN = state.lsn
            manifest.isClosed = false
            try manifest.write(in: directory)
        }

        let storage = DurableStorage(directory: directory, options: options, lockFile: lockFile, writer: writer,
                                     segments: liveSegments, lsn: state.lsn, snapshotPath: snapshotPath, snapshotLSN: report.snapshotLSN,
                                     manifest: manifest)
        storage.logBytesSinceCheckpoint = liveSegments.reduce(0) { $0 + ((try? PosixFile.size(of: $1.path)) ?? 0) }

        if state.lsn == 0 && !readOnly {
            // A new store: make its identity durable before anyone uses it.
            var first = WriteTransactionPayload()
            first.add(.setMetadata(state.metadata))
            try storage.append(first.bytes, lsn: 1)
            _ = try storage.waitUntilDurable(1, force: true)
            state.lsn = 1
        }
        if !readOnly {
            if case .normal(let ms) = options.durability {
                storage.startBackgroundWork(flushIntervalMilliseconds: ms)
            } else {
                storage.startBackgroundWork(flushIntervalMilliseconds: nil)
            }
        }
        return (storage, state, report)
    }

    /// Loads the newest snapshot and replays the log on top of it (see `LogRecovery`); in prefix mode, a
    /// commit that does not replay makes it start over and stop before that commit.
    /// - Throws: `.corruption` for a damaged or missing snapshot, and for damage in strict mode.
    private static func recover(directory: String, options: Engine.Options, snapshots: [(UInt64, String)], segments: [Segment],
                                manifest: StoreManifest?, report: RecoveryReport) throws -> LogRecovery {
        var limit: (lsn: UInt64, reason: String)?
        while true {
            var report = report
            var state = EngineState()
            if let newest = snapshots.last {
                state = try SnapshotCodec.load(path: directory + "/" + newest.1, rebuildIndexes: options.rebuildIndexesOnOpen)
                if state.lsn != newest.0 {
                    throw StorageError.corruption(file: newest.1, offset: 0, reason: "snapshot header says LSN \(state.lsn) but its name says \(newest.0)")
                }
                report.snapshotLSN = state.lsn
            }
            if let manifest, manifest.snapshotLSN > (snapshots.last?.0 ?? 0) {
                // A lost snapshot cannot be replaced by a prefix: its log was deleted when it was written.
                throw StorageError.corruption(file: snapshotName(manifest.snapshotLSN), offset: 0, reason:
                    "the snapshot the store recorded (commits up to \(manifest.snapshotLSN)) is missing"
                    + (snapshots.last.map { "; the newest one present, \($0.1), is older" } ?? ""))
            }
            var recovery = LogRecovery(directory: directory, recovery: options.recovery, readOnly: options.isReadOnly,
                                       state: state, report: report, manifest: manifest)
            recovery.replayLimit = limit
            do {
                try recovery.replay(segments)
                return recovery
            } catch let failed as LogRecovery.ReplayFailed {
                limit = (failed.lsn - 1, failed.reason)
            }
        }
    }

    // MARK: Committing

    func checkWritable() throws {
        let failure = syncCondition.withLock { syncState.failure }
        if let failure { throw StorageError.poisoned(reason: failure) }
        if writer == nil { throw StorageError.readOnly(path: directory) }
    }

    /// Appends a commit's record. Called under the engine's write lock, so appends are in LSN order.
    func append(_ payload: [UInt8], lsn: UInt64) throws {
        guard let writer else { throw StorageError.readOnly(path: directory) }
        do {
            let written = try payload.withUnsafeBytes { try writer.append(payload: $0) }
            precondition(written == lsn, "log LSN \(written) out of step with engine LSN \(lsn)")
        } catch {
            poison("appending commit \(lsn) failed: \(error)")
            throw error
        }
        logBytesSinceCheckpoint += Int64(writer.frameSize(payloadCount: payload.count))
        syncCondition.withLock { syncState.appendedLSN = lsn }
    }

    private func poison(_ reason: String) {
        syncCondition.withLock {
            if syncState.failure == nil { syncState.failure = reason }
            syncCondition.broadcast()
        }
    }

    /// Returns once every commit up to `lsn` is on disk, syncing if no other thread is already doing so;
    /// commits appended while a sync runs are covered by the next one (group commit).
    /// Returns the LSN known to be durable. With `force` false and durability other than `.full`, it
    /// does not wait.
    func waitUntilDurable(_ lsn: UInt64, force: Bool = false) throws -> UInt64 {
        syncCondition.lock()
        defer { syncCondition.unlock() }
        while syncState.syncedLSN < lsn {
            if let failure = syncState.failure { throw StorageError.poisoned(reason: failure) }
            if syncState.isSyncing {
                syncCondition.wait()
                continue
            }
            guard let writer = syncState.writer else { throw StorageError.readOnly(path: directory) }
            syncState.isSyncing = true
            let target = syncState.appendedLSN
            syncCondition.unlock()
            var failure: Error?
            do { try writer.sync() } catch { failure = error }
            syncCondition.lock()
            syncState.isSyncing = false
            if let failure {
                if syncState.failure == nil { syncState.failure = "syncing the log failed: \(failure)" }
                syncCondition.broadcast()
                throw failure
            }
            syncState.syncedLSN = max(syncState.syncedLSN, target)
            syncCondition.broadcast()
        }
        return syncState.syncedLSN
    }

    /// How long the log must be idle before the manifest records what the last syncs made durable.
    static let manifestIdleInterval = 0.25

    /// Starts the background thread: with `.normal` durability it syncs the log every interval; with
    /// any durability it records in the manifest, once the log has been idle for a moment, the commits
    /// synced since the manifest was last written. Those would otherwise be protected only by the
    /// frames after them, and the newest have none: damage to them would pass for a torn tail. Waiting
    /// for a pause keeps the manifest's own sync off the commit path under load.
    private func startBackgroundWork(flushIntervalMilliseconds: Int?) {
        let interval = flushIntervalMilliseconds.map { Double(max(1, $0)) / 1000 } ?? Self.manifestIdleInterval
        let thread = Thread { [weak self] in
            var lastAppended: UInt64?
            while let self {
                let (closed, pending, appended, synced) = self.syncCondition.withLock { () -> (Bool, UInt64?, UInt64, UInt64) in
                    _ = self.syncCondition.wait(until: Date(timeIntervalSinceNow: interval))
                    let s = self.syncState
                    let pending = flushIntervalMilliseconds != nil && s.appendedLSN > s.syncedLSN && s.failure == nil ? s.appendedLSN : nil
                    return (s.isClosed, pending, s.appendedLSN, s.failure == nil ? s.syncedLSN : 0)
                }
                if closed { return }
                if let pending { _ = try? self.waitUntilDurable(pending) }
                if appended == lastAppended, synced > self.manifestLock.withLock({ self.manifest.durableLSN }) {
                    // Best effort: a failure leaves an older, still true, record.
                    try? self.recordManifest(unlessClosed: true) { $0.durableLSN = max($0.durableLSN, synced) }
                }
                lastAppended = appended
            }
        }
        thread.name = "granary-log-background"
        flusher = thread
        thread.start()
    }

    /// The last commit known to be on disk.
    var durableLSN: UInt64 { syncCondition.withLock { syncState.syncedLSN } }

    // MARK: Checkpoints

    /// Whether the log has grown past the checkpoint threshold. Called under the engine's write lock,
    /// which guards `writer` and `logBytesSinceCheckpoint` (appends and segment switches change them
    /// under it); read without it, a checkpoint switching segments raced with the read.
    var wantsCheckpoint: Bool {
        writer != nil && logBytesSinceCheckpoint >= options.checkpointThreshold
    }

    struct CheckpointJob {
        var state: EngineState
        var coveredSegments: [Segment]
    }

    /// Starts a new log segment so the snapshot can be written while writers go on. Called under the
    /// engine's write lock (and `checkpointLock`).
    func beginCheckpoint(state: EngineState) throws -> CheckpointJob? {
        try checkWritable()
        guard let old = writer else { return nil }
        let lastSnapshot = checkpointState.withLock { $0.lastLSN }
        if lastSnapshot == state.lsn { return nil }
        // The old segment must be complete on disk before a newer one can exist: recovery treats damage
        // in any but the newest segment as fatal.
        do { try old.sync() } catch {
            poison("syncing the log before a checkpoint failed: \(error)")
            throw error
        }
        let covered = try startSegment(after: state.lsn)
        return CheckpointJob(state: state, coveredSegments: covered)
    }

    /// Writes the snapshot and removes what it makes redundant. Runs without the engine's write lock.
    func finishCheckpoint(_ job: CheckpointJob) throws {
        let path = try writeSnapshot(job.state)
        // Only now is the old log redundant. A crash before these removals leaves files recovery skips.
        try adoptSnapshot(path, lsn: job.state.lsn, replacing: job.coveredSegments)
    }

    /// Starts an empty log segment after commit `lsn`, on disk and in the directory, and makes it the
    /// one appends go to; every commit up to `lsn` counts as synced (the caller synced them or a
    /// snapshot holds them). Returns the segments it replaces. Called under the engine's write lock.
    private func startSegment(after lsn: UInt64) throws -> [Segment] {
        let segment = Segment(baseLSN: lsn + 1, path: path(Self.segmentName(lsn + 1)))
        let fresh = try LogWriter.create(path: segment.path, baseLSN: segment.baseLSN)
        try PosixFile.syncDirectory(directory)
        // Named only once it exists on disk, and before any commit goes into it: recovery may then
        // require the segment the manifest names.
        do {
            try recordManifest {
                $0.newestSegmentBase = segment.baseLSN
                $0.durableLSN = max($0.durableLSN, lsn)
            }
        } catch {
            poison("recording the new log segment in the manifest failed: \(error)")
            throw error
        }
        let replaced = segments
        segments = [segment]
        writer = fresh
        syncCondition.withLock {
            syncState.writer = fresh
            syncState.appendedLSN = max(syncState.appendedLSN, lsn)
            syncState.syncedLSN = max(syncState.syncedLSN, lsn)
        }
        logBytesSinceCheckpoint = 0
        return replaced
    }

    /// Writes `state` as the snapshot at its LSN: a temporary file, synced, renamed into place, then
    /// the directory synced. A failure is recorded for `info()` and leaves no temporary file.
    /// - Parameter beforeRename: Runs once the file is written, before it is synced and renamed.
    /// - Returns: The snapshot's path.
    private func writeSnapshot(_ state: EngineState, beforeRename: () -> Void = {}) throws -> String {
        let finalPath = path(Self.snapshotName(state.lsn))
        do {
            let snapshot = try SnapshotWriter.create(temporaryPath: finalPath + ".tmp", lsn: state.lsn)
            do {
                try SnapshotCodec.write(state, to: snapshot)
                beforeRename()
                try snapshot.finish(finalPath: finalPath)
            } catch {
                try? snapshot.abandon()
                throw error
            }
        } catch {
            recordCheckpointFailure(error)
            throw error
        }
        return finalPath
    }

    /// Records a snapshot that is in place as the store's, then removes the log segments and the older
    /// snapshot it makes redundant.
    private func adoptSnapshot(_ snapshotPath: String, lsn: UInt64, replacing covered: [Segment]) throws {
        let previous = checkpointState.withLock { s -> String? in
            defer {
                s.snapshotPath = snapshotPath
                s.lastLSN = lsn
                s.lastDate = Date()
                s.lastError = nil
            }
            return s.snapshotPath
        }
        for segment in covered { try PosixFile.remove(segment.path) }
        if let previous, previous != snapshotPath { try PosixFile.remove(previous) }
        try PosixFile.syncDirectory(directory)
        try recordManifest { $0.snapshotLSN = max($0.snapshotLSN, lsn) }
    }

    /// Changes the manifest and writes its next copy (see `StoreManifest`).
    /// - Parameter unlessClosed: skip the write if `close()` already recorded the clean close (the
    ///   background thread may race with it, and must not write once the lock may be someone else's).
    private func recordManifest(unlessClosed: Bool = false, _ change: (inout StoreManifest) -> Void) throws {
        try manifestLock.withLock {
            if unlessClosed && manifest.isClosed { return }
            var next = manifest
            change(&next)
            try next.write(in: directory)
            manifest = next
        }
    }

    /// Makes `state` the store's content: a snapshot at its LSN, a fresh log segment after it, and
    /// no files of the old content. Called under the engine's write lock and `checkpointLock`, after
    /// the old log is synced.
    ///
    /// The snapshot's rename is the switch. Before it, recovery finds the old snapshot and log (the
    /// temporary file is removed); after it, the new snapshot is the newest and every old log record
    /// has a smaller LSN, so recovery skips them and starts a new segment if the newest one is
    /// entirely covered.
    func install(_ state: EngineState) throws {
        try checkWritable()
        let snapshot = try writeSnapshot(state) { StorageTestHooks.reach(.rewriteSnapshotWritten) }
        StorageTestHooks.reach(.rewriteSwitched)
        // From here the new content is the store's; a failure only leaves files recovery cleans up, but
        // this handle cannot go on appending to the old segment, so it is poisoned.
        do {
            let old = try startSegment(after: state.lsn)
            StorageTestHooks.reach(.rewriteSegmentCreated)
            try adoptSnapshot(snapshot, lsn: state.lsn, replacing: old)
        } catch {
            poison("finishing a rewrite failed after its snapshot was in place: \(error)")
            throw error
        }
    }

    func claimBackgroundCheckpoint() -> Bool {
        checkpointState.withLock { s in
            if s.isBackgroundRunning { return false }
            s.isBackgroundRunning = true
            return true
        }
    }

    func releaseBackgroundCheckpoint() {
        checkpointState.withLock { $0.isBackgroundRunning = false }
    }

    func recordCheckpointFailure(_ error: Error) {
        checkpointState.withLock { $0.lastError = "\(error)" }
    }

    // MARK: Closing and reporting

    /// How long an open waits for a lock that may be on its way out.
    static let lockPatience: Duration = .milliseconds(500)

    /// Takes the store's lock, retrying for up to `lockPatience` before giving up.
    ///
    /// A lock can be held for a moment after its owner closed it: a process launched meanwhile by any
    /// thread of this one holds a copy of every descriptor from its fork until its exec closes them
    /// (close-on-exec ones included), and with the copy the lock. A store closed and at once reopened
    /// while another thread launches a process would otherwise fail to reopen. A store really open
    /// elsewhere still fails, half a second later.
    private static func takeLock(_ file: PosixFile, shared: Bool) throws -> Bool {
        let deadline = ContinuousClock.now + lockPatience
        while true {
            if try shared ? file.tryLockShared() : file.tryLockExclusive() { return true }
            if ContinuousClock.now >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    func close() throws {
        var failure: Error?
        if writer != nil {
            let lsn = syncCondition.withLock { syncState.appendedLSN }
            do {
                let durable = try waitUntilDurable(lsn, force: true)
                try writer?.trimPreallocation()
                // A clean close records where the log ends: a log cut at a frame boundary afterwards is
                // then damage, not a crash.
                try recordManifest {
                    $0.durableLSN = max($0.durableLSN, durable)
                    $0.isClosed = true
                }
            } catch { failure = error }
        }
        syncCondition.withLock {
            syncState.isClosed = true
            syncCondition.broadcast()
        }
        checkpointLock.withLock {}
        lockFile.close()
        if let failure { throw failure }
    }

    func info() -> StorageInfo {
        var info = StorageInfo()
        info.directory = directory
        let c = checkpointState.withLock { $0 }
        info.snapshotFile = c.snapshotPath.map { ($0 as NSString).lastPathComponent }
        info.snapshotBytes = c.snapshotPath.flatMap { try? PosixFile.size(of: $0) } ?? 0
        info.lastCheckpointLSN = c.lastLSN
        info.lastCheckpointDate = c.lastDate
        info.lastCheckpointError = c.lastError
        let names = (try? PosixFile.list(directory)) ?? []
        info.logSegments = names.filter { $0.hasSuffix(".wal") }.sorted()
        info.logBytes = info.logSegments.reduce(0) { $0 + ((try? PosixFile.size(of: path($1))) ?? 0) }
        return info
    }
}

/// Builds a transaction payload outside a `WriteTransaction`, for records the engine writes itself.
struct WriteTransactionPayload {
    private var body = ByteWriter()
    private var count = 0
    mutating func add(_ op: Operation) {
        op.encode(into: &body)
        count += 1
    }
    var bytes: [UInt8] {
        var w = ByteWriter(capacity: body.count + 12)
        w.write(Operation.payloadFormat)
        w.writeVarint(UInt64(count))
        w.write(contentsOf: body.bytes)
        return w.bytes
    }
}
