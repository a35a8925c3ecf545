import Foundation
import Testing
@testable import GranaryStorage

@Suite struct LogFrameTests {
    struct Frame: Equatable {
        var lsn: UInt64
        var payload: [UInt8]
    }

    /// Every good frame of the segment, with the scan result.
    static func scanAll(_ path: String, expectedBaseLSN: UInt64? = nil) throws -> ([Frame], LogScan) {
        var frames: [Frame] = []
        let scan = try LogReader.scan(path: path, expectedBaseLSN: expectedBaseLSN) { lsn, payload in
            frames.append(Frame(lsn: lsn, payload: Array(payload)))
        }
        return (frames, scan)
    }

    /// Writes a segment with `payloads` and returns the frames and the offset where each frame ends.
    static func writeSegment(_ path: String, baseLSN: UInt64, _ payloads: [[UInt8]]) throws -> ([Frame], [Int64]) {
        let writer = try LogWriter.create(path: path, baseLSN: baseLSN)
        defer { writer.close() }
        var frames: [Frame] = []
        var ends: [Int64] = []
        for payload in payloads {
            frames.append(Frame(lsn: try writer.append(payload: payload), payload: payload))
            ends.append(writer.endOffset)
        }
        try writer.sync()
        // Cut the preallocated zeros off, so that the file is exactly its frames.
        try writer.trimPreallocation()
        return (frames, ends)
    }

    static let smallPayloads: [[UInt8]] = [[], Array("a".utf8), Array("seventeen bytes!!".utf8), [0], Array(repeating: 0xAB, count: 40)]

    @Test func framesRoundTripForManyPayloadSizes() throws {
        try withTemporaryDirectory { dir in
            var rng = SeededGenerator(seed: 10)
            let sizes = [0, 1, 2, 7, 8, 15, 16, 17, 255, 256, 4095, 4096, 4097, 65_536, 1 << 20, 3]
            let path = dir + "/seg"
            let (written, ends) = try Self.writeSegment(path, baseLSN: 42, sizes.map { rng.bytes($0) })
            #expect(written.map(\.lsn) == Array(42..<42 + UInt64(sizes.count)))
            let (frames, scan) = try Self.scanAll(path, expectedBaseLSN: 42)
            #expect(frames == written)
            #expect(scan == LogScan(baseLSN: 42, lastLSN: 42 + UInt64(sizes.count) - 1, validEnd: ends.last!,
                                    fileSize: ends.last!, stop: .cleanEnd))
        }
    }

    @Test func emptySegmentEndsCleanlyWithNoFrames() throws {
        try withTemporaryDirectory { dir in
            _ = try Self.writeSegment(dir + "/seg", baseLSN: 7, [])
            let (frames, scan) = try Self.scanAll(dir + "/seg")
            #expect(frames.isEmpty)
            #expect(scan == LogScan(baseLSN: 7, lastLSN: nil, validEnd: 24, fileSize: 24, stop: .cleanEnd))
        }
    }

    @Test func truncationAtEveryOffsetKeepsExactlyTheCompleteFrames() throws {
        try withTemporaryDirectory { dir in
            let original = dir + "/seg"
            let (written, ends) = try Self.writeSegment(original, baseLSN: 100, Self.smallPayloads)
            let bytes = try fileBytes(original)
            let damaged = dir + "/cut"
            for cut in 0...bytes.count {
                try writeFile(damaged, Array(bytes[..<cut]))
                let (frames, scan) = try Self.scanAll(damaged, expectedBaseLSN: 100)
                let complete = ends.filter { $0 <= Int64(cut) }.count
                #expect(frames == Array(written.prefix(complete)), "cut at \(cut)")
                #expect(scan.fileSize == Int64(cut))
                if cut < LogFormat.fileHeaderSize {
                    #expect(scan.validEnd == 0)
                    guard case .tornTail(offset: 0, _) = scan.stop else { Issue.record("cut at \(cut): \(scan.stop)"); continue }
                    continue
                }
                let goodEnd = complete == 0 ? Int64(LogFormat.fileHeaderSize) : ends[complete - 1]
                #expect(scan.validEnd == goodEnd, "cut at \(cut)")
                #expect(scan.lastLSN == frames.last?.lsn)
                if goodEnd == Int64(cut) {
                    #expect(scan.stop == .cleanEnd, "cut at \(cut)")
                } else if case .tornTail(let offset, _) = scan.stop {
                    #expect(offset == goodEnd, "cut at \(cut)")
                } else if scan.stop == .cleanEnd && bytes[Int(goodEnd)..<cut].allSatisfy({ $0 == 0 }) {
                    // A cut frame whose surviving bytes are all zeros looks exactly like preallocated space.
                } else {
                    Issue.record("cut at \(cut): expected a torn tail, got \(scan.stop)")
                }
            }
        }
    }

    @Test func everySingleBitFlipYieldsTheFramesBeforeItAndNeverAWrongPayload() throws {
        try withTemporaryDirectory { dir in
            let (written, ends) = try Self.writeSegment(dir + "/seg", baseLSN: 5, Self.smallPayloads)
            let bytes = try fileBytes(dir + "/seg")
            let damaged = dir + "/flip"
            for offset in 0..<bytes.count {
                for bit in 0..<8 {
                    var copy = bytes
                    copy[offset] ^= 1 << bit
                    try writeFile(damaged, copy)
                    let context = "bit \(bit) of byte \(offset)"
                    if offset < LogFormat.fileHeaderSize {
                        #expect(throws: StorageError.self, Comment(rawValue: context)) { _ = try Self.scanAll(damaged) }
                        continue
                    }
                    let (frames, scan) = try Self.scanAll(damaged)
                    // The damaged frame and everything after it is lost; everything before survives intact.
                    let damagedFrame = ends.firstIndex { Int64(offset) < $0 }!
                    let isExpectedPrefix = frames == Array(written.prefix(damagedFrame))
                    #expect(isExpectedPrefix, "\(context): got \(frames.count) frames, expected the first \(damagedFrame)")
                    let frameStart = damagedFrame == 0 ? Int64(LogFormat.fileHeaderSize) : ends[damagedFrame - 1]
                    #expect(scan.validEnd == frameStart, Comment(rawValue: context))
                    switch scan.stop {
                    case .cleanEnd: Issue.record("\(context): damage went unnoticed")
                    case .tornTail(let at, _), .corrupt(let at, _): #expect(at == frameStart, Comment(rawValue: context))
                    }
                }
            }
        }
    }

    @Test func randomMultiByteDamageNeverCrashesOrDeliversWrongPayloads() throws {
        try withTemporaryDirectory { dir in
            var rng = SeededGenerator(seed: 11)
            let payloads = (0..<30).map { _ in rng.bytes(Int.random(in: 0..<300, using: &rng)) }
            let (written, _) = try Self.writeSegment(dir + "/seg", baseLSN: 1, payloads)
            let bytes = try fileBytes(dir + "/seg")
            for round in 0..<300 {
                var copy = bytes
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    copy[Int.random(in: LogFormat.fileHeaderSize..<copy.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
                if round % 3 == 0 { copy.removeLast(Int.random(in: 0..<copy.count - LogFormat.fileHeaderSize, using: &rng)) }
                try writeFile(dir + "/bad", copy)
                let (frames, _) = try Self.scanAll(dir + "/bad")
                let isPrefix = frames == Array(written.prefix(frames.count))
                #expect(isPrefix, "round \(round): \(frames.count) frames delivered, not all original")
            }
        }
    }

    @Test func lsnGapIsCorruption() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/seg"
            let (written, ends) = try Self.writeSegment(path, baseLSN: 1, [[1], [2], [3]])
            let writer = try LogWriter.openForAppend(path: path, validEnd: ends.last!, nextLSN: 5)
            #expect(try writer.append(payload: [5]) == 5)
            writer.close()
            let (frames, scan) = try Self.scanAll(path)
            #expect(frames == written)
            guard case .corrupt(let offset, let reason) = scan.stop else { Issue.record("\(scan.stop)"); return }
            #expect(offset == ends.last!)
            #expect(reason.contains("LSN 5"))
        }
    }

    @Test func zerosAfterTheLastFrameAreACleanEndButZerosBeforeGarbageAreATornTail() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/seg"
            let (written, ends) = try Self.writeSegment(path, baseLSN: 1, [[1, 2, 3], [4]])
            for zeros: Int64 in [4096, 16, 9] {
                let file = try PosixFile.open(path, mode: .readWrite)
                try file.truncate(to: ends.last! + zeros)
                file.close()
                let (frames, scan) = try Self.scanAll(path)
                #expect(frames == written)
                #expect(scan.validEnd == ends.last!)
                // What the writer's preallocation leaves: a clean end short of the file size.
                #expect(scan.stop == .cleanEnd)
                #expect(scan.fileSize == ends.last! + zeros)
            }
            let file = try PosixFile.open(path, mode: .readWrite)
            try file.write([0x5A], at: ends.last! + 100)
            file.close()
            let (frames, scan) = try Self.scanAll(path)
            #expect(frames == written)
            guard case .tornTail(let offset, _) = scan.stop else { Issue.record("\(scan.stop)"); return }
            #expect(offset == ends.last!)
        }
    }

    @Test func appendsPreallocateZerosAndATrimRemovesThem() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/seg"
            let writer = try LogWriter.create(path: path, baseLSN: 1)
            _ = try writer.append(payload: [1, 2, 3])
            try writer.sync()
            #expect(try PosixFile.size(of: path) == LogWriter.preallocationChunk)
            let (frames, scan) = try Self.scanAll(path)
            #expect(frames.count == 1 && scan.stop == .cleanEnd && scan.validEnd == writer.endOffset)
            try writer.trimPreallocation()
            #expect(try PosixFile.size(of: path) == writer.endOffset)
            writer.close()
        }
    }

    @Test func segmentTornWhileBeingCreatedIsATornTailAtZero() throws {
        try withTemporaryDirectory { dir in
            for bytes in [[], [UInt8](repeating: 0, count: 24), [UInt8](repeating: 0, count: 4096), Array("GRNLOG".utf8)] {
                try writeFile(dir + "/seg", bytes)
                let (frames, scan) = try Self.scanAll(dir + "/seg", expectedBaseLSN: 9)
                #expect(frames.isEmpty)
                #expect(scan.baseLSN == 9 && scan.validEnd == 0 && scan.fileSize == Int64(bytes.count))
                guard case .tornTail(offset: 0, _) = scan.stop else { Issue.record("\(scan.stop)"); continue }
            }
        }
    }

    @Test func badHeadersThrow() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/seg"
            _ = try Self.writeSegment(path, baseLSN: 3, [[1]])
            #expect(throws: StorageError.corruption(file: path, offset: 12, reason: "segment header has base LSN 3 but 4 was expected")) {
                _ = try Self.scanAll(path, expectedBaseLSN: 4)
            }
            var header = ByteWriter()
            header.write(contentsOf: LogFormat.magic)
            header.writeUInt32(3)
            header.writeUInt64(3)
            header.writeUInt32(CRC32C.mask(CRC32C.checksum(header.bytes)))
            try writeFile(path, header.bytes)
            #expect(throws: StorageError.unsupportedFormat(file: path, version: 3)) { _ = try Self.scanAll(path) }
            try writeFile(path, Array("NOTALOG!".utf8) + [UInt8](repeating: 1, count: 16))
            #expect(throws: StorageError.self) { _ = try Self.scanAll(path) }
            #expect(throws: StorageError.io(operation: "open", path: dir + "/missing", errno: ENOENT)) {
                _ = try Self.scanAll(dir + "/missing")
            }
            #expect(throws: StorageError.self) { _ = try LogWriter.create(path: path, baseLSN: 1) }
        }
    }

    @Test func openForAppendAfterATornTailContinuesTheSequence() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/seg"
            var (written, ends) = try Self.writeSegment(path, baseLSN: 50, [[1], [2, 2], [3, 3, 3]])
            let file = try PosixFile.open(path, mode: .readWrite)
            try file.truncate(to: ends.last! - 2)
            file.close()
            written.removeLast()
            let (before, scan) = try Self.scanAll(path)
            #expect(before == written)
            let writer = try LogWriter.openForAppend(path: path, validEnd: scan.validEnd, nextLSN: scan.lastLSN! + 1)
            #expect(writer.baseLSN == 50 && writer.endOffset == scan.validEnd && writer.nextLSN == 52)
            for payload: [UInt8] in [[9], [], [8, 8]] {
                written.append(Frame(lsn: try writer.append(payload: payload), payload: payload))
            }
            try writer.sync()
            try writer.trimPreallocation()
            writer.close()
            let (after, final) = try Self.scanAll(path, expectedBaseLSN: 50)
            #expect(after == written)
            #expect(after.map(\.lsn) == Array(50...54))
            #expect(final.stop == .cleanEnd)
            #expect(throws: StorageError.self) { _ = try LogWriter.openForAppend(path: path, validEnd: 10, nextLSN: 55) }
            #expect(throws: StorageError.self) { _ = try LogWriter.openForAppend(path: path, validEnd: 1 << 20, nextLSN: 55) }
            #expect(throws: StorageError.self) { _ = try LogWriter.openForAppend(path: path, validEnd: 24, nextLSN: 49) }
        }
    }

    @Test func failedSyncPoisonsTheWriter() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/seg"
            let writer = try LogWriter.create(path: path, baseLSN: 1)
            defer { writer.close() }
            _ = try writer.append(payload: [1])
            let token = FaultInjection.add(pathContains: dir, operation: .sync, errno: EIO)
            defer { FaultInjection.remove(token) }
            #expect(throws: StorageError.io(operation: "fdatasync", path: path, errno: EIO)) { try writer.sync() }
            #expect(writer.isPoisoned)
            // The rule fired once; a retried fdatasync would "succeed" on Linux, which is exactly the trap.
            for attempt in [{ _ = try writer.append(payload: [2]) }, { try writer.sync() }] {
                do {
                    try attempt()
                    Issue.record("a poisoned writer accepted a call")
                } catch let StorageError.poisoned(reason) {
                    #expect(reason.contains("fdatasync failed on \(path)"))
                }
            }
            #expect(writer.nextLSN == 2)
        }
    }

    @Test func diskFullDuringAppendTruncatesBackToTheLastGoodFrame() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/seg"
            let writer = try LogWriter.create(path: path, baseLSN: 1)
            defer { writer.close() }
            let good: [[UInt8]] = [[1], [2, 2], [3, 3, 3]]
            for payload in good { _ = try writer.append(payload: payload) }
            let goodEnd = writer.endOffset
            let token = FaultInjection.add(pathContains: dir, operation: .write, errno: ENOSPC, partialBytes: 20)
            defer { FaultInjection.remove(token) }
            do {
                _ = try writer.append(payload: [UInt8](repeating: 4, count: 100))
                Issue.record("the append succeeded")
            } catch {
                #expect(error as? StorageError == .io(operation: "write", path: path, errno: ENOSPC))
                #expect("\(error)".contains("the disk is full"))
            }
            #expect(FaultInjection.fireCount(token) == 1)
            #expect(try PosixFile.open(path, mode: .readOnly).size() == goodEnd)
            #expect(writer.endOffset == goodEnd && writer.nextLSN == 4)
            #expect(throws: StorageError.self) { _ = try writer.append(payload: [5]) }
            try writer.sync()  // the file ends at a good frame, so syncing it is still meaningful
            let (frames, scan) = try Self.scanAll(path)
            #expect(frames.map(\.payload) == good)
            #expect(scan.stop == .cleanEnd)
        }
    }

    @Test func syncMayRunConcurrentlyWithAppends() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let path = dir + "/seg"
            let writer = try LogWriter.create(path: path, baseLSN: 1)
            let syncer = Task.detached {
                for _ in 0..<50 { try writer.sync() }
            }
            for i in 0..<2000 { _ = try writer.append(payload: Array(repeating: UInt8(i & 0xFF), count: i % 50)) }
            try await syncer.value
            try writer.sync()
            writer.close()
            #expect(throws: StorageError.closed) { _ = try writer.append(payload: []) }
            #expect(throws: StorageError.closed) { try writer.sync() }
            #expect(!writer.isPoisoned, "closing is not a failure")
            let (frames, scan) = try Self.scanAll(path)
            #expect(frames.count == 2000 && scan.stop == .cleanEnd)
        }
    }
}
