/// What `Engine.salvage(_:into:)` took from a damaged store, and what it could not.
public struct SalvageReport: Sendable, Hashable, CustomStringConvertible {
    /// A place in a source file that could not be read.
    public struct Damage: Sendable, Hashable {
        public var file: String
        public var offset: Int64
        public var reason: String
    }

    /// A commit that was read intact but could not be applied on top of what was salvaged before it
    /// (it changes a row or table that was lost).
    public struct UnappliedCommit: Sendable, Hashable {
        public var lsn: UInt64
        public var reason: String
    }

    /// The snapshot the salvage started from, and its LSN; nil when the store had none (or it was
    /// unreadable from its first byte).
    public var snapshotFile: String?
    public var snapshotLSN: UInt64?
    /// Rows read from the snapshot, and rows of it that could not be (in damaged blocks, or not
    /// insertable) when that number is known.
    public var snapshotRows = 0
    public var snapshotRowsLost = 0
    /// Intact commits applied on top of the snapshot.
    public var appliedCommits = 0
    /// The last commit the salvaged store holds.
    public var lastLSN: UInt64 = 0
    /// Runs of commits after the snapshot that no file holds intact.
    public var missingCommits: [ClosedRange<UInt64>] = []
    public var unappliedCommits: [UnappliedCommit] = []
    /// Damaged places found in the source's files.
    public var damage: [Damage] = []
    /// Rows per table in the salvaged store.
    public var tables: [String: Int] = [:]

    /// Whether every commit the source's files held made it into the salvaged store.
    public var isComplete: Bool {
        missingCommits.isEmpty && unappliedCommits.isEmpty && damage.isEmpty && snapshotRowsLost == 0
    }

    public init() {}

    public var description: String {
        var lines: [String] = []
        if let snapshotFile {
            lines.append("snapshot \(snapshotFile): \(snapshotRows) rows read"
                + (snapshotRowsLost > 0 ? ", \(snapshotRowsLost) lost" : "")
                + (snapshotLSN.map { ", commits up to \($0)" } ?? ""))
        } else {
            lines.append("no usable snapshot: started from an empty store")
        }
        lines.append("\(appliedCommits) commit(s) replayed from the log; the salvaged store ends at commit \(lastLSN)")
        for range in missingCommits {
            lines.append(range.count == 1 ? "missing: commit \(range.lowerBound)" : "missing: commits \(range.lowerBound)…\(range.upperBound)")
        }
        for commit in unappliedCommits { lines.append("not applied: commit \(commit.lsn): \(commit.reason)") }
        for d in damage { lines.append("damaged: \(d.file) at offset \(d.offset): \(d.reason)") }
        for (name, rows) in tables.sorted(by: { $0.key < $1.key }) { lines.append("table \(name): \(rows) rows") }
        lines.append(isComplete ? "everything the files held was salvaged" : "the salvaged store is missing what is listed above")
        return lines.joined(separator: "\n")
    }
}
