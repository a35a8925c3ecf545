/// What `LogReader.scan` found in a segment.
struct LogScan: Sendable, Equatable {
    /// Why the scan stopped.
    enum StopReason: Sendable, Equatable {
        /// The last frame ends at the end of the file, or is followed only by zeros (space the writer
        /// preallocated); `validEnd` is then less than `fileSize`.
        case cleanEnd
        /// The file ends inside a frame, or with zeros: a crash during an append (or during creation,
        /// at offset 0). Harmless in the last segment: truncate at `validEnd`.
        case tornTail(offset: Int64, reason: String)
        /// A frame that is complete but wrong (checksum, LSN, length). In the last segment it may still
        /// be a torn write the disk reordered; in an earlier segment it means lost data.
        case corrupt(offset: Int64, reason: String)
    }

    /// The header's base LSN; for a segment torn at offset 0 (no header), the expected base LSN or 0.
    var baseLSN: UInt64
    /// The LSN of the last good frame, `nil` when there is none.
    var lastLSN: UInt64?
    /// The offset just past the last good frame (0 when even the header is torn).
    var validEnd: Int64
    var fileSize: Int64
    var stop: StopReason
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
    static func scan(
        path: String, expectedBaseLSN: UInt64?,
        _ body: (_ lsn: UInt64, _ payload: UnsafeRawBufferPointer) throws -> Void
    ) throws -> LogScan {
        let file = try PosixFile.open(path, mode: .readOnly)
        defer { file.close() }
        let bytes = try file.readAll()
        return try bytes.withUnsafeBytes { try scan(bytes: $0, path: path, expectedBaseLSN: expectedBaseLSN, body) }
    }

    /// `scan(path:expectedBaseLSN:_:)` over bytes already in memory.
    /// - Throws: as `scan(path:expectedBaseLSN:_:)`.
    static func scan(
        bytes: UnsafeRawBufferPointer, path: String, expectedBaseLSN: UInt64?,
        _ body: (_ lsn: UInt64, _ payload: UnsafeRawBufferPointer) throws -> Void
    ) throws -> LogScan {
        let fileSize = Int64(bytes.count)
        let headerSize = LogFormat.fileHeaderSize
        if bytes.count < headerSize || isZero(bytes[0..<headerSize]) {
            let reason = bytes.count < headerSize
                ? "the file is shorter than the \(headerSize)-byte segment header"
                : "the segment header is all zeros"
            return LogScan(baseLSN: expectedBaseLSN ?? 0, lastLSN: nil, validEnd: 0, fileSize: fileSize,
                           stop: .tornTail(offset: 0, reason: reason))
        }
        let baseLSN = try LogFormat.decodeFileHeader(bytes, path: path)
        if let expectedBaseLSN, expectedBaseLSN != baseLSN {
            throw StorageError.corruption(
                file: path, offset: 12, reason: "segment header has base LSN \(baseLSN) but \(expectedBaseLSN) was expected")
        }

        var offset = headerSize
        var expected = baseLSN
        var lastLSN: UInt64?
        func result(_ stop: LogScan.StopReason) -> LogScan {
            LogScan(baseLSN: baseLSN, lastLSN: lastLSN, validEnd: Int64(offset), fileSize: fileSize, stop: stop)
        }
        while true {
            let remaining = bytes.count - offset
            if remaining == 0 { return result(.cleanEnd) }
            let at = Int64(offset)
            if remaining < LogFormat.frameHeaderSize {
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
            if length > remaining - LogFormat.frameHeaderSize {
                return result(.tornTail(offset: at, reason:
                    "frame of \(length) payload bytes runs past the end of the file (\(remaining - LogFormat.frameHeaderSize) bytes remain)"))
            }
            let end = offset + LogFormat.frameHeaderSize + length
            let frame = UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
            if LogFormat.frameChecksum(frame) != stored {
                return result(.corrupt(offset: at, reason: "frame checksum mismatch"))
            }
            if lsn != expected {
                return result(.corrupt(offset: at, reason: "frame has LSN \(lsn) but \(expected) was expected"))
            }
            try body(lsn, UnsafeRawBufferPointer(rebasing: frame[LogFormat.frameHeaderSize...]))
            lastLSN = lsn
            expected &+= 1
            offset = end
        }
    }

    private static func isZero(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
        bytes.allSatisfy { $0 == 0 }
    }
}
