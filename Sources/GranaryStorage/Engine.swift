import Foundation
import Synchronization

/// A Granary store: tables of typed rows with secondary indexes, one writer at a time, any number of
/// snapshot readers, and (for durable stores) a write-ahead log with compressed snapshots.
///
/// Open one `Engine` per store and share it: it is thread-safe. Reads take a `Snapshot` that never
/// changes under you and never blocks a writer; writes run in `write { }` blocks that commit atomically.
///
/// ```swift
/// let engine = try Engine.open(.directory(url))
/// try engine.write { tx in
///     try tx.createTable(TableSchema(name: "person", columns: [Column("name", .string)]))
///     try tx.insert(["Ada"], into: "person")
/// }
/// let people = try engine.read().rows(in: "person")
/// ```
public final class Engine: @unchecked Sendable {
    // @unchecked: mutable state is guarded by `writeLock` (head, closing) or lives in Mutexes.

    /// Where a store lives.
    public enum Location: Sendable, Hashable {
        /// No files: the same semantics, gone when the engine is closed. For tests and caches.
        case inMemory
        /// A store directory (by convention `Name.granary`) holding snapshot, log and lock files.
        case directory(URL)
    }

    /// When a commit's log record is forced to disk.
    public enum Durability: Sendable, Hashable {
        /// `write` returns only after the commit is on disk (fdatasync); concurrent committers share
        /// one sync (group commit). An acknowledged commit survives power loss.
        case full
        /// The log is synced at most every `milliseconds` by a background flusher, and at checkpoint and
        /// close. A process crash loses nothing; a power loss may lose the last interval's commits.
        case normal(milliseconds: Int)
        /// Never synced except at checkpoint and close. A process crash loses nothing the OS accepted.
        case off
    }

    /// What opening a store does when its files are damaged (not merely cut short by a crash).
    public enum Recovery: Sendable, Hashable {
        /// Throw `StorageError.corruption` naming the file, the offset and what is missing. The files
        /// are left untouched.
        case strict
        /// Open with the longest consistent prefix of commits: everything before the first damage. The
        /// damaged and later log segments are kept beside the store as `*.damaged`, and
        /// `recoveryReport.lostCommits` says what was given up. A damaged snapshot still throws (there
        /// is no prefix to keep without it): `granary recover` salvages such a store.
        case keepConsistentPrefix
    }

    /// How a store is opened.
    public struct Options: Sendable, Hashable {
        public var durability: Durability
        /// The log size, in bytes, past which a checkpoint starts by itself in the background.
        public var checkpointThreshold: Int64
        public var isReadOnly: Bool
        /// Create the store directory when it does not exist.
        public var createIfMissing: Bool
        /// Ignore the index entries stored in the snapshot and rebuild every index from the rows: a
        /// repair switch for a store whose rows are sound but whose index entries are not.
        public var rebuildIndexesOnOpen: Bool
        /// Whether damage throws (the default) or is accepted by keeping the commits before it.
        public var recovery: Recovery

        public init(durability: Durability = .full, checkpointThreshold: Int64 = 64 << 20,
                    readOnly: Bool = false, createIfMissing: Bool = true, rebuildIndexesOnOpen: Bool = false,
                    recovery: Recovery = .strict) {
            self.durability = durability
            self.checkpointThreshold = checkpointThreshold
            self.isReadOnly = readOnly
            self.createIfMissing = createIfMissing
            self.rebuildIndexesOnOpen = rebuildIndexesOnOpen
            self.recovery = recovery
        }
    }

    public let location: Location
    public let options: Options

    private let writeLock = NSLock()
    /// The newest committed state; the writer's starting point. Guarded by `writeLock`.
    private var head: EngineState
    private var isClosed = false
    private let storage: DurableStorage?
    private let feed = ChangeFeed()

    private struct Publication {
        var state: EngineState
        var pending: [(state: EngineState, summary: ChangeSummary)] = []
    }
    /// What readers see, and commits logged but not yet visible (waiting for their sync).
    private let publication: Mutex<Publication>

    /// What recovery found when the store was opened.
    public let recoveryReport: RecoveryReport

    private init(location: Location, options: Options, state: EngineState, storage: DurableStorage?, report: RecoveryReport) {
        self.location = location
        self.options = options
        self.head = state
        self.storage = storage
        self.recoveryReport = report
        self.publication = Mutex(Publication(state: state))
    }

    /// Opens (or creates) a store.
    /// - Throws: `StorageError.lockHeld` if another process or handle has it open for writing;
    ///   `.corruption` if a snapshot is damaged, or the log is damaged or falls short of what the store
    ///   recorded as acknowledged (unless `options.recovery` accepts the prefix before the damage); a
    ///   torn tail of the newest segment (commits never acknowledged) is cut off and reported in
    ///   `recoveryReport` instead; `.io` for file system errors.
    public static func open(_ location: Location, options: Options = Options()) throws -> Engine {
        switch location {
        case .inMemory:
            return Engine(location: location, options: options, state: EngineState(), storage: nil, report: RecoveryReport())
        case .directory(let url):
            let (storage, state, report) = try DurableStorage.open(directory: url.path, options: options)
            let engine = Engine(location: location, options: options, state: state, storage: storage, report: report)
            return engine
        }
    }

    deinit {
        try? close()
    }

    // MARK: Reading

    /// A snapshot of the last commit that is visible (for `.full` durability: that is on disk).
    public func read() -> Snapshot {
        Snapshot(state: publication.withLock { $0.state })
    }

    /// Runs `body` on a snapshot of the last visible commit.
    public func read<R>(_ body: (Snapshot) throws -> R) rethrows -> R {
        try body(read())
    }

    public var metadata: StoreMetadata { read().metadata }

    // MARK: Writing

    /// Runs `body` as the only writer and commits what it did atomically.
    ///
    /// Other writers wait; readers go on with their snapshots. When this returns, the commit is visible
    /// to new snapshots and, with `.full` durability, on disk. If `body` throws, nothing it did is kept
    /// and the error is rethrown.
    /// - Throws: what `body` throws; `StorageError.readOnly`, `.closed`; `.poisoned` if an earlier sync
    ///   failed; `.io` if the log cannot be written (the engine is then poisoned).
    @discardableResult
    public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        writeLock.lock()
        var isLocked = true
        defer { if isLocked { writeLock.unlock() } }
        try checkWritable()

        let tx = WriteTransaction(state: head)
        let result: R
        do {
            result = try body(tx)
        } catch {
            _ = tx.finish()
            throw error
        }
        let payload = tx.finish()
        if tx.isEmpty { return result }

        let lsn = head.lsn + 1
        var newState = tx.state
        tx.state = EngineState()
        newState.lsn = lsn
        let summary = tx.changes.summary(lsn: lsn) { newState.tables[$0]?.table.name }
        try storage?.append(payload, lsn: lsn)
        head = newState
        publication.withLock { $0.pending.append((newState, summary)) }

        let waitForSync = storage != nil && options.durability == .full
        if !waitForSync { publish(upTo: lsn) }
        // Decided under the write lock, which guards what it reads (a background checkpoint switching
        // log segments writes it); the checkpoint itself starts after the lock is released.
        let checkpointIsDue = storage?.wantsCheckpoint ?? false
        writeLock.unlock()
        isLocked = false

        if waitForSync, let storage {
            let synced = try storage.waitUntilDurable(lsn)
            publish(upTo: synced)
        }
        if checkpointIsDue { startBackgroundCheckpoint() }
        return result
    }

    /// Whether this handle may write now. Called under `writeLock`.
    /// - Throws: `StorageError.closed`, `.readOnly`, `.poisoned`.
    private func checkWritable() throws {
        if isClosed { throw StorageError.closed }
        if options.isReadOnly, case .directory(let url) = location { throw StorageError.readOnly(path: url.path) }
        try storage?.checkWritable()
    }

    /// Makes every logged commit up to `lsn` visible, in order, and tells observers.
    private func publish(upTo lsn: UInt64) {
        let summaries = publication.withLock { p -> [ChangeSummary] in
            var released: [ChangeSummary] = []
            while let first = p.pending.first, first.state.lsn <= lsn {
                p.pending.removeFirst()
                if first.state.lsn > p.state.lsn { p.state = first.state }
                released.append(first.summary)
            }
            return released
        }
        if !summaries.isEmpty { feed.publish(summaries) }
    }

    // MARK: Observing

    /// Calls `handler` after each commit, in commit order, with what it changed.
    ///
    /// The handler runs on the committing thread after the commit is visible, outside the engine's
    /// locks; keep it short. Delivery stops when the returned observation is cancelled or released.
    public func observeChanges(_ handler: @escaping @Sendable (ChangeSummary) -> Void) -> ChangeObservation {
        let token = feed.add(handler)
        return ChangeObservation { [weak feed] in feed?.remove(token) }
    }

    /// The commits from now on, as an asynchronous sequence; stops when the consuming task is cancelled.
    public func changes() -> AsyncStream<ChangeSummary> {
        let (stream, continuation) = AsyncStream<ChangeSummary>.makeStream(bufferingPolicy: .unbounded)
        let observation = observeChanges { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    // MARK: Maintenance

    /// Writes a compressed snapshot of the current state and drops the log it makes redundant.
    ///
    /// Writers are held only while the log switches to a new segment; the snapshot itself is written
    /// while they go on. Does nothing for in-memory stores.
    /// - Throws: `StorageError.io` if the snapshot cannot be written (the old log stays, nothing is lost).
    public func checkpoint() throws {
        guard let storage else { return }
        storage.checkpointLock.lock()
        defer { storage.checkpointLock.unlock() }
        let job: DurableStorage.CheckpointJob? = try {
            writeLock.lock()
            defer { writeLock.unlock() }
            if isClosed { throw StorageError.closed }
            return try storage.beginCheckpoint(state: head)
        }()
        if let job { try storage.finishCheckpoint(job) }
    }

    private func startBackgroundCheckpoint() {
        guard let storage, storage.claimBackgroundCheckpoint() else { return }
        Thread.detachNewThread { [weak self] in
            defer { storage.releaseBackgroundCheckpoint() }
            guard let self else { return }
            do { try self.checkpoint() } catch { storage.recordCheckpointFailure(error) }
        }
    }

    /// Replaces the whole content of the store with what `body` builds, in one atomic step.
    ///
    /// Use it for changes that rewrite most rows, such as schema migrations: rows are bulk-loaded
    /// instead of logged, and a durable store switches by writing one new snapshot and renaming it into
    /// place. Killed at any moment, the store opens afterwards either as it was or fully rewritten.
    /// Writers wait until it is done; readers go on with their snapshots of the old content. Change
    /// observers are not called: a rewrite is not a set of row changes.
    ///
    /// If `body` or building the new content throws (a unique index with duplicates, a row that does
    /// not fit its table), nothing changes.
    /// - Throws: what `body` throws; `StorageError.uniqueViolation` naming the duplicates;
    ///   `.readOnly`, `.closed`, `.poisoned`; `.io` if the snapshot cannot be written (the store keeps
    ///   its old content).
    public func rewrite(_ body: (StoreRewrite) throws -> Void) throws {
        storage?.checkpointLock.lock()
        defer { storage?.checkpointLock.unlock() }
        try writeLock.withLock {
            try checkWritable()
            if let storage {
                // Commits logged but not yet synced belong to the old content; make them durable first
                // so that a crash before the switch still finds them.
                publish(upTo: try storage.waitUntilDurable(head.lsn, force: true))
            }
            let rewrite = StoreRewrite(source: Snapshot(state: head))
            try body(rewrite)
            try install(try rewrite.makeState())
        }
    }

    /// Makes `state` the store's content as one new commit. Called under `writeLock` and the
    /// checkpoint lock, after the log is synced.
    private func install(_ content: EngineState) throws {
        var state = content
        state.lsn = head.lsn + 1
        try storage?.install(state)
        head = state
        publication.withLock { $0.state = state }
    }

    /// Replaces everything with `content` (a salvaged store's), as `rewrite` does.
    /// - Throws: as `rewrite`.
    func replaceContent(with content: EngineState) throws {
        storage?.checkpointLock.lock()
        defer { storage?.checkpointLock.unlock() }
        try writeLock.withLock {
            try checkWritable()
            if let storage { publish(upTo: try storage.waitUntilDurable(head.lsn, force: true)) }
            try install(content)
        }
    }

    /// Forces every commit so far to disk, whatever the durability mode.
    /// - Throws: `StorageError.io` (and the engine is poisoned) if the sync fails.
    public func sync() throws {
        guard let storage else { return }
        let lsn = writeLock.withLock { head.lsn }
        let synced = try storage.waitUntilDurable(lsn, force: true)
        publish(upTo: synced)
    }

    /// Syncs the log, stops background work and releases the store's lock. Idempotent.
    /// - Throws: `StorageError.io` if the final sync fails.
    public func close() throws {
        let wasOpen = writeLock.withLock { () -> Bool in
            defer { isClosed = true }
            return !isClosed
        }
        guard wasOpen, let storage else { return }
        try storage.close()
    }

    var storageDirectory: String? { storage?.directory }

    /// The last commit known to be on disk (for in-memory stores, the last commit).
    var durableLSN: UInt64 { storage?.durableLSN ?? read().lsn }

    /// Sizes, counts and state of the store's files, for `granary info` and monitoring.
    public func info() -> StorageInfo {
        let snapshot = read()
        var info = storage?.info() ?? StorageInfo()
        info.lsn = snapshot.lsn
        info.tables = snapshot.state.orderedTables.map { t in
            StorageInfo.Table(name: t.name, rows: t.rows.count, indexes: t.indexes.map { ($0.definition.name, $0.entries.count) },
                              memoryBytes: t.rows.memoryFootprint + t.indexes.reduce(0) { $0 + $1.entries.memoryFootprint })
        }
        return info
    }
}
