/// What a durable store records about its own files, so that recovery can tell a crash from damage.
///
/// A crash can only cut off commits that were never synced: frames at the end of the newest log
/// segment. Without a record elsewhere, a lost segment, a log truncated at a frame boundary, or a lost
/// snapshot's log look just like a crash. The manifest says which segment is the newest, which snapshot
/// the store relies on, and up to which commit the log is known to be on disk; recovery refuses to open
/// a store whose files fall short of it.
///
/// It is kept twice, in `MANIFEST-1` and `MANIFEST-2`, written alternately in place (one sector, with a
/// checksum and a sequence number), so that neither a torn write nor a single lost or damaged file can
/// hide it: recovery takes the intact copy with the higher sequence number. It is written when the
/// store opens, when a checkpoint starts a segment or adopts a snapshot, and when the store closes —
/// never per commit, which would double the cost of a durable commit. Commits written since the last of
/// those are protected by the synced LSN in each later log frame instead (see `LogFormat`).
///
/// Layout (64 bytes): magic "GRNMAN01" | u32 version | u64 sequence | u64 newest segment's base LSN |
/// u64 snapshot LSN (0: none) | u64 durable LSN | u32 flags (bit 0: closed cleanly) | 12 bytes zero |
/// u32 masked CRC32C of the first 60 bytes. Little-endian.
struct StoreManifest: Sendable, Equatable {
    var sequence: UInt64 = 0
    /// The segment appends go to; every older segment is complete.
    var newestSegmentBase: UInt64
    /// The snapshot the log continues from (0 when there is none).
    var snapshotLSN: UInt64
    /// Every commit up to this one was on disk when the manifest was written.
    var durableLSN: UInt64
    /// The store was closed cleanly: nothing after `durableLSN` was ever written.
    var isClosed: Bool

    static let fileNames = ["MANIFEST-1", "MANIFEST-2"]
    static let magic: [UInt8] = Array("GRNMAN01".utf8)
    static let version: UInt32 = 1
    static let size = 64

    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: Self.size)
        w.write(contentsOf: Self.magic)
        w.writeUInt32(Self.version)
        w.writeUInt64(sequence)
        w.writeUInt64(newestSegmentBase)
        w.writeUInt64(snapshotLSN)
        w.writeUInt64(durableLSN)
        w.writeUInt32(isClosed ? 1 : 0)
        w.write(contentsOf: repeatElement(0, count: 12))
        w.writeUInt32(CRC32C.mask(CRC32C.checksum(w.bytes)))
        return w.bytes
    }

    /// Decodes one copy; nil for a copy that is short, torn or not a manifest (the other copy decides).
    /// - Throws: `.unsupportedFormat` for a manifest of a later version, which this build must not
    ///   second-guess.
    static func decode(_ bytes: [UInt8], path: String) throws -> StoreManifest? {
        guard bytes.count >= size, bytes[0..<8].elementsEqual(magic) else { return nil }
        return try bytes.withUnsafeBytes { raw -> StoreManifest? in
            func u64(_ at: Int) -> UInt64 { raw.loadUnaligned(fromByteOffset: at, as: UInt64.self).littleEndian }
            let stored = raw.loadUnaligned(fromByteOffset: 60, as: UInt32.self).littleEndian
            guard CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<60]))) == stored else { return nil }
            let version = raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian
            guard version == Self.version else { throw StorageError.unsupportedFormat(file: path, version: Int(version)) }
            let flags = raw.loadUnaligned(fromByteOffset: 44, as: UInt32.self).littleEndian
            return StoreManifest(sequence: u64(12), newestSegmentBase: u64(20), snapshotLSN: u64(28), durableLSN: u64(36),
                                 isClosed: flags & 1 != 0)
        }
    }

    /// What the store's two copies say.
    struct Reading {
        /// The intact copy with the higher sequence number.
        var newest: StoreManifest?
        /// Copies that exist but are damaged or unreadable, by file name.
        var damaged: [String] = []
        /// Copies that do not exist.
        var missing: [String] = []
    }

    /// Reads both copies in `directory`.
    /// - Throws: `.unsupportedFormat` for a copy of a later version; `.io` when an existing copy cannot be read.
    static func read(in directory: String) throws -> Reading {
        var reading = Reading()
        for name in fileNames {
            let path = directory + "/" + name
            guard PosixFile.exists(path) else {
                reading.missing.append(name)
                continue
            }
            let file = try PosixFile.open(path, mode: .readOnly)
            defer { file.close() }
            guard let manifest = try decode(try file.readAll(), path: name) else {
                reading.damaged.append(name)
                continue
            }
            if manifest.sequence >= reading.newest?.sequence ?? 0 { reading.newest = manifest }
        }
        return reading
    }

    /// Writes the next sequence number's copy in place and syncs it; the other copy keeps the previous
    /// record until the next write, so a write torn by a crash leaves that one to recovery.
    /// - Throws: `.io` when the file cannot be written or synced.
    mutating func write(in directory: String) throws {
        sequence += 1
        let name = Self.fileNames[Int(sequence % 2)]
        let path = directory + "/" + name
        let isNew = !PosixFile.exists(path)
        let file = try PosixFile.open(path, mode: .create)
        defer { file.close() }
        try file.write(encoded(), at: 0)
        try file.sync()
        if isNew { try PosixFile.syncDirectory(directory) }
    }
}
