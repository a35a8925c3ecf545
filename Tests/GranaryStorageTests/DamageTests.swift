import Foundation
import Testing
@testable import GranaryStorage

/// Damages real store files (truncation, flipped bytes) and checks that opening either recovers a
/// consistent committed prefix or throws a clear error: never a crash, a hang, or wrong rows.
@Suite struct DamageTests {
    /// A store whose commit k inserts row k with value k*k; some commits are in the snapshot, the rest in the log.
    func makeStore() throws -> (URL, snapshotted: Int64, total: Int64) {
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
        try engine.close()
        return (dir, 25, 40)
    }

    func copy(_ dir: URL) throws -> URL {
        let target = temporaryDirectory("copy")
        try FileManager.default.removeItem(at: target)
        try FileManager.default.copyItem(at: dir, to: target)
        return target
    }

    /// Opens a damaged store; if it opens, its rows must be exactly commits 1…m for some m.
    func checkOpens(_ dir: URL, mustKeepAtLeast minimum: Int64) -> Bool {
        do {
            let engine = try Engine.open(.directory(dir))
            defer { try? engine.close() }
            let s = engine.read()
            let count = try s.count(in: "t")
            #expect(Int64(count) >= minimum, "recovered only \(count) commits, the snapshot alone holds \(minimum)")
            var k: Int64 = 1
            try s.forEachRow(in: "t") { key, row in
                #expect(key == k && row == [.int(k * k), .string(String(repeating: "s", count: Int(k)))])
                k += 1
                return true
            }
            #expect(try s.count(IndexQuery(table: "t", index: "byV")) == count)
            return true
        } catch let error as StorageError {
            switch error {
            case .corruption, .unsupportedFormat: break
            default: Issue.record("unexpected error kind: \(error)")
            }
            return false
        } catch {
            Issue.record("non-storage error: \(error)")
            return false
        }
    }

    func file(in dir: URL, suffix: String) throws -> URL {
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.path).first { $0.hasSuffix(suffix) })
        return dir.appendingPathComponent(name)
    }

    @Test func truncatedLogRecoversAPrefix() throws {
        let (dir, snapshotted, _) = try makeStore()
        let size = try Data(contentsOf: file(in: dir, suffix: ".wal")).count
        for cut in stride(from: 0, to: size, by: max(1, size / 97)) {
            let damaged = try copy(dir)
            let wal = try file(in: damaged, suffix: ".wal")
            try FileHandle(forWritingTo: wal).truncate(atOffset: UInt64(cut))
            // Truncation is what a crash does: it must always open, with at least the snapshot's commits.
            #expect(checkOpens(damaged, mustKeepAtLeast: snapshotted), "log cut at \(cut) did not open")
        }
    }

    @Test func flippedLogBytesRecoverAPrefixOrThrow() throws {
        let (dir, snapshotted, _) = try makeStore()
        let original = try Data(contentsOf: file(in: dir, suffix: ".wal"))
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<120 {
            let damaged = try copy(dir)
            let wal = try file(in: damaged, suffix: ".wal")
            var bytes = original
            let offset = Int.random(in: 0..<bytes.count, using: &rng)
            bytes[offset] ^= UInt8.random(in: 1...255, using: &rng)
            try bytes.write(to: wal)
            _ = checkOpens(damaged, mustKeepAtLeast: offset < 24 ? 0 : snapshotted)
        }
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
