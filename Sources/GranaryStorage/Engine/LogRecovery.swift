import Foundation

/// Replays a store's log segments on top of its snapshot when it opens, and decides whether what it
/// finds is a crash (cut off silently) or damage (reported).
///
/// Only a torn tail may be cut silently: frames at the end of the newest segment that were never
/// synced, so never acknowledged. Everything else that is missing or wrong is damage:
/// - a bad frame in a segment that is not the newest, or a gap between segments;
/// - a bad frame in the newest segment that a later intact frame proves was synced (its synced LSN
///   covers it), or, in segments written before frames carried a synced LSN, any bad frame followed by
///   intact ones;
/// - a log that falls short of what the manifest recorded: its newest segment missing, or fewer commits
///   than it recorded as on disk;
/// - no intact manifest copy in a store whose log says it wrote them.
///
/// With `Engine.Recovery.strict` damage throws `StorageError.corruption` naming the file, the offset
/// and what is missing. With `.keepConsistentPrefix` the store opens with every commit before the
/// damage, the damaged and later segments are kept beside it as `*.damaged`, and the report says what
/// was given up.
struct LogRecovery {
    let directory: String
    let recovery: Engine.Recovery
    let readOnly: Bool
    var state: EngineState
    var report: RecoveryReport
    let manifest: StoreManifest?
    /// Set once damage was accepted: later segments are not replayed.
    private(set) var stoppedAtDamage = false
    private(set) var liveSegments: [DurableStorage.Segment] = []
    private(set) var lastScan: (segment: DurableStorage.Segment, scan: LogScan)?
    /// Segment files to move aside as `*.damaged` (copied first when `keep` is set: the segment stays
    /// as the store's, cut at its damage).
    private(set) var quarantine: [(path: String, keep: Bool)] = []

    init(directory: String, recovery: Engine.Recovery, readOnly: Bool, state: EngineState, report: RecoveryReport,
         manifest: StoreManifest?) {
        self.directory = directory
        self.recovery = recovery
        self.readOnly = readOnly
        self.state = state
        self.report = report
        self.manifest = manifest
    }

    private static func name(_ path: String) -> String { (path as NSString).lastPathComponent }

    /// Records damage: throws in strict mode; otherwise remembers it and stops replay there.
    private mutating func damage(file: String, offset: Int64, reason: String) throws {
        guard recovery == .keepConsistentPrefix else {
            throw StorageError.corruption(file: file, offset: offset, reason: reason)
        }
        if report.lostCommits == nil {
            report.lostCommits = RecoveryReport.LostCommits(afterLSN: state.lsn, file: file, offset: offset, reason: reason)
        }
        stoppedAtDamage = true
    }

    /// Replays every segment that may hold commits after the snapshot.
    /// - Throws: `.corruption` for damage in strict mode, and for a commit that does not replay.
    mutating func replay(_ segments: [DurableStorage.Segment]) throws {
        for (i, segment) in segments.enumerated() {
            let fileName = Self.name(segment.path)
            if stoppedAtDamage {
                quarantine.append((segment.path, false))
                continue
            }
            let isLast = i == segments.count - 1
            if !isLast && segments[i + 1].baseLSN <= state.lsn + 1 {
                // Entirely covered by the snapshot: left over from a checkpoint that died after its rename.
                if !readOnly {
                    try PosixFile.remove(segment.path)
                    report.removedFiles.append(fileName)
                }
                continue
            }
            if segment.baseLSN > state.lsn + 1 {
                try damage(file: fileName, offset: 0, reason:
                    "log starts at commit \(segment.baseLSN) but the store only has commits up to \(state.lsn): a log segment is missing")
                quarantine.append((segment.path, false))
                continue
            }
            let scan: LogScan
            do {
                scan = try scanSegment(segment, fileName: fileName)
            } catch let error as StorageError {
                guard case .corruption(let file, let offset, let reason) = error else { throw error }
                try damage(file: file, offset: offset, reason: reason)
                quarantine.append((segment.path, false))
                continue
            }
            switch scan.stop {
            case .cleanEnd:
                break
            case .tornTail(let offset, let reason), .corrupt(let offset, let reason):
                if stoppedAtDamage {
                    // Stopped before a commit that does not replay (recorded by `scanSegment`).
                    quarantine.append((segment.path, scan.validEnd >= Int64(LogFormat.fileHeaderSize)))
                } else if let problem = Self.damageAfterBadFrame(scan, isLast: isLast, reason: reason) {
                    try damage(file: fileName, offset: offset, reason: problem)
                    if scan.validEnd >= Int64(LogFormat.fileHeaderSize) {
                        quarantine.append((segment.path, true))
                    } else {
                        quarantine.append((segment.path, false))
                        continue
                    }
                } else if scan.fileSize > scan.validEnd {
                    report.truncatedTail = .init(file: fileName, offset: scan.validEnd, discardedBytes: scan.fileSize - scan.validEnd,
                                                 reason: reason)
                }
            }
            liveSegments.append(segment)
            lastScan = (segment, scan)
        }
        try checkAgainstManifest(segments)
    }

    private mutating func scanSegment(_ segment: DurableStorage.Segment, fileName: String) throws -> LogScan {
        let limit = replayLimit
        var scan = try LogReader.scan(path: segment.path, expectedBaseLSN: segment.baseLSN, stopBefore: limit.map { $0.lsn + 1 }) { lsn, payload in
            guard lsn > state.lsn else { return }
            // `LogReader` guarantees consecutive LSNs within a segment.
            do {
                let ops = try Operation.decodeTransaction(payload, context: fileName, offset: 0)
                for op in ops { try state.apply(op) }
            } catch {
                // The state may be half changed: in prefix mode, recovery starts over and stops before
                // this commit.
                let reason = "commit \(lsn) cannot be replayed: \(error)"
                if recovery == .keepConsistentPrefix { throw ReplayFailed(lsn: lsn, reason: reason) }
                throw StorageError.corruption(file: fileName, offset: 0, reason: reason)
            }
            state.lsn = lsn
            report.replayedCommits += 1
        }
        if let limit, case .corrupt(let offset, _) = scan.stop, scan.firstMissingLSN == limit.lsn + 1 {
            try damage(file: fileName, offset: offset, reason: limit.reason)
            scan.stop = .corrupt(offset: offset, reason: limit.reason)
        }
        return scan
    }

    /// A commit that decodes badly or does not apply, in prefix mode: recovery is run again with
    /// `replayLimit` just before it.
    struct ReplayFailed: Error {
        var lsn: UInt64
        var reason: String
    }

    /// The last commit to replay, and why, when an earlier run hit a commit that does not replay.
    var replayLimit: (lsn: UInt64, reason: String)?

    /// Why a bad frame is damage rather than a torn tail, or nil for a torn tail.
    static func damageAfterBadFrame(_ scan: LogScan, isLast: Bool, reason: String) -> String? {
        let missing = scan.firstMissingLSN
        guard isLast else {
            return "\(reason) in a log segment that is not the newest, so later commits cannot be trusted"
        }
        guard let later = scan.laterFrames.first else { return nil }
        if scan.version >= 2 {
            guard let synced = scan.laterSyncedLSN, synced >= missing else { return nil }
            let witness = scan.laterFrames.first { ($0.syncedLSN ?? 0) >= missing }!
            return "commit \(missing) is damaged (\(reason)), but commit \(witness.lsn) at offset \(witness.offset), "
                + "written after it, records that commits up to \(synced) were on disk: acknowledged commits \(missing)…\(synced) would be lost"
        }
        return "commit \(missing) is damaged (\(reason)), but \(scan.laterFrames.count) intact commit(s) follow it "
            + "(from commit \(later.lsn) at offset \(later.offset)): they would be lost"
    }

    /// Checks that the log reaches what the manifest recorded.
    private mutating func checkAgainstManifest(_ segments: [DurableStorage.Segment]) throws {
        guard !stoppedAtDamage else { return }
        guard let manifest else {
            // No intact copy: fine for a store that never wrote one (made before manifests existed), not
            // for one whose log is in a format only manifest-writing versions produce.
            if let scan = lastScan?.scan, scan.version >= 2, scan.lastLSN != nil, report.manifestProblems.count == StoreManifest.fileNames.count {
                try damage(file: StoreManifest.fileNames[0], offset: 0, reason:
                    "both manifest copies are missing or damaged, so recovery cannot tell which commits were acknowledged "
                    + "(\(report.manifestProblems.joined(separator: "; ")))")
            }
            return
        }
        let covered = (report.snapshotLSN ?? 0) >= manifest.newestSegmentBase
        if !covered && !segments.contains(where: { $0.baseLSN == manifest.newestSegmentBase }) {
            try damage(file: DurableStorage.segmentName(manifest.newestSegmentBase), offset: 0, reason:
                "the newest log segment the store recorded is missing, with every commit after \(state.lsn) it held")
            return
        }
        if state.lsn < manifest.durableLSN {
            let file = lastScan.map { Self.name($0.segment.path) } ?? DurableStorage.segmentName(manifest.newestSegmentBase)
            try damage(file: file, offset: lastScan?.scan.validEnd ?? 0, reason:
                "the store recorded commits up to \(manifest.durableLSN) as on disk, but the log ends at commit \(state.lsn): "
                + "commits \(state.lsn + 1)…\(manifest.durableLSN) are missing")
        }
    }

    /// Moves damaged segments aside as `<name>.damaged`, copying the one the store keeps (cut at its
    /// damage by the writer), so that `granary recover` can still salvage from them.
    mutating func quarantineDamagedSegments() throws {
        for (path, keep) in quarantine {
            let target = path + ".damaged"
            if keep {
                try FileManager.default.copyItem(atPath: path, toPath: target)
            } else {
                try PosixFile.rename(path, target)
                liveSegments.removeAll { $0.path == path }
            }
            report.lostCommits?.quarantinedFiles.append(Self.name(target))
        }
        if !quarantine.isEmpty { try PosixFile.syncDirectory(directory) }
    }
}
