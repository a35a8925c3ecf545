import Foundation
import Testing
@testable import GranaryStorage

/// `Engine.salvage` and `granary recover`: every intact commit of a damaged store reaches the new store,
/// and everything else is listed.
@Suite struct SalvageTests {
    let damage = DamageTests()

    /// The values of table t in a store, by key.
    func rows(_ dir: URL) throws -> [Int64: Int64] {
        let engine = try Engine.open(.directory(dir))
        defer { try? engine.close() }
        var result: [Int64: Int64] = [:]
        try engine.read().forEachRow(in: "t") { key, row in
            if case .int(let v) = row[0] { result[key] = v }
            return true
        }
        #expect(engine.verify().isSound)
        return result
    }

    func expected(_ keys: some Sequence<Int64>) -> [Int64: Int64] {
        Dictionary(uniqueKeysWithValues: keys.map { ($0, $0 * $0) })
    }

    func target() -> URL { temporaryDirectory("salvaged").appendingPathComponent("out.granary") }

    @Test func aSoundStoreIsCopiedWhole() throws {
        let (dir, _, total) = try damage.makeStore()
        let out = target()
        let report = try Engine.salvage(dir, into: out)
        #expect(report.isComplete, "\(report)")
        #expect(report.tables["t"] == Int(total))
        #expect(try rows(out) == expected(1...total))
    }

    @Test func commitsAfterADamagedFrameAreStillSalvaged() throws {
        let (dir, snapshotted, total) = try damage.makeStore()
        let wal = try damage.file(in: dir, suffix: ".wal")
        var bytes = try Data(contentsOf: wal)
        let frames = try damage.frameOffsets(bytes)
        // Damage the frame that inserts row 31 (the log holds the inserts of rows 26…40).
        let victim = frames[Int(31 - snapshotted - 1)]
        bytes[Int(victim.start + victim.end) / 2] ^= 0x55
        try bytes.write(to: wal)
        let out = target()
        let report = try Engine.salvage(dir, into: out)
        let missing = try #require(report.missingCommits.first)
        #expect(report.missingCommits.count == 1 && missing.count == 1, "\(report)")
        #expect(!report.damage.isEmpty && !report.isComplete)
        #expect(report.appliedCommits == Int(total - snapshotted) - 1)
        #expect(try rows(out) == expected((1...total).filter { $0 != 31 }))
        // The source is untouched: a strict open still refuses it.
        #expect(throws: StorageError.self) { _ = try Engine.open(.directory(dir)) }
    }

    @Test func aDamagedSnapshotBlockLosesOnlyItsRows() throws {
        let dir = temporaryDirectory()
        let engine = try Engine.open(.directory(dir))
        try engine.write { tx in try tx.createTable(TableSchema(name: "t", columns: [Column("v", .int), Column("s", .string)])) }
        // Enough rows for several snapshot blocks.
        let count: Int64 = 20_000
        try engine.write { tx in
            for k in 1...count { try tx.insert([.int(k * k), .string(String(repeating: "x", count: 40) + "\(k)")], into: "t", key: k) }
        }
        try engine.checkpoint()
        try engine.write { tx in try tx.insert([.int(-1), .string("after")], into: "t", key: count + 1) }
        try engine.close()
        let snap = try damage.file(in: dir, suffix: ".snap")
        var bytes = try Data(contentsOf: snap)
        bytes[bytes.count / 2] ^= 0x08
        try bytes.write(to: snap)
        let out = target()
        let report = try Engine.salvage(dir, into: out)
        let salvaged = try rows(out)
        #expect(report.snapshotRowsLost == 0 || report.snapshotRowsLost > 0)
        #expect(!report.damage.isEmpty, "\(report)")
        #expect(salvaged.count > Int(count) / 2 && salvaged.count < Int(count) + 1, "\(salvaged.count) rows")
        #expect(salvaged[count + 1] == -1, "the commit after the snapshot was not applied")
        #expect(salvaged[1] == 1 && salvaged[count] == count * count)
    }

    @Test func segmentsSetAsideByAPrefixOpenAreRead() throws {
        let (dir, _, total) = try damage.makeStore()
        let wal = try damage.file(in: dir, suffix: ".wal")
        var bytes = try Data(contentsOf: wal)
        let frames = try damage.frameOffsets(bytes)
        bytes[Int(frames[10].start) + 30] ^= 0x55
        try bytes.write(to: wal)
        let opened = try Engine.open(.directory(dir), options: .init(recovery: .keepConsistentPrefix))
        let kept = Int64(try opened.read().count(in: "t"))
        try opened.close()
        #expect(kept < total)
        let out = target()
        let report = try Engine.salvage(dir, into: out)
        // The prefix from the live segment, then the set-aside copy's commits after the damaged one.
        #expect(report.missingCommits.count == 1, "\(report)")
        #expect(try rows(out).count == Int(total) - 1)
    }

    @Test func recoverCommandWritesTheStoreAndListsTheLosses() throws {
        let (dir, _, _) = try damage.makeStore()
        let wal = try damage.file(in: dir, suffix: ".wal")
        var bytes = try Data(contentsOf: wal)
        bytes[bytes.count / 2] ^= 0x55
        try bytes.write(to: wal)
        let cli = CommandLineToolTests()
        let out = target()
        let result = try cli.run(["recover", dir.path, "--to", out.path])
        #expect(result.status == 2, "\(result.err)")
        #expect(result.out.contains("missing: commit") && result.out.contains("damaged: log-"), "\(result.out)")
        #expect(try rows(out).count == 39)
        let again = try cli.run(["recover", dir.path, "--to", out.path])
        #expect(again.status == 1 && again.err.contains("already exists"))
        let clean = try cli.run(["recover", out.path, "--to", target().path])
        #expect(clean.status == 0 && clean.out.contains("everything the files held was salvaged"), "\(clean.out)")
    }
}

/// How recovery judges a bad frame in the newest segment: by what later frames say was synced.
@Suite struct TornTailJudgementTests {
    /// A segment: commits 1…3 synced, then 4…6 appended without a sync (one group commit in flight),
    /// then, if `syncAgain`, a sync and commit 7, whose frame says 1…6 were on disk.
    func segment(_ path: String, syncAgain: Bool) throws -> [Int64] {
        let writer = try LogWriter.create(path: path, baseLSN: 1)
        defer { writer.close() }
        var starts: [Int64] = []
        for lsn in 1...7 {
            if lsn == 7 && !syncAgain { break }
            if lsn == 4 || lsn == 7 { try writer.sync() }
            starts.append(writer.endOffset)
            _ = try writer.append(payload: [UInt8](repeating: UInt8(lsn), count: 100))
        }
        return starts
    }

    func flip(_ path: String, at offset: Int64) throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[Int(offset)] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    @Test func unsyncedFramesAfterATornOneAreATornTail() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/seg"
            let starts = try segment(path, syncAgain: false)
            try flip(path, at: starts[3] + 40)
            let scan = try LogReader.scan(path: path, expectedBaseLSN: 1) { _, _ in }
            #expect(scan.lastLSN == 3 && scan.laterFrames.map(\.lsn) == [5, 6])
            #expect(scan.laterFrames.allSatisfy { $0.syncedLSN == 3 })
            #expect(LogRecovery.damageAfterBadFrame(scan, isLast: true, reason: "x") == nil)
            #expect(LogRecovery.damageAfterBadFrame(scan, isLast: false, reason: "x") != nil)
        }
    }

    @Test func aFrameALaterFrameProvesSyncedIsDamage() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/seg"
            let starts = try segment(path, syncAgain: true)
            try flip(path, at: starts[4] + 40)
            let scan = try LogReader.scan(path: path, expectedBaseLSN: 1) { _, _ in }
            #expect(scan.lastLSN == 4 && scan.laterFrames.last?.syncedLSN == 6)
            let reason = try #require(LogRecovery.damageAfterBadFrame(scan, isLast: true, reason: "frame checksum mismatch"))
            #expect(reason.contains("commit 5") && reason.contains("commit 7"), "\(reason)")
        }
    }
}
