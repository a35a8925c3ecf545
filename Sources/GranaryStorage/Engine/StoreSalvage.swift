import Foundation

extension Engine {
    /// Copies every intact commit of a damaged store into a new store, and reports what it could not.
    ///
    /// SQLite's `.recover` is the model: nothing is trusted that does not check out, and everything that
    /// does is kept. The newest snapshot is read block by block (a damaged block loses its rows, the
    /// others are kept); then every intact frame of every log segment, found by searching past damaged
    /// ones, is applied in LSN order, each commit whole or not at all. Where commits are missing, the
    /// later ones are still applied if they can be, so a row may hold a newer state than the lost
    /// commits would have left; the report lists every gap. Segments set aside by a
    /// `.keepConsistentPrefix` open (`*.damaged`) are read for the commits the live segments lack.
    ///
    /// The source is opened read-only and never modified; it may be open elsewhere only for reading.
    /// Indexes are rebuilt from the salvaged rows, so a unique index the rows no longer satisfy loses
    /// the rows that break it (counted as lost).
    /// - Parameters:
    ///   - source: the damaged store's directory.
    ///   - destination: where the new store is created; it must not exist.
    /// - Throws: `.invalidArgument` when the source is not a store or the destination exists; `.io` for
    ///   file errors; errors creating the new store.
    public static func salvage(_ source: URL, into destination: URL) throws -> SalvageReport {
        let directory = source.path
        guard PosixFile.isDirectory(directory) else {
            throw StorageError.invalidArgument("\(directory) is not a store directory")
        }
        guard !PosixFile.exists(destination.path) else {
            throw StorageError.invalidArgument("\(destination.path) already exists: salvage writes a new store")
        }
        var salvage = StoreSalvage(directory: directory)
        try salvage.run()
        let engine = try Engine.open(.directory(destination), options: Options(durability: .full))
        do {
            try engine.replaceContent(with: salvage.state)
            try engine.checkpoint()
            try engine.close()
        } catch {
            try? engine.close()
            throw error
        }
        var report = salvage.report
        for table in salvage.state.orderedTables { report.tables[table.name] = table.rows.count }
        return report
    }
}

/// The work of `Engine.salvage(_:into:)`: reads what it can into a state.
struct StoreSalvage {
    let directory: String
    var state = EngineState()
    var report = SalvageReport()

    init(directory: String) {
        self.directory = directory
    }

    mutating func run() throws {
        let names = try PosixFile.list(directory)
        let snapshots = names.compactMap { name -> (UInt64, String)? in
            guard name.hasPrefix("snapshot-"), name.hasSuffix(".snap"), let lsn = UInt64(name.dropFirst(9).dropLast(5), radix: 16) else { return nil }
            return (lsn, name)
        }.sorted { $0.0 < $1.0 }
        if let (lsn, name) = snapshots.last {
            readSnapshot(name, lsnFromName: lsn)
        }
        try replayLog(names)
    }

    // MARK: Snapshot

    /// Reads the snapshot strictly if it is sound, block by block if it is not.
    private mutating func readSnapshot(_ name: String, lsnFromName: UInt64) {
        let path = directory + "/" + name
        report.snapshotFile = name
        if let loaded = try? SnapshotCodec.load(path: path, rebuildIndexes: true) {
            state = loaded
            report.snapshotLSN = loaded.lsn
            report.snapshotRows = loaded.orderedTables.reduce(0) { $0 + $1.rows.count }
            return
        }
        guard let bytes = try? PosixFile.open(path, mode: .readOnly).readAll() else {
            report.damage.append(.init(file: name, offset: 0, reason: "the snapshot cannot be read"))
            report.snapshotFile = nil
            return
        }
        bytes.withUnsafeBytes { readSnapshotBlocks($0, name: name, lsnFromName: lsnFromName) }
    }

    private mutating func readSnapshotBlocks(_ raw: UnsafeRawBufferPointer, name: String, lsnFromName: UInt64) {
        var lsn = lsnFromName
        if raw.count >= SnapshotFormat.headerSize, let fromHeader = try? SnapshotFormat.decodeHeader(raw, path: name) {
            lsn = fromHeader
        } else {
            report.damage.append(.init(file: name, offset: 0, reason: "the snapshot header is damaged; its LSN is taken from its name"))
        }
        state.lsn = lsn
        report.snapshotLSN = lsn
        var currentTable: TableID?
        var offset = SnapshotFormat.headerSize
        var searching = false
        while offset + SnapshotFormat.blockHeaderSize <= raw.count {
            if raw.count - offset == SnapshotFormat.footerSize, raw[offset..<offset + 8].elementsEqual(SnapshotFormat.footerMagic) { break }
            guard let (block, end) = Self.block(at: offset, in: raw) else {
                if !searching {
                    report.damage.append(.init(file: name, offset: Int64(offset), reason:
                        "damaged snapshot block; the rows in it are lost, reading resumes at the next intact block"))
                    searching = true
                }
                offset += 1
                continue
            }
            searching = false
            offset = end
            guard let records = try? Self.records(of: block, name: name) else { continue }
            for record in records { apply(record, table: &currentTable) }
        }
    }

    /// The raw bytes of a plausible, checksummed block at `offset`, and where it ends.
    private static func block(at offset: Int, in raw: UnsafeRawBufferPointer) -> ([UInt8], Int)? {
        let rawLength = Int(raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
        let storedField = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self).littleEndian
        let checksum = raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self).littleEndian
        let isCompressed = storedField & SnapshotFormat.storedUncompressedFlag == 0
        let storedLength = Int(storedField & ~SnapshotFormat.storedUncompressedFlag)
        let start = offset + SnapshotFormat.blockHeaderSize
        guard rawLength > 0, rawLength <= SnapshotFormat.maxBlockRawSize, storedLength <= raw.count - start,
              isCompressed ? (storedLength < rawLength && rawLength <= storedLength * SnapshotFormat.maxCompressionRatio + 16) : storedLength == rawLength
        else { return nil }
        let stored = UnsafeRawBufferPointer(rebasing: raw[start..<start + storedLength])
        guard CRC32C.mask(CRC32C.checksum(stored)) == checksum else { return nil }
        let bytes = isCompressed ? try? LZ4.decompress(stored, rawSize: rawLength, context: "salvage", offset: Int64(offset)) : Array(stored)
        return bytes.map { ($0, start + storedLength) }
    }

    private static func records(of block: [UInt8], name: String) throws -> [[UInt8]] {
        try block.withUnsafeBytes { raw in
            var reader = ByteReader(raw, context: name)
            var records: [[UInt8]] = []
            while !reader.isAtEnd { records.append(Array(try reader.readLengthPrefixed())) }
            return records
        }
    }

    /// Applies one snapshot record; rows go in one at a time so that one bad row loses only itself.
    private mutating func apply(_ record: [UInt8], table currentTable: inout TableID?) {
        record.withUnsafeBytes { raw in
            var r = ByteReader(raw, context: "snapshot")
            guard let typeByte = try? r.readByte(), let type = SnapshotCodec.RecordType(rawValue: typeByte) else { return }
            switch type {
            case .store:
                if let next = try? r.readVarint(), next <= UInt64(UInt32.max) { state.nextTableID = max(state.nextTableID, UInt32(next)) }
                if let metadata = try? Operation.unjson(StoreMetadata.self, &r) { state.metadata = metadata }
            case .table:
                guard let id = try? r.readVarint(), id <= UInt64(UInt32.max), let nextKey = try? r.readSignedVarint(),
                      let schema = try? Operation.unjson(TableSchema.self, &r) else {
                    currentTable = nil
                    return
                }
                let tableID = TableID(rawValue: UInt32(id))
                do {
                    try state.apply(.createTable(tableID, schema))
                    try state.apply(.reserveKeys(tableID, nextKey))
                    currentTable = tableID
                } catch {
                    currentTable = nil
                }
            case .rows:
                guard let id = try? r.readVarint(), let count = try? r.readVarint() else { return }
                let known = currentTable.map { UInt64($0.rawValue) == id } ?? false
                for _ in 0..<count {
                    guard let key = try? r.readSignedVarint(), let row = try? r.readLengthPrefixed() else { return }
                    guard known, let table = currentTable else {
                        report.snapshotRowsLost += 1
                        continue
                    }
                    do {
                        try state.apply(.insert(table, key, Array(row)))
                        report.snapshotRows += 1
                    } catch {
                        report.snapshotRowsLost += 1
                    }
                }
            case .index:
                // Rebuilt from the rows as they go in.
                break
            }
        }
    }

    // MARK: Log

    private struct Frame {
        var lsn: UInt64
        var payload: [UInt8]
        var file: String
    }

    /// Applies every intact frame after the snapshot, in LSN order.
    private mutating func replayLog(_ names: [String]) throws {
        let live = names.filter { $0.hasPrefix("log-") && $0.hasSuffix(".wal") }
        let set = names.filter { $0.hasPrefix("log-") && $0.hasSuffix(".wal.damaged") }
        var frames: [UInt64: Frame] = [:]
        // Live segments first: where a set-aside copy and the live store disagree, the live one won.
        for name in live.sorted() + set.sorted() {
            for frame in readFrames(name) where frames[frame.lsn] == nil { frames[frame.lsn] = frame }
        }
        var expected = state.lsn + 1
        for lsn in frames.keys.sorted() where lsn > state.lsn {
            if lsn > expected { report.missingCommits.append(expected...(lsn - 1)) }
            expected = lsn + 1
            let frame = frames[lsn]!
            do {
                let ops = try frame.payload.withUnsafeBytes { try Operation.decodeTransaction($0, context: frame.file, offset: 0) }
                var next = state
                for op in ops { try next.apply(op) }
                next.lsn = lsn
                state = next
                report.appliedCommits += 1
            } catch {
                report.unappliedCommits.append(.init(lsn: lsn, reason: "\(error)"))
            }
        }
        report.lastLSN = max(state.lsn, report.snapshotLSN ?? 0)
    }

    /// Every intact frame of a segment, searching past damaged ones.
    private mutating func readFrames(_ name: String) -> [Frame] {
        guard let bytes = try? PosixFile.open(directory + "/" + name, mode: .readOnly).readAll() else {
            report.damage.append(.init(file: name, offset: 0, reason: "the segment cannot be read"))
            return []
        }
        return bytes.withUnsafeBytes { raw -> [Frame] in
            var version = LogFormat.version
            var nextLSN: UInt64 = 0
            if raw.count >= LogFormat.fileHeaderSize, let header = try? LogFormat.decodeFileHeader(raw, path: name) {
                version = header.version
                nextLSN = header.baseLSN
            } else {
                report.damage.append(.init(file: name, offset: 0, reason: "damaged segment header; frames are searched for"))
            }
            let headerSize = LogFormat.frameHeaderSize(version: version)
            var frames: [Frame] = []
            var offset = LogFormat.fileHeaderSize
            while offset < raw.count {
                if let frame = LogReader.intactFrame(at: offset, in: raw, frameHeaderSize: headerSize), frame.lsn >= nextLSN {
                    frames.append(Frame(lsn: frame.lsn, payload: Array(raw[frame.payload]), file: name))
                    nextLSN = frame.lsn + 1
                    offset = frame.payload.upperBound
                    continue
                }
                // The writer's preallocated zeros end the segment.
                if raw[offset...].allSatisfy({ $0 == 0 }) { break }
                guard let next = LogReader.laterFrames(in: raw, after: offset, firstLSN: nextLSN, frameHeaderSize: headerSize).first else {
                    report.damage.append(.init(file: name, offset: Int64(offset), reason: "damaged frame; no intact frame follows it"))
                    break
                }
                report.damage.append(.init(file: name, offset: Int64(offset), reason: "damaged frame(s); reading resumes at offset \(next.offset)"))
                offset = Int(next.offset)
            }
            return frames
        }
    }
}
