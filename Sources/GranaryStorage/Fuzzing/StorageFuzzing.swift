import Foundation

/// The engine's file-format readers and writers, reachable from the fuzz targets in `Fuzz/`.
///
/// The formats are internal, and a fuzz target is an ordinary executable that can only see public
/// symbols; an SPI keeps these entry points out of the API that `import GranaryStorage` shows, and
/// `@testable import` would only work in debug builds, where fuzzing is slow. Nothing else should use
/// them: they change whenever a format does.
@_spi(Fuzzing) public enum StorageFuzzing {
    // MARK: Rows

    /// Decodes one encoded row, as the engine does when it reads a table.
    /// - Throws: `StorageError.corruption` when the bytes are not a row.
    public static func decodeRow(_ bytes: [UInt8]) throws -> Row {
        try RowCodec.decode(bytes, table: "fuzz", key: 0)
    }

    /// Decodes one encoded row the two other ways the object layer does: value by value through
    /// `EncodedRow.values()`, and into a reused `Row` through `EncodedRow.decode(into:)`.
    /// - Throws: `StorageError.corruption` when the bytes are not a row.
    public static func decodeRowLazily(_ bytes: [UInt8], reusing row: inout Row) throws -> [Value] {
        try bytes.withUnsafeBytes { raw in
            let encoded = EncodedRow(bytes: raw, table: "fuzz", key: 0)
            var values: [Value] = []
            var iterator = try encoded.values()
            while let value = try iterator.next() { values.append(value) }
            try encoded.decode(into: &row)
            return values
        }
    }

    /// The stored form of a row.
    public static func encodeRow(_ row: Row) -> [UInt8] { RowCodec.encode(row) }

    // MARK: Log segments

    /// What a scan of a log segment found: the good frames in order, where reading stopped and why.
    public struct LogSegment: Sendable {
        public var baseLSN: UInt64
        /// The segment's format version (0 when its header is torn).
        public var version: UInt32
        public var frames: [(lsn: UInt64, payload: [UInt8])]
        /// Each frame's synced LSN, in format 2 segments.
        public var syncedLSNs: [UInt64?]
        public var validEnd: Int
        public var stop: String
    }

    /// Scans a segment held in memory, as recovery does.
    /// - Throws: `StorageError.corruption` or `.unsupportedFormat` for a bad header.
    public static func scanLog(_ bytes: [UInt8]) throws -> LogSegment {
        var frames: [(lsn: UInt64, payload: [UInt8])] = []
        var synced: [UInt64?] = []
        let scan = try bytes.withUnsafeBytes { raw in
            let version = raw.count >= LogFormat.fileHeaderSize ? raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian : 0
            return try LogReader.scan(bytes: raw, path: "fuzz.wal", expectedBaseLSN: nil) { lsn, payload in
                frames.append((lsn, Array(payload)))
                // The payload points into `raw`, just after its frame's header.
                let payloadOffset = payload.baseAddress! - raw.baseAddress!
                synced.append(version >= 2 ? raw.loadUnaligned(fromByteOffset: payloadOffset - 8, as: UInt64.self).littleEndian : nil)
            }
        }
        return LogSegment(baseLSN: scan.baseLSN, version: scan.version, frames: frames, syncedLSNs: synced,
                          validEnd: Int(scan.validEnd), stop: "\(scan.stop)")
    }

    /// A segment laid out as `LogWriter` writes it: the header, then one frame per payload with
    /// consecutive LSNs from `baseLSN`. In format 2 each frame carries its synced LSN (by default the LSN
    /// before it, as a writer syncing every commit writes).
    public static func logSegment(baseLSN: UInt64, version: UInt32 = 2, payloads: [[UInt8]], syncedLSNs: [UInt64?] = []) -> [UInt8] {
        var bytes = LogFormat.fileHeader(baseLSN: baseLSN, version: version)
        let frameHeaderSize = LogFormat.frameHeaderSize(version: version)
        for (i, payload) in payloads.enumerated() {
            let start = bytes.count
            var header = ByteWriter(capacity: frameHeaderSize)
            header.writeUInt32(UInt32(payload.count))
            header.writeUInt32(0)
            header.writeUInt64(baseLSN &+ UInt64(i))
            if frameHeaderSize >= 24 {
                let given = i < syncedLSNs.count ? syncedLSNs[i] : nil
                header.writeUInt64(given ?? (baseLSN &+ UInt64(i) &- 1))
            }
            bytes.append(contentsOf: header.bytes)
            bytes.append(contentsOf: payload)
            setChecksum(of: &bytes, frameAt: start, frameHeaderSize: frameHeaderSize)
        }
        return bytes
    }

    /// Rewrites the header checksum and the checksum of every frame whose length fits the file, so that
    /// a fuzzer's mutations reach the frame and payload checks behind them instead of stopping at a CRC.
    public static func repairLogChecksums(_ bytes: inout [UInt8]) {
        guard bytes.count >= LogFormat.fileHeaderSize else { return }
        storeUInt32(CRC32C.mask(CRC32C.checksum(Array(bytes[0..<20]))), in: &bytes, at: 20)
        let frameHeaderSize = LogFormat.frameHeaderSize(version: loadUInt32(bytes, at: 8))
        var offset = LogFormat.fileHeaderSize
        while bytes.count - offset >= frameHeaderSize {
            let length = Int(loadUInt32(bytes, at: offset))
            guard length <= bytes.count - offset - frameHeaderSize else { return }
            setChecksum(of: &bytes, frameAt: offset, frameHeaderSize: frameHeaderSize)
            offset += frameHeaderSize + length
        }
    }

    /// Decodes each payload as a committed transaction and applies it to an empty store, as recovery
    /// replays a log, then checks every resulting table as `Engine.verify()` does.
    /// - Returns: the problems the verification found (none for a log a real engine wrote).
    /// - Throws: `StorageError` for a payload that is not a transaction or that cannot be applied.
    public static func replay(_ payloads: [[UInt8]]) throws -> [String] {
        var state = EngineState()
        for payload in payloads {
            let ops = try payload.withUnsafeBytes { try Operation.decodeTransaction($0, context: "fuzz.wal", offset: 0) }
            for op in ops { try state.apply(op) }
        }
        return problems(in: state)
    }

    // MARK: Snapshots

    /// The contents of a loaded snapshot in a form that compares exactly: each table's schema as JSON,
    /// next key, and rows by key as their stored bytes, in table order.
    public struct SnapshotSummary: Sendable, Hashable {
        public var lsn: UInt64
        public var tables: [String]
        /// Verification problems of the loaded tables (none for a snapshot a real engine wrote).
        public var problems: [String]
    }

    /// Loads a snapshot held in memory, as opening a store does, and summarizes what it holds.
    /// - Throws: `StorageError.corruption` or `.unsupportedFormat` for any damage.
    public static func loadSnapshot(_ bytes: [UInt8], rebuildIndexes: Bool = false) throws -> SnapshotSummary {
        let state = try SnapshotCodec.load(SnapshotContents(path: "fuzz.snap", bytes: bytes), rebuildIndexes: rebuildIndexes)
        return summary(of: state)
    }

    /// Loads a snapshot and writes what it holds as a new snapshot at `path` (through a temporary file
    /// beside it), as a checkpoint would, returning the new file's bytes.
    /// - Throws: `StorageError` when the snapshot cannot be loaded or the file cannot be written.
    public static func rewriteSnapshot(_ bytes: [UInt8], rebuildIndexes: Bool = false, at path: String) throws -> [UInt8] {
        let state = try SnapshotCodec.load(SnapshotContents(path: "fuzz.snap", bytes: bytes), rebuildIndexes: rebuildIndexes)
        let writer = try SnapshotWriter.create(temporaryPath: path + ".tmp", lsn: state.lsn)
        do {
            try SnapshotCodec.write(state, to: writer)
            try writer.finish(finalPath: path)
        } catch {
            try? writer.abandon()
            throw error
        }
        let file = try PosixFile.open(path, mode: .readOnly)
        defer { file.close() }
        return try file.readAll()
    }

    /// Rewrites the header, block and footer checksums and the footer's counts from the blocks the file
    /// holds, so that a fuzzer's mutations reach the records instead of stopping at the framing.
    public static func repairSnapshotChecksums(_ bytes: inout [UInt8]) {
        let header = SnapshotFormat.headerSize, footerSize = SnapshotFormat.footerSize
        guard bytes.count >= header + footerSize else { return }
        storeUInt32(CRC32C.mask(CRC32C.checksum(Array(bytes[0..<20]))), in: &bytes, at: 20)
        let footer = bytes.count - footerSize
        var offset = header
        var blockCount: UInt64 = 0, rawTotal: UInt64 = 0, records: UInt64 = 0
        while footer - offset >= SnapshotFormat.blockHeaderSize {
            let rawLength = Int(loadUInt32(bytes, at: offset))
            let storedField = loadUInt32(bytes, at: offset + 4)
            let storedLength = Int(storedField & ~SnapshotFormat.storedUncompressedFlag)
            let stored = offset + SnapshotFormat.blockHeaderSize
            guard storedLength <= footer - stored else { break }
            storeUInt32(CRC32C.mask(CRC32C.checksum(Array(bytes[stored..<stored + storedLength]))), in: &bytes, at: offset + 8)
            blockCount += 1
            rawTotal += UInt64(rawLength)
            records += recordCount(bytes[stored..<stored + storedLength], rawLength: rawLength,
                                   isCompressed: storedField & SnapshotFormat.storedUncompressedFlag == 0)
            offset = stored + storedLength
        }
        var counts = ByteWriter(capacity: 24)
        counts.writeUInt64(blockCount)
        counts.writeUInt64(rawTotal)
        counts.writeUInt64(min(records, rawTotal))
        bytes.replaceSubrange(footer + 8..<footer + 32, with: counts.bytes)
        storeUInt32(CRC32C.mask(CRC32C.checksum(Array(bytes[footer..<footer + 32]))), in: &bytes, at: footer + 32)
    }

    /// The number of records a block's raw bytes frame, or 0 when they do not decompress.
    private static func recordCount(_ stored: ArraySlice<UInt8>, rawLength: Int, isCompressed: Bool) -> UInt64 {
        guard rawLength > 0, rawLength <= 1 << 24 else { return 0 }
        let raw: [UInt8]
        if isCompressed {
            guard let decompressed = try? stored.withUnsafeBytes({ try LZ4.decompress($0, rawSize: rawLength, context: "fuzz", offset: 0) })
            else { return 0 }
            raw = decompressed
        } else {
            raw = Array(stored)
        }
        return raw.withUnsafeBytes { raw in
            var reader = ByteReader(raw, context: "fuzz")
            var count: UInt64 = 0
            while !reader.isAtEnd, (try? reader.readLengthPrefixed()) != nil { count += 1 }
            return count
        }
    }

    // MARK: Shared

    private static func summary(of state: EngineState) -> SnapshotSummary {
        var tables: [String] = []
        for table in state.orderedTables {
            var text = "\(table.id) next \(table.nextKey) \(String(decoding: Operation.json(table.schema), as: UTF8.self))"
            table.rows.scan { k, v in
                text += "\n\(IndexKey.primaryKey(from: k)): \(Array(v))"
                return true
            }
            for index in table.indexes { text += "\nindex \(index.definition.name): \(index.entries.count) entries" }
            tables.append(text)
        }
        return SnapshotSummary(lsn: state.lsn, tables: tables, problems: problems(in: state))
    }

    private static func problems(in state: EngineState) -> [String] {
        var report = VerificationReport()
        for table in state.orderedTables { Engine.verify(table, into: &report) }
        return report.problems
    }

    private static func setChecksum(of bytes: inout [UInt8], frameAt offset: Int, frameHeaderSize: Int) {
        let length = Int(loadUInt32(bytes, at: offset))
        let crc = bytes.withUnsafeBytes { raw in
            LogFormat.frameChecksum(UnsafeRawBufferPointer(rebasing: raw[offset..<offset + frameHeaderSize + length]))
        }
        storeUInt32(crc, in: &bytes, at: offset + 4)
    }

    private static func loadUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    private static func storeUInt32(_ value: UInt32, in bytes: inout [UInt8], at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) }
    }
}
