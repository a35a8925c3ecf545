import Foundation
import Synchronization
import Testing
@testable import GranaryStorage

@Suite struct SnapshotFileTests {
    /// Text-like records that LZ4 compresses, of varied sizes including empty.
    static func compressibleRecords(_ count: Int, seed: UInt64) -> [[UInt8]] {
        var rng = SeededGenerator(seed: seed)
        return (0..<count).map { i in
            let size = i % 97 == 0 ? 0 : Int.random(in: 1..<600, using: &rng)
            return Array("row \(i) name=granary-\(i % 13) value=\(i * 7) ".utf8.prefix(size))
                + [UInt8](repeating: UInt8(i % 5), count: max(0, size - 40))
        }
    }

    static func write(_ records: [[UInt8]], to finalPath: String, lsn: UInt64) throws {
        let writer = try SnapshotWriter.create(temporaryPath: finalPath + ".tmp", lsn: lsn)
        for record in records { try writer.append(record: record) }
        try writer.finish(finalPath: finalPath)
    }

    static func readAll(_ path: String) throws -> (lsn: UInt64, records: [[UInt8]]) {
        var records: [[UInt8]] = []
        let result = try SnapshotReader.read(path: path) { records.append(Array($0)) }
        #expect(result.records == records.count)
        return (result.lsn, records)
    }

    @Test func manyRecordsRoundTripAcrossCompressedBlocks() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/snap"
            let records = Self.compressibleRecords(5000, seed: 20)
            try Self.write(records, to: path, lsn: 1234)
            let (lsn, read) = try Self.readAll(path)
            #expect(lsn == 1234)
            #expect(read.count == records.count && read == records)
            #expect(try SnapshotReader.readHeader(path: path) == 1234)
            #expect(!PosixFile.exists(path + ".tmp"))
            let contents = try SnapshotContents.load(path: path)
            #expect(contents.blocks.count > 1)
            #expect(contents.blocks.allSatisfy { $0.isCompressed && $0.rawLength <= SnapshotFormat.targetBlockSize })
            #expect(contents.recordCount == 5000)
            #expect(try fileBytes(path).count < contents.totalRawBytes / 2)
        }
    }

    @Test func recordsLargerThanABlockGetBlocksOfTheirOwn() throws {
        try withTemporaryDirectory { dir in
            var rng = SeededGenerator(seed: 21)
            let path = dir + "/snap"
            let records: [[UInt8]] = [
                [1, 2, 3], rng.bytes(300_000), [], rng.bytes(1 << 20),
                [UInt8](repeating: 7, count: 600_000), rng.bytes(SnapshotFormat.targetBlockSize - 3), [4],
            ]
            try Self.write(records, to: path, lsn: 1)
            #expect(try Self.readAll(path).records == records)
            let contents = try SnapshotContents.load(path: path)
            #expect(contents.blocks.count == 7)
            #expect(contents.blocks.contains { !$0.isCompressed }, "random bytes are stored uncompressed")
            for index in contents.blocks.indices {
                #expect(try contents.forEachRecord(inBlock: index) { _ in } == 1)
            }
        }
    }

    @Test func emptySnapshotRoundTrips() throws {
        try withTemporaryDirectory { dir in
            try Self.write([], to: dir + "/snap", lsn: 77)
            let (lsn, records) = try Self.readAll(dir + "/snap")
            #expect(lsn == 77 && records.isEmpty)
            #expect(try fileBytes(dir + "/snap").count == SnapshotFormat.headerSize + SnapshotFormat.footerSize)
        }
    }

    @Test func blocksDecodeIndependentlyInParallel() throws {
        try withTemporaryDirectory { dir in
            let records = Self.compressibleRecords(3000, seed: 22)
            try Self.write(records, to: dir + "/snap", lsn: 5)
            let contents = try SnapshotContents.load(path: dir + "/snap")
            let decoded = Mutex<[Int: [[UInt8]]]>([:])
            DispatchQueue.concurrentPerform(iterations: contents.blocks.count) { index in
                var blockRecords: [[UInt8]] = []
                _ = try? contents.forEachRecord(inBlock: index) { blockRecords.append(Array($0)) }
                decoded.withLock { $0[index] = blockRecords }
            }
            let all = decoded.withLock { d in contents.blocks.indices.flatMap { d[$0] ?? [] } }
            #expect(all == records)
        }
    }

    /// Reads a damaged snapshot and checks it throws, without delivering any record that is not the
    /// original one at that position.
    static func expectDamageDetected(_ path: String, original: [[UInt8]], _ context: String) {
        var delivered: [[UInt8]] = []
        do {
            try SnapshotReader.read(path: path) { delivered.append(Array($0)) }
            Issue.record("\(context): damage went unnoticed")
        } catch let error as StorageError {
            switch error {
            case .corruption(let file, _, _): #expect(file == path, Comment(rawValue: context))
            case .unsupportedFormat: break
            default: Issue.record("\(context): unexpected \(error)")
            }
        } catch {
            Issue.record("\(context): non-storage error \(error)")
        }
        let isPrefix = delivered.count <= original.count && delivered == Array(original.prefix(delivered.count))
        #expect(isPrefix, "\(context): \(delivered.count) delivered records are not the original ones")
    }

    @Test func truncationAnywhereIsDetected() throws {
        try withTemporaryDirectory { dir in
            var rng = SeededGenerator(seed: 23)
            var records = Self.compressibleRecords(2000, seed: 24)
            records.append(rng.bytes(5000))
            let path = dir + "/snap"
            try Self.write(records, to: path, lsn: 9)
            let bytes = try fileBytes(path)
            var cuts = Set((0..<200).map { _ in Int.random(in: 0..<bytes.count, using: &rng) })
            cuts.formUnion(0..<80)
            cuts.formUnion(bytes.count - 80..<bytes.count)
            for cut in cuts.sorted() {
                try writeFile(dir + "/cut", Array(bytes[..<cut]))
                Self.expectDamageDetected(dir + "/cut", original: records, "cut at \(cut)")
            }
        }
    }

    @Test func bitFlipsAreDetected() throws {
        try withTemporaryDirectory { dir in
            var rng = SeededGenerator(seed: 25)
            var records = Self.compressibleRecords(1500, seed: 26)
            records.insert(rng.bytes(3000), at: 700)
            let path = dir + "/snap"
            try Self.write(records, to: path, lsn: 9)
            let bytes = try fileBytes(path)
            let blocks = try SnapshotContents.load(path: path).blocks
            // Every byte of the header, footer and block headers, plus random bytes anywhere.
            var offsets = Set(0..<SnapshotFormat.headerSize)
            offsets.formUnion(bytes.count - SnapshotFormat.footerSize..<bytes.count)
            for block in blocks { offsets.formUnion(Int(block.offset)..<Int(block.storedOffset) + 2) }
            offsets.formUnion((0..<300).map { _ in Int.random(in: 0..<bytes.count, using: &rng) })
            for offset in offsets.sorted() {
                var copy = bytes
                copy[offset] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
                try writeFile(dir + "/flip", copy)
                Self.expectDamageDetected(dir + "/flip", original: records, "flip in byte \(offset)")
            }
        }
    }

    @Test func failedFinishLeavesTheTemporaryFileAndNoFinalFile() throws {
        try withTemporaryDirectory { dir in
            for operation in [FaultInjection.Operation.sync, .rename, .write] {
                let finalPath = dir + "/snap-\(operation)"
                let writer = try SnapshotWriter.create(temporaryPath: finalPath + ".tmp", lsn: 3)
                for record in Self.compressibleRecords(100, seed: 27) { try writer.append(record: record) }
                let token = FaultInjection.add(pathContains: dir, operation: operation, errno: EIO)
                #expect(throws: StorageError.self, "\(operation)") { try writer.finish(finalPath: finalPath) }
                FaultInjection.remove(token)
                #expect(PosixFile.exists(finalPath + ".tmp"), "\(operation)")
                #expect(!PosixFile.exists(finalPath), "\(operation)")
                #expect(throws: StorageError.self, "the writer stays failed") { try writer.finish(finalPath: finalPath) }
                #expect(!PosixFile.exists(finalPath))
                try writer.abandon()
                #expect(!PosixFile.exists(finalPath + ".tmp"))
            }
        }
    }

    @Test func aNewSnapshotReplacesALeftoverTemporaryFileAndAnOlderSnapshot() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/snap"
            try writeFile(path + ".tmp", [UInt8](repeating: 0xEE, count: 10_000))
            try Self.write([[1]], to: path, lsn: 1)
            try Self.write([[2], [3]], to: path, lsn: 2)
            let (lsn, records) = try Self.readAll(path)
            #expect(lsn == 2 && records == [[2], [3]])
        }
    }

    @Test func lz4RejectsMalformedInput() throws {
        let raw = Array(String(repeating: "granary ", count: 500).utf8)
        let compressed = LZ4.compress(raw)
        #expect(compressed.count < raw.count)
        #expect(try compressed.withUnsafeBytes { try LZ4.decompress($0, rawSize: raw.count, context: "x", offset: 0) } == raw)
        #expect(throws: StorageError.corruption(file: "x", offset: 7, reason: "LZ4 block expands to 4000 bytes, not 4001")) {
            try compressed.withUnsafeBytes { try LZ4.decompress($0, rawSize: raw.count + 1, context: "x", offset: 7) }
        }
        #expect(throws: StorageError.self) {
            try compressed.withUnsafeBytes { try LZ4.decompress($0, rawSize: raw.count - 1, context: "x", offset: 7) }
        }
        #expect(throws: StorageError.self) {
            try Array(compressed.dropLast(3)).withUnsafeBytes { try LZ4.decompress($0, rawSize: raw.count, context: "x", offset: 7) }
        }
        #expect(try LZ4.compress([]).withUnsafeBytes { try LZ4.decompress($0, rawSize: 0, context: "x", offset: 0) } == [])
    }
}
