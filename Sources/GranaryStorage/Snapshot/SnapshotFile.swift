/// The byte layout of a snapshot file, shared by `SnapshotWriter` and `SnapshotReader`.
///
/// Header (24 bytes): magic "GRNSNAP1" | u32 version | u64 LSN of the last commit included | u32 masked
/// CRC32C of the first 20 bytes. Blocks: u32 raw length | u32 stored length (high bit set: stored
/// uncompressed) | u32 masked CRC32C of the stored bytes | stored bytes. Footer (36 bytes): magic
/// "GRNEND01" | u64 block count | u64 total raw bytes | u64 record count | u32 masked CRC32C of the
/// first 32 footer bytes. All integers little-endian.
///
/// A block's raw bytes are whole records, each a varint length and its bytes; a record never
/// straddles blocks, so every block decodes on its own (in parallel, if the reader wants).
enum SnapshotFormat {
    static let magic: [UInt8] = Array("GRNSNAP1".utf8)
    static let footerMagic: [UInt8] = Array("GRNEND01".utf8)
    static let version: UInt32 = 1
    static let headerSize = 24
    static let blockHeaderSize = 12
    static let footerSize = 36
    /// Blocks are closed once their raw bytes reach this size; a larger record gets a block of its own.
    static let targetBlockSize = 256 * 1024
    static let maxRecordSize = 1 << 30
    /// A record of `maxRecordSize` bytes plus its varint length.
    static let maxBlockRawSize = maxRecordSize + 10
    static let storedUncompressedFlag: UInt32 = 1 << 31
    /// LZ4 cannot expand data by more than this factor, so a larger raw length is corruption and is
    /// refused before allocating for it.
    static let maxCompressionRatio = 255

    static func header(lsn: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: headerSize)
        writer.write(contentsOf: magic)
        writer.writeUInt32(version)
        writer.writeUInt64(lsn)
        writer.writeUInt32(CRC32C.mask(CRC32C.checksum(writer.bytes)))
        return writer.bytes
    }

    /// Validates a snapshot header and returns its LSN.
    /// - Throws: `.corruption` for a short file, wrong magic or checksum; `.unsupportedFormat` for an
    ///   unknown version.
    static func decodeHeader(_ bytes: UnsafeRawBufferPointer, path: String) throws -> UInt64 {
        guard bytes.count >= headerSize else {
            throw StorageError.corruption(file: path, offset: Int64(bytes.count),
                                          reason: "snapshot is shorter than its \(headerSize)-byte header")
        }
        guard bytes[0..<8].elementsEqual(magic) else {
            throw StorageError.corruption(file: path, offset: 0, reason: "not a Granary snapshot (bad magic)")
        }
        let version = bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian
        let stored = bytes.loadUnaligned(fromByteOffset: 20, as: UInt32.self).littleEndian
        let checksumMatches = stored == CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<20])))
        guard version == self.version else {
            // A checksum that fails in this layout means a damaged version field, not a newer snapshot.
            if !checksumMatches {
                throw StorageError.corruption(file: path, offset: 8, reason:
                    "snapshot header has unknown version \(version) and a checksum mismatch: the header is damaged")
            }
            throw StorageError.unsupportedFormat(file: path, version: Int(version))
        }
        guard checksumMatches else {
            throw StorageError.corruption(file: path, offset: 0, reason: "snapshot header checksum mismatch")
        }
        return bytes.loadUnaligned(fromByteOffset: 12, as: UInt64.self).littleEndian
    }
}

/// Writes a snapshot: records go into LZ4-compressed blocks in a temporary file, and `finish` makes it
/// durable and renames it into place.
///
/// Not thread-safe: one task writes a snapshot from start to finish. After any error every call throws
/// that error again; the temporary file stays behind for `abandon()` (or recovery) to remove, and the
/// final path is never created.
final class SnapshotWriter {
    let temporaryPath: String
    let lsn: UInt64
    private let file: PosixFile
    private var block: [UInt8] = []
    private var endOffset = Int64(SnapshotFormat.headerSize)
    private var blockCount: UInt64 = 0
    private var totalRawBytes: UInt64 = 0
    private var recordCount: UInt64 = 0
    private var failure: (any Error)?
    private var isFinished = false

    private init(temporaryPath: String, lsn: UInt64, file: PosixFile) {
        self.temporaryPath = temporaryPath
        self.lsn = lsn
        self.file = file
        block.reserveCapacity(SnapshotFormat.targetBlockSize + 64)
    }

    deinit { file.close() }

    /// Starts a snapshot of the state after commit `lsn` in `temporaryPath`, replacing any leftover file
    /// there from an earlier failed attempt.
    /// - Throws: `StorageError.io` when the file cannot be created or written.
    static func create(temporaryPath: String, lsn: UInt64) throws -> SnapshotWriter {
        let file = try PosixFile.open(temporaryPath, mode: .create)
        do {
            try file.truncate(to: 0)
            try file.write(SnapshotFormat.header(lsn: lsn), at: 0)
        } catch {
            file.close()
            throw error
        }
        return SnapshotWriter(temporaryPath: temporaryPath, lsn: lsn, file: file)
    }

    /// Adds one record (at most 1 GiB).
    /// - Throws: `.invalidArgument` for an oversized record (the writer stays usable), `.io` when
    ///   writing a full block fails, or the earlier error after a failure.
    func append(record: UnsafeRawBufferPointer) throws {
        try checkUsable()
        guard record.count <= SnapshotFormat.maxRecordSize else {
            throw StorageError.invalidArgument(
                "a \(record.count)-byte snapshot record exceeds the \(SnapshotFormat.maxRecordSize)-byte limit (\(temporaryPath))")
        }
        let prefixSize = varintSize(UInt64(record.count))
        if !block.isEmpty && block.count + prefixSize + record.count > SnapshotFormat.targetBlockSize {
            try failing { try flushBlock() }
        }
        var prefix = ByteWriter(capacity: 10)
        prefix.writeVarint(UInt64(record.count))
        block.append(contentsOf: prefix.bytes)
        block.append(contentsOf: record)
        recordCount += 1
        if block.count >= SnapshotFormat.targetBlockSize { try failing { try flushBlock() } }
    }

    /// Adds one record; see `append(record: UnsafeRawBufferPointer)`.
    /// - Throws: as `append(record: UnsafeRawBufferPointer)`.
    func append(record: [UInt8]) throws {
        try record.withUnsafeBytes { try append(record: $0) }
    }

    /// Writes the last block and the footer, then publishes the snapshot at `finalPath`.
    ///
    /// Order matters: fsync the file *before* the rename, so the final name can never point at content
    /// that is not on disk (rename does not order data writes on every file system); then rename,
    /// which atomically replaces any older file of that name; then fsync the directory, so the new name
    /// survives a power loss before the caller deletes the log segments this snapshot replaces.
    /// If the directory sync fails, the final file exists and is complete but its name may not be
    /// durable: the error is thrown and the caller must not delete anything the snapshot replaces.
    /// - Throws: `StorageError.io` when a write, sync or rename fails, or the earlier error.
    func finish(finalPath: String) throws {
        try checkUsable()
        try failing {
            if !block.isEmpty { try flushBlock() }
            var footer = ByteWriter(capacity: SnapshotFormat.footerSize)
            footer.write(contentsOf: SnapshotFormat.footerMagic)
            footer.writeUInt64(blockCount)
            footer.writeUInt64(totalRawBytes)
            footer.writeUInt64(recordCount)
            footer.writeUInt32(CRC32C.mask(CRC32C.checksum(footer.bytes)))
            try file.write(footer.bytes, at: endOffset)
            endOffset += Int64(footer.count)
            try file.fullSync()
            file.close()
            try PosixFile.rename(temporaryPath, finalPath)
            isFinished = true
            try PosixFile.syncDirectory(PosixFile.parentDirectory(of: finalPath))
        }
    }

    /// Gives up: closes and removes the temporary file. Safe after a failure or instead of `finish`.
    /// - Throws: `StorageError.io` when the file exists but cannot be removed.
    func abandon() throws {
        file.close()
        if !isFinished { try PosixFile.remove(temporaryPath, ifExists: true) }
        isFinished = true
    }

    private func checkUsable() throws {
        if let failure { throw failure }
        if isFinished || file.isClosed { throw StorageError.invalidArgument("snapshot \(temporaryPath) is already finished") }
    }

    private func failing(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            failure = error
            throw error
        }
    }

    private func flushBlock() throws {
        let compressed = LZ4.compress(block)
        let isCompressed = compressed.count < block.count
        let stored = isCompressed ? compressed : block
        var header = ByteWriter(capacity: SnapshotFormat.blockHeaderSize + stored.count)
        header.writeUInt32(UInt32(block.count))
        header.writeUInt32(UInt32(stored.count) | (isCompressed ? 0 : SnapshotFormat.storedUncompressedFlag))
        header.writeUInt32(CRC32C.mask(CRC32C.checksum(stored)))
        header.write(contentsOf: stored)
        try file.write(header.bytes, at: endOffset)
        endOffset += Int64(header.count)
        blockCount += 1
        totalRawBytes += UInt64(block.count)
        block.removeAll(keepingCapacity: block.capacity <= 4 * SnapshotFormat.targetBlockSize)
    }

    private func varintSize(_ value: UInt64) -> Int {
        var size = 1
        var v = value
        while v >= 0x80 { v >>= 7; size += 1 }
        return size
    }
}

/// Where one block sits in a snapshot file.
struct SnapshotBlock: Sendable, Equatable {
    /// Offset of the block header in the file.
    let offset: Int64
    let rawLength: Int
    let storedLength: Int
    let isCompressed: Bool
    let storedChecksum: UInt32

    var storedOffset: Int64 { offset + Int64(SnapshotFormat.blockHeaderSize) }
}

/// A snapshot file read into memory with its header, footer and block framing validated; blocks are
/// checksummed and decompressed on demand, so they can be decoded in parallel.
///
/// It is `Sendable`: hand it to several tasks, each calling `forEachRecord(inBlock:)` on its own blocks.
struct SnapshotContents: Sendable {
    let path: String
    let lsn: UInt64
    let recordCount: Int
    let totalRawBytes: Int
    let blocks: [SnapshotBlock]
    private let bytes: [UInt8]

    /// Where the footer starts.
    var footerOffset: Int64 { Int64(bytes.count - SnapshotFormat.footerSize) }

    /// Reads the snapshot at `path` and validates everything but the blocks' contents.
    /// - Throws: `.corruption` (naming the offset) for a damaged header, a missing or damaged footer
    ///   (a truncated or unfinished file), or block framing that does not add up to the footer;
    ///   `.unsupportedFormat`; `.io` when the file cannot be read.
    static func load(path: String) throws -> SnapshotContents {
        let file = try PosixFile.open(path, mode: .readOnly)
        defer { file.close() }
        return try SnapshotContents(path: path, bytes: file.readAll())
    }

    /// Validates `bytes` as the contents of the snapshot at `path`; see `load(path:)`.
    /// - Throws: as `load(path:)`.
    init(path: String, bytes: [UInt8]) throws {
        self.path = path
        self.bytes = bytes
        (lsn, recordCount, totalRawBytes, blocks) = try bytes.withUnsafeBytes { raw in
            try Self.validateFraming(raw, path: path)
        }
    }

    private static func validateFraming(_ raw: UnsafeRawBufferPointer, path: String) throws
        -> (UInt64, Int, Int, [SnapshotBlock])
    {
        func corruption(_ offset: Int, _ reason: String) -> StorageError {
            .corruption(file: path, offset: Int64(offset), reason: reason)
        }
        let lsn = try SnapshotFormat.decodeHeader(raw, path: path)
        let footerOffset = raw.count - SnapshotFormat.footerSize
        guard footerOffset >= SnapshotFormat.headerSize,
              raw[footerOffset..<footerOffset + 8].elementsEqual(SnapshotFormat.footerMagic)
        else {
            throw corruption(max(footerOffset, SnapshotFormat.headerSize),
                             "snapshot footer is missing: the file is truncated or was never finished")
        }
        let footer = UnsafeRawBufferPointer(rebasing: raw[footerOffset...])
        let footerChecksum = footer.loadUnaligned(fromByteOffset: 32, as: UInt32.self).littleEndian
        guard footerChecksum == CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: footer[0..<32]))) else {
            throw corruption(footerOffset, "snapshot footer checksum mismatch")
        }
        let blockCount = footer.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
        let totalRaw = footer.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian
        let recordCount = footer.loadUnaligned(fromByteOffset: 24, as: UInt64.self).littleEndian
        // Every record costs at least one raw byte, every block at least a header.
        guard blockCount <= UInt64(footerOffset / SnapshotFormat.blockHeaderSize), recordCount <= totalRaw,
              totalRaw <= UInt64(Int.max / 2)
        else {
            throw corruption(footerOffset, "snapshot footer counts are impossible for the file's size")
        }

        var blocks: [SnapshotBlock] = []
        blocks.reserveCapacity(Int(blockCount))
        var offset = SnapshotFormat.headerSize
        var rawSum = 0
        while offset < footerOffset {
            guard footerOffset - offset >= SnapshotFormat.blockHeaderSize else {
                throw corruption(offset, "incomplete block header before the footer")
            }
            let rawLength = Int(raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
            let storedField = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self).littleEndian
            let checksum = raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self).littleEndian
            let isCompressed = storedField & SnapshotFormat.storedUncompressedFlag == 0
            let storedLength = Int(storedField & ~SnapshotFormat.storedUncompressedFlag)
            let storedOffset = offset + SnapshotFormat.blockHeaderSize
            guard storedLength <= footerOffset - storedOffset else {
                throw corruption(offset, "block of \(storedLength) stored bytes runs past the footer")
            }
            guard rawLength > 0, rawLength <= SnapshotFormat.maxBlockRawSize else {
                throw corruption(offset, "block raw length \(rawLength) is out of range")
            }
            if isCompressed {
                guard storedLength < rawLength, rawLength <= storedLength * SnapshotFormat.maxCompressionRatio + 16 else {
                    throw corruption(offset, "compressed block sizes \(storedLength) → \(rawLength) are impossible")
                }
            } else if storedLength != rawLength {
                throw corruption(offset, "uncompressed block stores \(storedLength) bytes but claims \(rawLength)")
            }
            blocks.append(SnapshotBlock(offset: Int64(offset), rawLength: rawLength, storedLength: storedLength,
                                        isCompressed: isCompressed, storedChecksum: checksum))
            rawSum += rawLength
            offset = storedOffset + storedLength
            guard blocks.count <= Int(blockCount) else {
                throw corruption(offset, "more blocks than the footer's \(blockCount)")
            }
        }
        guard blocks.count == Int(blockCount), rawSum == Int(totalRaw) else {
            throw corruption(footerOffset,
                "footer promises \(blockCount) blocks of \(totalRaw) raw bytes, found \(blocks.count) of \(rawSum)")
        }
        return (lsn, Int(recordCount), Int(totalRaw), blocks)
    }

    /// Checks the stored bytes of block `index` against its checksum.
    /// - Throws: `.corruption` naming the block's offset.
    func verifyChecksum(ofBlock index: Int) throws {
        let block = blocks[index]
        let actual = bytes.withUnsafeBytes { raw in
            CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(
                rebasing: raw[Int(block.storedOffset)..<Int(block.storedOffset) + block.storedLength])))
        }
        guard actual == block.storedChecksum else {
            throw StorageError.corruption(file: path, offset: block.offset, reason: "snapshot block checksum mismatch")
        }
    }

    /// The checksummed, decompressed raw bytes of block `index`.
    /// - Throws: `.corruption` naming the block's offset.
    func decodeBlock(_ index: Int) throws -> [UInt8] {
        try verifyChecksum(ofBlock: index)
        let block = blocks[index]
        return try bytes.withUnsafeBytes { raw in
            let stored = UnsafeRawBufferPointer(
                rebasing: raw[Int(block.storedOffset)..<Int(block.storedOffset) + block.storedLength])
            guard block.isCompressed else { return Array(stored) }
            return try LZ4.decompress(stored, rawSize: block.rawLength, context: path, offset: block.offset)
        }
    }

    /// Calls `body` with every record of block `index` and returns how many there were.
    /// - Throws: `.corruption` naming the block's offset, and whatever `body` throws.
    @discardableResult
    func forEachRecord(inBlock index: Int, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        let block = blocks[index]
        let raw = try decodeBlock(index)
        return try raw.withUnsafeBytes { raw in
            var reader = ByteReader(raw, context: path)
            var count = 0
            while !reader.isAtEnd {
                let record: UnsafeRawBufferPointer
                do {
                    record = try reader.readLengthPrefixed()
                } catch {
                    throw StorageError.corruption(file: path, offset: block.offset,
                        reason: "bad record at raw offset \(reader.offset) of the block: \(error)")
                }
                try body(record)
                count += 1
            }
            return count
        }
    }
}

/// Reads snapshot files written by `SnapshotWriter`.
enum SnapshotReader {
    /// The LSN of the last commit in the snapshot at `path`, from its header alone.
    /// - Throws: `.corruption` or `.unsupportedFormat` for a bad header, `.io` when the file cannot be read.
    static func readHeader(path: String) throws -> UInt64 {
        let file = try PosixFile.open(path, mode: .readOnly)
        defer { file.close() }
        let header = try file.pread(at: 0, count: SnapshotFormat.headerSize)
        return try header.withUnsafeBytes { try SnapshotFormat.decodeHeader($0, path: path) }
    }

    /// Calls `body` with every record, in the order they were appended, after validating the whole file.
    ///
    /// All framing and every block checksum are verified before the first record is delivered, so a
    /// damaged file normally throws before `body` runs; only damage that defeats a CRC32C can surface
    /// later, so callers still discard partial results on error. Record buffers are valid only during
    /// the call.
    /// - Throws: `.corruption` naming the file and offset (truncation, bit flips, count mismatches),
    ///   `.unsupportedFormat`, `.io`, and whatever `body` throws.
    @discardableResult
    static func read(path: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> (lsn: UInt64, records: Int) {
        try read(SnapshotContents.load(path: path), body)
    }

    /// `read(path:_:)` over a snapshot already read into memory.
    /// - Throws: as `read(path:_:)`.
    @discardableResult
    static func read(_ contents: SnapshotContents, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> (lsn: UInt64, records: Int) {
        for index in contents.blocks.indices { try contents.verifyChecksum(ofBlock: index) }
        var records = 0
        for index in contents.blocks.indices {
            records += try contents.forEachRecord(inBlock: index, body)
        }
        guard records == contents.recordCount else {
            throw StorageError.corruption(file: contents.path, offset: contents.footerOffset,
                reason: "footer promises \(contents.recordCount) records but the blocks hold \(records)")
        }
        return (contents.lsn, records)
    }
}
