import Foundation
import Testing
@testable import GranaryStorage

/// Damages real store files (truncation, flipped bytes) and checks that opening either recovers a
/// consistent committed prefix or throws a clear error: never a crash, a hang, or wrong rows.
@Suite struct DamageTests {
    /// A store whose commit k inserts row k with value k*k; some commits are in the snapshot, the rest in the log.
    func makeStore() throws -> (URL, snapshotted: Int64, total: Int64) {
        let (dir, engine) = try makeOpenStore()
        try engine.close()
        return (dir, 25, 40)
    }

    /// The files of a store killed while open: commits 1…25 in the snapshot, 26…40 in the log, which
    /// still has its preallocated zeros, and a manifest that says only commits up to 26 were on disk
    /// (the checkpoint's record) unless the store was idle long enough for it to record more. Returns
    /// the copy and the commits the snapshot holds.
    func makeCrashedStore() throws -> (URL, snapshotted: Int64) {
        let (dir, engine) = try makeOpenStore()
        let crashed = try copy(dir)
        try engine.close()
        return (crashed, 25)
    }

    /// `makeStore`'s content, still open.
    private func makeOpenStore() throws -> (URL, Engine) {
        let dir = temporaryDirectory()
        let engine = try Engine.open(.directory(dir))
        try engine.write { tx in
            try tx.createTable(TableSchema(name: "t", columns: [Column("v", .int), Column("s", .string)],
                                           indexes: [IndexDefinition(name: "byV", on: "v", unique: true)]))
        }
        for k in Int64(1)...40 {
            try engine.write { tx in try tx.insert([.int(k * k), .string(String(repeating: "s", count: Int(k)))], into: "t", key: k) }
            if k == 25 { try engine.checkpoint() }
        }
        return (dir, engine)
    }

    func copy(_ dir: URL) throws -> URL {
        let target = temporaryDirectory("copy")
        try FileManager.default.removeItem(at: target)
        try FileManager.default.copyItem(at: dir, to: target)
        return target
    }

    /// Opens a damaged store; if it opens, its rows must be exactly commits 1…m for some m, and m is
    /// returned. Returns nil when the open throws `.corruption` or `.unsupportedFormat`.
    func openedCommits(_ dir: URL, recovery: Engine.Recovery = .strict) -> (count: Int64, report: RecoveryReport)? {
        do {
            let engine = try Engine.open(.directory(dir), options: .init(recovery: recovery))
            defer { try? engine.close() }
            let s = engine.read()
            let count = try s.count(in: "t")
            var k: Int64 = 1
            try s.forEachRow(in: "t") { key, row in
                #expect(key == k && row == [.int(k * k), .string(String(repeating: "s", count: Int(k)))])
                k += 1
                return true
            }
            #expect(try s.count(IndexQuery(table: "t", index: "byV")) == count)
            return (Int64(count), engine.recoveryReport)
        } catch let error as StorageError {
            switch error {
            case .corruption, .unsupportedFormat: break
            default: Issue.record("unexpected error kind: \(error)")
            }
            return nil
        } catch {
            Issue.record("non-storage error: \(error)")
            return nil
        }
    }

    /// Opens a damaged store; if it opens, its rows must be exactly commits 1…m with m ≥ `minimum`.
    func checkOpens(_ dir: URL, mustKeepAtLeast minimum: Int64) -> Bool {
        guard let (count, _) = openedCommits(dir) else { return false }
        #expect(count >= minimum, "recovered only \(count) commits, the snapshot alone holds \(minimum)")
        return true
    }

    /// Damage that loses acknowledged commits: a strict open throws, a prefix open keeps exactly a
    /// prefix of at least `minimum` commits and says what it gave up.
    func expectDamage(_ dir: URL, keepingAtLeast minimum: Int64, _ what: String) throws {
        #expect(openedCommits(dir) == nil, "\(what): a strict open succeeded")
        let prefixCopy = try copy(dir)
        guard let (count, report) = openedCommits(prefixCopy, recovery: .keepConsistentPrefix) else {
            Issue.record("\(what): a prefix open failed")
            return
        }
        #expect(count >= minimum && count < 40, "\(what): kept \(count) commits")
        #expect(report.lostCommits != nil, "\(what): the report does not say commits were lost")
        // Once accepted, the store is consistent again: a strict reopen keeps the same prefix.
        #expect(openedCommits(prefixCopy)?.count == count, "\(what): the accepted prefix did not reopen")
    }

    func file(in dir: URL, suffix: String) throws -> URL {
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.path).first { $0.hasSuffix(suffix) })
        return dir.appendingPathComponent(name)
    }

    /// A store closed cleanly records where its log ends: any cut loses acknowledged commits.
    @Test func aTruncatedLogOfAClosedStoreIsDamage() throws {
        let (dir, snapshotted, _) = try makeStore()
        let size = try Data(contentsOf: file(in: dir, suffix: ".wal")).count
        for cut in stride(from: 0, to: size, by: max(1, size / 47)) {
            let damaged = try copy(dir)
            try FileHandle(forWritingTo: try file(in: damaged, suffix: ".wal")).truncate(atOffset: UInt64(cut))
            try expectDamage(damaged, keepingAtLeast: snapshotted, "log cut at \(cut)")
        }
    }

    /// What a crash leaves: the files of a store that was never closed (copied while open, with the
    /// writer's preallocated zeros). A cut there is a torn tail down to the last commit the manifest
    /// recorded as on disk (the checkpoint's).
    @Test func aTruncatedLogOfACrashedStoreRecoversAPrefix() throws {
        let (dir, snapshotted) = try makeCrashedStore()
        let original = try Data(contentsOf: file(in: dir, suffix: ".wal"))
        let frames = try frameOffsets(original)
        // The background thread may have recorded later commits as on disk before the copy was made.
        let recorded = try recordedDurableRow(dir)
        for cut in stride(from: 0, to: original.count, by: max(1, original.count / 47)) {
            let damaged = try copy(dir)
            try FileHandle(forWritingTo: try file(in: damaged, suffix: ".wal")).truncate(atOffset: UInt64(cut))
            let keptRows = snapshotted + Int64(frames.filter { $0.end <= Int64(cut) }.count)
            if keptRows >= recorded {
                #expect(openedCommits(damaged)?.count == keptRows, "log cut at \(cut)")
            } else {
                try expectDamage(damaged, keepingAtLeast: snapshotted, "log cut at \(cut)")
            }
        }
    }

    /// The last row of `t` the crashed copy's manifest records as on disk (commit k inserts row k − 2).
    func recordedDurableRow(_ dir: URL) throws -> Int64 {
        let manifest = try #require(try StoreManifest.read(in: dir.path).newest)
        return Int64(manifest.durableLSN) - 2
    }

    @Test func flippedLogBytesOfAClosedStoreAreDamage() throws {
        let (dir, snapshotted, _) = try makeStore()
        let original = try Data(contentsOf: file(in: dir, suffix: ".wal"))
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<60 {
            let damaged = try copy(dir)
            let wal = try file(in: damaged, suffix: ".wal")
            var bytes = original
            let offset = Int.random(in: 0..<bytes.count, using: &rng)
            bytes[offset] ^= UInt8.random(in: 1...255, using: &rng)
            try bytes.write(to: wal)
            try expectDamage(damaged, keepingAtLeast: snapshotted, "byte \(offset) flipped")
        }
    }

    /// In a crashed store, a damaged frame followed by a frame that was written after it was synced is
    /// damage; only the last frames, which no later frame vouches for, can be taken for a torn tail
    /// (unless the manifest recorded them while the store was idle).
    @Test func flippedLogBytesOfACrashedStoreAreDamageUnlessInTheLastFrame() throws {
        let (dir, snapshotted) = try makeCrashedStore()
        let original = try Data(contentsOf: file(in: dir, suffix: ".wal"))
        let frames = try frameOffsets(original)
        #expect(frames.count == 15)
        var rng = SystemRandomNumberGenerator()
        for (i, frame) in frames.enumerated() {
            let damaged = try copy(dir)
            var bytes = original
            let offset = Int.random(in: Int(frame.start)..<Int(frame.end), using: &rng)
            bytes[offset] ^= UInt8.random(in: 1...255, using: &rng)
            try bytes.write(to: try file(in: damaged, suffix: ".wal"))
            if i == frames.count - 1, try recordedDurableRow(dir) < 40 {
                #expect(openedCommits(damaged)?.count == 39, "the last frame damaged at \(offset)")
            } else {
                try expectDamage(damaged, keepingAtLeast: snapshotted, "frame \(i) damaged at \(offset)")
            }
        }
    }

    /// Where each frame of a (version 2) segment starts and ends.
    func frameOffsets(_ bytes: Data) throws -> [(start: Int64, end: Int64)] {
        var result: [(start: Int64, end: Int64)] = []
        let scan = try Array(bytes).withUnsafeBytes { raw in
            try LogReader.scan(bytes: raw, path: "wal", expectedBaseLSN: nil) { _, payload in
                let end = Int64(payload.baseAddress! - raw.baseAddress!) + Int64(payload.count)
                result.append((end - Int64(payload.count) - 24, end))
            }
        }
        #expect(scan.stop == .cleanEnd)
        return result
    }

    /// A store that was idle for a moment before it was killed has its last commits in the manifest:
    /// damage to the newest frame is then damage too.
    @Test func theLastFramesOfAStoreKilledWhileIdleAreProtected() throws {
        let dir = temporaryDirectory()
        let engine = try Engine.open(.directory(dir))
        try engine.write { tx in try tx.createTable(TableSchema(name: "t", columns: [Column("v", .int), Column("s", .string)],
                                                                indexes: [IndexDefinition(name: "byV", on: "v", unique: true)])) }
        for k in Int64(1)...10 {
            try engine.write { tx in try tx.insert([.int(k * k), .string(String(repeating: "s", count: Int(k)))], into: "t", key: k) }
        }
        let deadline = Date().addingTimeInterval(10)
        while try StoreManifest.read(in: dir.path).newest!.durableLSN < 12 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let crashed = try copy(dir)
        try engine.close()
        #expect(try recordedDurableRow(crashed) == 10)
        let wal = try file(in: crashed, suffix: ".wal")
        var bytes = try Data(contentsOf: wal)
        let last = try #require(try frameOffsets(bytes).last)
        bytes[Int(last.start) + 30] ^= 0x55
        try bytes.write(to: wal)
        #expect(openedCommits(crashed) == nil)
        #expect(openedCommits(crashed, recovery: .keepConsistentPrefix)?.count == 9)
    }

    @Test func aMissingNewestSegmentIsDamage() throws {
        let (dir, snapshotted, _) = try makeStore()
        try FileManager.default.removeItem(at: try file(in: dir, suffix: ".wal"))
        try expectDamage(dir, keepingAtLeast: snapshotted, "newest segment removed")
    }

    @Test func aRenamedSegmentIsDamage() throws {
        let (dir, snapshotted, _) = try makeStore()
        let wal = try file(in: dir, suffix: ".wal")
        for newName in ["log-0000000000000030.wal", "log-000000000000001a.wal.bak", "renamed"] {
            let damaged = try copy(dir)
            try FileManager.default.moveItem(at: damaged.appendingPathComponent(wal.lastPathComponent),
                                             to: damaged.appendingPathComponent(newName))
            try expectDamage(damaged, keepingAtLeast: snapshotted, "segment renamed to \(newName)")
        }
    }

    @Test func aMissingSnapshotIsDamage() throws {
        let (dir, _, _) = try makeStore()
        try FileManager.default.removeItem(at: try file(in: dir, suffix: ".snap"))
        #expect(openedCommits(dir) == nil)
        #expect(openedCommits(dir, recovery: .keepConsistentPrefix) == nil)
    }

    /// An old segment put back in place of the newest (a restore from a stale backup of one file).
    @Test func aStaleSegmentInPlaceOfTheNewestIsDamage() throws {
        let dir = temporaryDirectory()
        let engine = try Engine.open(.directory(dir))
        try engine.write { tx in try tx.createTable(TableSchema(name: "t", columns: [Column("v", .int)])) }
        for k in Int64(1)...10 { try engine.write { tx in try tx.insert([.int(k)], into: "t", key: k) } }
        let wal = try file(in: dir, suffix: ".wal")
        let stale = try Data(contentsOf: wal)
        for k in Int64(11)...20 { try engine.write { tx in try tx.insert([.int(k)], into: "t", key: k) } }
        try engine.close()
        try stale.write(to: wal)
        #expect(throws: StorageError.self) { _ = try Engine.open(.directory(dir)) }
    }

    @Test func oneLostOrDamagedManifestCopyIsSurvivedAndReported() throws {
        let (dir, _, total) = try makeStore()
        for (i, name) in StoreManifest.fileNames.enumerated() {
            let damaged = try copy(dir)
            let path = damaged.appendingPathComponent(name)
            if i == 0 {
                try FileManager.default.removeItem(at: path)
            } else {
                try Data(repeating: 0x5A, count: 64).write(to: path)
            }
            let opened = try #require(openedCommits(damaged))
            #expect(opened.count == total)
            #expect(opened.report.manifestProblems.count == 1, "\(opened.report.manifestProblems)")
        }
        // Both gone: the log says this store wrote them, so what was acknowledged is unknown.
        let damaged = try copy(dir)
        for name in StoreManifest.fileNames { try FileManager.default.removeItem(at: damaged.appendingPathComponent(name)) }
        #expect(openedCommits(damaged) == nil)
    }

    @Test func aPrefixOpenKeepsTheDamagedSegmentsAside() throws {
        let (dir, snapshotted, _) = try makeStore()
        let wal = try file(in: dir, suffix: ".wal")
        var bytes = try Data(contentsOf: wal)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: wal)
        let (count, report) = try #require(openedCommits(dir, recovery: .keepConsistentPrefix))
        #expect(count >= snapshotted && count < 40)
        let lost = try #require(report.lostCommits)
        #expect(lost.afterLSN > 0 && lost.file == wal.lastPathComponent && lost.quarantinedFiles == [wal.lastPathComponent + ".damaged"])
        #expect(try Data(contentsOf: dir.appendingPathComponent(lost.quarantinedFiles[0])) == bytes)
    }

    @Test func damagedSnapshotThrowsCorruption() throws {
        let (dir, _, _) = try makeStore()
        let original = try Data(contentsOf: file(in: dir, suffix: ".snap"))
        var rng = SystemRandomNumberGenerator()
        for trial in 0..<120 {
            let damaged = try copy(dir)
            let snap = try file(in: damaged, suffix: ".snap")
            var bytes = original
            if trial % 3 == 0 {
                bytes = bytes.prefix(Int.random(in: 0..<bytes.count, using: &rng))
            } else {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            }
            try bytes.write(to: snap)
            #expect(!checkOpens(damaged, mustKeepAtLeast: 0), "a damaged snapshot opened (trial \(trial))")
        }
    }
}
