/// What `LogReader.scan` found in a segment.
struct LogScan: Sendable, Equatable {
    /// Why the scan stopped.
    enum StopReason: Sendable, Equatable {
        /// The last frame ends at the end of the file, or is followed only by zeros (space the writer
        /// preallocated); `validEnd` is then less than `fileSize`.
        case cleanEnd
        /// The file ends inside a frame, or with zeros: a crash during an append (or during creation,
        /// at offset 0). Harmless in the last segment when nothing later proves the frame was synced.
        case tornTail(offset: Int64, reason: String)
        /// A frame that is complete but wrong (checksum, LSN, length). In the last segment it may still
        /// be a torn write the disk reordered; in an earlier segment it means lost data.
        case corrupt(offset: Int64, reason: String)
    }

    /// An intact frame found after the point where the scan stopped.
    struct LaterFrame: Sendable, Equatable {
        var offset: Int64
        var lsn: UInt64
        /// The newest commit that was on disk when this frame was written (version 2 segments).
        var syncedLSN: UInt64?
    }

    /// The header's base LSN; for a segment torn at offset 0 (no header), the expected base LSN or 0.
    var baseLSN: UInt64
    /// The LSN of the last good frame, `nil` when there is none.
    var lastLSN: UInt64?
    /// The offset just past the last good frame (0 when even the header is torn).
    var validEnd: Int64
    var fileSize: Int64
    var stop: StopReason
    /// The segment's format version (0 when its header is torn).
    var version: UInt32 = LogFormat.version
    /// Intact frames after a torn or corrupt stop, found by searching the rest of the file. A crash
    /// leaves intact frames after a torn one only when none of them was synced; anything else is damage.
    var laterFrames: [LaterFrame] = []

    /// The LSN the first bad frame should have had.
    var firstMissingLSN: UInt64 { lastLSN.map { $0 + 1 } ?? baseLSN }

    /// The newest commit that frames after the stop say was on disk, if any says so.
    var laterSyncedLSN: UInt64? { laterFrames.compactMap(\.syncedLSN).max() }
}

/// Reads the frames of a write-ahead-log segment without modifying the file.
enum LogReader {
    /// Calls `body` with every good frame of the segment at `path`, in order, and reports where and why
    /// reading stopped.
    ///
    /// The file is read with one `pread`; payloads passed to `body` point into that buffer and are valid
    /// only during the call. No length is trusted before it is checked against the file size.
    /// - Parameter expectedBaseLSN: when given, a header with another base LSN is corruption (a segment
    ///   from another sequence, or a misnamed file).
    /// - Throws: `.corruption` for a bad header magic or checksum or an unexpected base LSN,
    ///   `.unsupportedFormat` for an unknown version, `.io` when the file cannot be read, and whatever
    ///   `body` throws.
    /// - Parameter stopBefore: when given, the scan stops (as `.corrupt`) at the frame with this LSN
    ///   without reading it: recovery's way to keep a prefix that ends before a commit it cannot replay.
    static func scan(
        path: String, expectedBaseLSN: UInt64?, stopBefore: UInt64? = nil,
        _ body: (_ lsn: UInt64, _ payload: UnsafeRawBufferPointer) throws -> Void
    ) throws -> LogScan {
        let file = try PosixFile.open(path, mode: .readOnly)
        defer { file.close() }
        let bytes = try file.readAll()
        return try bytes.withUnsafeBytes {
            try scan(bytes: $0, path: path, expectedBaseLSN: expectedBaseLSN, stopBefore: stopBefore, body)
        }
    }

    /// `scan(path:expectedBaseLSN:_:)` over bytes already in memory.
    /// - Throws: as `scan(path:expectedBaseLSN:_:)`.
    static func scan(
        bytes: UnsafeRawBufferPointer, path: String, expectedBaseLSN: UInt64?, stopBefore: UInt64? = nil,
        _ body: (_ lsn: UInt64, _ payload: UnsafeRawBufferPointer) throws -> Void
    ) throws -> LogScan {
        let fileSize = Int64(bytes.count)
        let headerSize = LogFormat.fileHeaderSize
        if bytes.count < headerSize || isZero(bytes[0..<headerSize]) {
            let reason = bytes.count < headerSize
                ? "the file is shorter than the \(headerSize)-byte segment header"
                : "the segment header is all zeros"
            return LogScan(baseLSN: expectedBaseLSN ?? 0, lastLSN: nil, validEnd: 0, fileSize: fileSize,
                           stop: .tornTail(offset: 0, reason: reason), version: 0)
        }
        let (baseLSN, version) = try LogFormat.decodeFileHeader(bytes, path: path)
        if let expectedBaseLSN, expectedBaseLSN != baseLSN {
            throw StorageError.corruption(
                file: path, offset: 12, reason: "segment header has base LSN \(baseLSN) but \(expectedBaseLSN) was expected")
        }
        let frameHeaderSize = LogFormat.frameHeaderSize(version: version)

        var offset = headerSize
        var expected = baseLSN
        var lastLSN: UInt64?
        func result(_ stop: LogScan.StopReason) -> LogScan {
            var scan = LogScan(baseLSN: baseLSN, lastLSN: lastLSN, validEnd: Int64(offset), fileSize: fileSize, stop: stop,
                               version: version)
            if stop != .cleanEnd {
                scan.laterFrames = laterFrames(in: bytes, after: offset, firstLSN: expected, frameHeaderSize: frameHeaderSize)
            }
            return scan
        }
        while true {
            let remaining = bytes.count - offset
            if remaining == 0 { return result(.cleanEnd) }
            let at = Int64(offset)
            if remaining < frameHeaderSize {
                if isZero(bytes[offset...]) { return result(.cleanEnd) }
                return result(.tornTail(offset: at, reason: "incomplete frame header (\(remaining) bytes)"))
            }
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
            let stored = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self).littleEndian
            let lsn = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self).littleEndian
            if length == 0 && stored == 0 && lsn == 0 {
                // The writer pre-zeroes space ahead of its appends, so a log that ends in zeros ended
                // cleanly; zeros followed by anything else are a torn or unwritten region.
                if isZero(bytes[offset...]) { return result(.cleanEnd) }
                return result(.tornTail(offset: at, reason: "zero-filled frame header (preallocated or unwritten tail)"))
            }
            if length > LogFormat.maxPayloadSize {
                return result(.corrupt(offset: at, reason: "frame length \(length) exceeds the \(LogFormat.maxPayloadSize)-byte limit"))
            }
            if length > remaining - frameHeaderSize {
                return result(.tornTail(offset: at, reason:
                    "frame of \(length) payload bytes runs past the end of the file (\(remaining - frameHeaderSize) bytes remain)"))
            }
            let end = offset + frameHeaderSize + length
            let frame = UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
            if LogFormat.frameChecksum(frame) != stored {
                return result(.corrupt(offset: at, reason: "frame checksum mismatch"))
            }
            if lsn != expected {
                return result(.corrupt(offset: at, reason: "frame has LSN \(lsn) but \(expected) was expected"))
            }
            if let stopBefore, lsn >= stopBefore {
                return LogScan(baseLSN: baseLSN, lastLSN: lastLSN, validEnd: at, fileSize: fileSize,
                               stop: .corrupt(offset: at, reason: "stopped before commit \(lsn)"), version: version)
            }
            try body(lsn, UnsafeRawBufferPointer(rebasing: frame[frameHeaderSize...]))
            lastLSN = lsn
            expected &+= 1
            offset = end
        }
    }

    /// An intact frame at `offset`: its length fits the bytes and its checksum matches.
    static func intactFrame(at offset: Int, in bytes: UnsafeRawBufferPointer, frameHeaderSize: Int)
        -> (lsn: UInt64, syncedLSN: UInt64?, payload: Range<Int>)?
    {
        guard offset >= 0, offset + frameHeaderSize <= bytes.count else { return nil }
        let length = Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
        let end = offset + frameHeaderSize + length
        guard length <= LogFormat.maxPayloadSize, end <= bytes.count else { return nil }
        let stored = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self).littleEndian
        guard LogFormat.frameChecksum(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) == stored else { return nil }
        let lsn = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self).littleEndian
        let synced = frameHeaderSize >= 24 ? bytes.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self).littleEndian : nil
        return (lsn, synced, offset + frameHeaderSize..<end)
    }

    /// Searches the bytes after a bad frame for intact frames that would have followed it.
    ///
    /// Every offset is tried, since the bad frame's length cannot be trusted; an offset is a frame only
    /// if its LSN is plausible (from `firstLSN` on, and not beyond one frame per remaining header's worth
    /// of bytes) and its checksum matches, so the cost is one comparison per byte and a checksum per
    /// candidate. Found frames are followed by their lengths, as a normal scan would.
    static func laterFrames(in bytes: UnsafeRawBufferPointer, after start: Int, firstLSN: UInt64,
                            frameHeaderSize: Int) -> [LogScan.LaterFrame] {
        var found: [LogScan.LaterFrame] = []
        var offset = start + 1
        let limit = firstLSN &+ UInt64(max(0, bytes.count - start) / frameHeaderSize + 1)
        while offset + frameHeaderSize <= bytes.count {
            let lsn = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self).littleEndian
            guard lsn >= firstLSN, lsn <= limit, let frame = intactFrame(at: offset, in: bytes, frameHeaderSize: frameHeaderSize) else {
                offset += 1
                continue
            }
            found.append(LogScan.LaterFrame(offset: Int64(offset), lsn: lsn, syncedLSN: frame.syncedLSN))
            offset = frame.payload.upperBound
        }
        return found
    }

    private static func isZero(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
        bytes.allSatisfy { $0 == 0 }
    }
}
