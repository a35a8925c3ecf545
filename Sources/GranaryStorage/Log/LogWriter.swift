import Synchronization

/// Appends frames to one write-ahead-log segment and makes them durable.
///
/// Failure policy (fsyncgate, Redis): a failed or short append is truncated back to the last good
/// frame and rethrown, and every later `append` throws `.poisoned`; `sync` keeps working after an
/// append failure, because the file still ends at a good frame. A failed `sync` poisons everything:
/// Linux may already have dropped the unsynced pages, so the only safe way on is to reopen and recover
/// from what the log really holds.
///
/// Thread safety: every method may be called from any thread. `append`, `close`, `endOffset` and
/// `nextLSN` serialize on an internal lock (the engine calls them under its writer lock anyway).
/// `sync` takes no lock around the system call, so one thread may `fdatasync` while another keeps
/// appending: a sync covers at least every append that returned before it started. Do not `close`
/// while a `sync` is in flight.
final class LogWriter: Sendable {
    let path: String
    let baseLSN: UInt64
    /// The segment's format version: new segments get `LogFormat.version`; an older segment reopened
    /// for appending keeps its own, so that all its frames share one layout.
    let version: UInt32
    private let frameHeaderSize: Int
    private let file: PosixFile

    /// Space is zero-filled this far ahead of the appends. An append into space that already exists
    /// needs an fdatasync of its data only; one that grows the file must also make the new size durable,
    /// which on ext4 costs about as much again (the benchmark's limit rows show both).
    static let preallocationChunk: Int64 = 1 << 20

    private struct AppendState {
        var endOffset: Int64
        /// The file size: the end of the zero-filled space after `endOffset`.
        var allocatedEnd: Int64
        var nextLSN: UInt64
        /// The newest commit known to be on disk, written into each frame (see `LogFormat`).
        var syncedLSN: UInt64
        /// Reused between appends so a commit does not allocate; released when a huge frame grew it.
        var frame: [UInt8] = []
        var isClosed = false
    }

    private let state: Mutex<AppendState>
    /// Why appends (`.append`) or everything (`.sync`) are refused; the first error wins.
    private let failure = Mutex<(append: StorageError?, sync: StorageError?)>((nil, nil))

    private init(path: String, baseLSN: UInt64, version: UInt32, file: PosixFile, endOffset: Int64, nextLSN: UInt64) {
        self.path = path
        self.baseLSN = baseLSN
        self.version = version
        self.frameHeaderSize = LogFormat.frameHeaderSize(version: version)
        self.file = file
        // Everything before the first frame appended here is on disk: synced by the caller, or in a
        // snapshot or an earlier, synced segment.
        self.state = Mutex(AppendState(endOffset: endOffset, allocatedEnd: endOffset, nextLSN: nextLSN, syncedLSN: nextLSN &- 1))
    }

    deinit { file.close() }

    /// Creates a new segment (the file must not exist), writes its header and fsyncs it.
    ///
    /// The caller syncs the directory to make the new name durable. A crash before that may leave a
    /// short or zero-filled file, which `LogReader` reports as a torn tail at offset 0; remove it and
    /// create again.
    /// - Throws: `StorageError.io` when the file exists or cannot be created, written or synced.
    static func create(path: String, baseLSN: UInt64) throws -> LogWriter {
        let file = try PosixFile.open(path, mode: .createNew)
        do {
            try file.write(LogFormat.fileHeader(baseLSN: baseLSN), at: 0)
            try file.fullSync()
        } catch {
            file.close()
            throw error
        }
        return LogWriter(path: path, baseLSN: baseLSN, version: LogFormat.version, file: file,
                         endOffset: Int64(LogFormat.fileHeaderSize), nextLSN: baseLSN)
    }

    /// Reopens an existing segment for appending after `LogReader.scan` found its good prefix.
    ///
    /// Anything past `validEnd` (a torn or corrupt tail) is truncated and the file synced first, so new
    /// frames can never be followed by stale ones, and the frames recovery read (perhaps only from the
    /// page cache of a process that died) are on disk before a new frame says they are.
    /// - Parameters:
    ///   - validEnd: the scan's `validEnd`, at least the header size and at most the file size.
    ///   - nextLSN: the LSN of the next frame (`lastLSN + 1`, or the base LSN for an empty segment).
    /// - Throws: `StorageError.io` on file errors, `.corruption`/`.unsupportedFormat` for a bad header,
    ///   `.invalidArgument` when `validEnd` or `nextLSN` do not fit the file.
    static func openForAppend(path: String, validEnd: Int64, nextLSN: UInt64) throws -> LogWriter {
        let file = try PosixFile.open(path, mode: .readWrite)
        do {
            let size = try file.size()
            guard validEnd >= Int64(LogFormat.fileHeaderSize), validEnd <= size else {
                throw StorageError.invalidArgument(
                    "cannot append to \(path) at offset \(validEnd): the file has \(size) bytes and a \(LogFormat.fileHeaderSize)-byte header")
            }
            let header = try file.pread(at: 0, count: LogFormat.fileHeaderSize)
            let (baseLSN, version) = try header.withUnsafeBytes { try LogFormat.decodeFileHeader($0, path: path) }
            guard nextLSN >= baseLSN else {
                throw StorageError.invalidArgument("next LSN \(nextLSN) is below the base LSN \(baseLSN) of \(path)")
            }
            if size > validEnd { try file.truncate(to: validEnd) }
            try file.sync()
            return LogWriter(path: path, baseLSN: baseLSN, version: version, file: file, endOffset: validEnd, nextLSN: nextLSN)
        } catch {
            file.close()
            throw error
        }
    }

    /// The offset just past the last good frame: where the next append goes.
    var endOffset: Int64 { state.withLock { $0.endOffset } }

    /// The LSN the next append will get.
    var nextLSN: UInt64 { state.withLock { $0.nextLSN } }

    /// Appends one frame with a single `pwrite` and returns its LSN. The frame is durable only after a
    /// later `sync()` returns.
    /// - Throws: `.invalidArgument` for a payload over 1 GiB (the writer stays usable); `.io` when the
    ///   write fails (the file is truncated back and the writer refuses further appends); `.poisoned`
    ///   after an earlier failure; `.closed` after `close()`.
    func append(payload: UnsafeRawBufferPointer) throws -> UInt64 {
        guard payload.count <= LogFormat.maxPayloadSize else {
            throw StorageError.invalidArgument(
                "a \(payload.count)-byte transaction exceeds the \(LogFormat.maxPayloadSize)-byte log frame limit (\(path))")
        }
        try checkNotPoisoned(forAppend: true)
        return try state.withLock { state throws -> UInt64 in
            guard !state.isClosed else { throw StorageError.closed }
            let lsn = state.nextLSN
            let total = frameHeaderSize + payload.count
            state.frame.removeAll(keepingCapacity: state.frame.capacity <= 1 << 22)
            state.frame.reserveCapacity(total)
            state.frame.append(contentsOf: repeatElement(0, count: frameHeaderSize))
            state.frame.append(contentsOf: payload)
            let synced = state.syncedLSN
            let headerSize = frameHeaderSize
            state.frame.withUnsafeMutableBytes { frame in
                frame.storeBytes(of: UInt32(payload.count).littleEndian, toByteOffset: 0, as: UInt32.self)
                frame.storeBytes(of: lsn.littleEndian, toByteOffset: 8, as: UInt64.self)
                if headerSize >= 24 { frame.storeBytes(of: synced.littleEndian, toByteOffset: 16, as: UInt64.self) }
                let crc = LogFormat.frameChecksum(UnsafeRawBufferPointer(frame))
                frame.storeBytes(of: crc.littleEndian, toByteOffset: 4, as: UInt32.self)
            }
            do {
                let frameEnd = state.endOffset + Int64(total)
                if frameEnd > state.allocatedEnd {
                    let newEnd = (frameEnd / Self.preallocationChunk + 1) * Self.preallocationChunk
                    try Self.zeroFill(file, from: frameEnd, to: newEnd)
                    state.allocatedEnd = newEnd
                }
                try state.frame.withUnsafeBytes { try file.write($0, at: state.endOffset) }
            } catch {
                // Like Redis: cut a partial frame off so the file ends at a good frame again.
                var reason = "append to \(path) failed: \(error)"
                do {
                    try file.truncate(to: state.endOffset)
                    state.allocatedEnd = state.endOffset
                } catch {
                    reason += "; truncating back to offset \(state.endOffset) also failed: \(error)"
                }
                poison(forAppend: true, StorageError.poisoned(reason: reason))
                throw error
            }
            state.endOffset += Int64(total)
            state.nextLSN += 1
            return lsn
        }
    }

    private static let zeros = [UInt8](repeating: 0, count: 64 << 10)

    /// Writes real zeros (not a hole or an unwritten extent, whose first write would again change
    /// metadata) over `[start, end)`.
    private static func zeroFill(_ file: PosixFile, from start: Int64, to end: Int64) throws {
        var offset = start
        while offset < end {
            let n = Int(min(Int64(zeros.count), end - offset))
            try zeros.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[0..<n]), at: offset) }
            offset += Int64(n)
        }
    }

    /// Appends one frame; see `append(payload: UnsafeRawBufferPointer)`.
    /// - Throws: as `append(payload: UnsafeRawBufferPointer)`.
    func append(payload: [UInt8]) throws -> UInt64 {
        try payload.withUnsafeBytes { try append(payload: $0) }
    }

    /// `fdatasync`s the segment: every append that returned before this call is durable when it returns.
    /// - Throws: `.io` when the sync fails (then every later call throws `.poisoned`), `.poisoned` after
    ///   an earlier sync failure, `.closed` after `close()`.
    func sync() throws {
        try checkNotPoisoned(forAppend: false)
        guard !file.isClosed else { throw StorageError.closed }
        let covered = state.withLock { $0.nextLSN &- 1 }
        do {
            try file.sync()
        } catch {
            poison(forAppend: false, StorageError.poisoned(reason: "\(error)"))
            throw error
        }
        state.withLock { $0.syncedLSN = max($0.syncedLSN, covered) }
    }

    /// The newest commit of this segment known to be on disk (the base LSN − 1 before the first sync).
    var syncedLSN: UInt64 { state.withLock { $0.syncedLSN } }

    /// The size of a frame holding `payloadCount` bytes in this segment.
    func frameSize(payloadCount: Int) -> Int { frameHeaderSize + payloadCount }

    /// Cuts the zero-filled space after the last frame off and syncs, so a closed store's log is no
    /// larger than its frames. Called on a clean close.
    /// - Throws: `.io` when the truncation or sync fails.
    func trimPreallocation() throws {
        try state.withLock { state in
            guard !state.isClosed, state.allocatedEnd > state.endOffset else { return }
            try file.truncate(to: state.endOffset)
            try file.sync()
            state.allocatedEnd = state.endOffset
        }
    }

    /// Closes the file without syncing; later calls throw `.closed` (or `.poisoned`). Idempotent.
    func close() {
        state.withLock { state in
            state.isClosed = true
            file.close()
        }
    }

    /// Whether an earlier failure makes appends throw.
    var isPoisoned: Bool { failure.withLock { $0.append != nil || $0.sync != nil } }

    private func checkNotPoisoned(forAppend: Bool) throws {
        let error = failure.withLock { forAppend ? ($0.sync ?? $0.append) : $0.sync }
        if let error { throw error }
    }

    private func poison(forAppend: Bool, _ error: StorageError) {
        failure.withLock { failure in
            if forAppend {
                if failure.append == nil { failure.append = error }
            } else if failure.sync == nil {
                failure.sync = error
            }
        }
    }
}
