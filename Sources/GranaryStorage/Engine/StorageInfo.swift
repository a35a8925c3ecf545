import Foundation

/// What recovery did when a store was opened.
public struct RecoveryReport: Sendable, Hashable {
    /// The LSN of the snapshot that was loaded, if any.
    public var snapshotLSN: UInt64?
    /// Commits replayed from the log on top of the snapshot.
    public var replayedCommits = 0
    /// A damaged or incomplete tail cut off the last log segment: a commit that was being written when
    /// the process died, never acknowledged.
    public var truncatedTail: TruncatedTail?
    /// Leftover files removed: temporary snapshots, and logs and snapshots a finished checkpoint had
    /// made redundant.
    public var removedFiles: [String] = []

    /// What a `.keepConsistentPrefix` open gave up: every commit after `afterLSN`, from the damage on.
    /// Nil when nothing acknowledged was lost (always so for a strict open, which throws instead).
    public var lostCommits: LostCommits?
    /// Manifest copies that were missing or damaged (the other copy, or the log alone, was used).
    public var manifestProblems: [String] = []

    public struct LostCommits: Sendable, Hashable {
        /// The last commit the store kept; the commits after it that the log held are gone from it.
        public var afterLSN: UInt64
        /// Where the damage is, and what it is.
        public var file: String
        public var offset: Int64
        public var reason: String
        /// Damaged segments, moved or copied aside with a `.damaged` suffix for `granary recover`.
        public var quarantinedFiles: [String] = []
    }

    public struct TruncatedTail: Sendable, Hashable {
        public var file: String
        public var offset: Int64
        public var discardedBytes: Int64
        public var reason: String
    }

    public init() {}
}

/// Sizes and state of a store, as `granary info` prints them.
public struct StorageInfo: Sendable {
    public struct Table: Sendable {
        public var name: String
        public var rows: Int
        public var indexes: [(name: String, entries: Int)]
        public var memoryBytes: Int
    }
    public var directory: String?
    public var lsn: UInt64 = 0
    public var tables: [Table] = []
    public var snapshotFile: String?
    public var snapshotBytes: Int64 = 0
    public var logSegments: [String] = []
    public var logBytes: Int64 = 0
    public var lastCheckpointLSN: UInt64?
    public var lastCheckpointDate: Date?
    public var lastCheckpointError: String?
    public init() {}
}
