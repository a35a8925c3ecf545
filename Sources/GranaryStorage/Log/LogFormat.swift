/// The byte layout of a write-ahead-log segment, shared by `LogWriter` and `LogReader`.
///
/// File header (24 bytes): magic "GRNLOG01" | u32 version | u64 base LSN | u32 masked CRC32C of the
/// first 20 bytes. Frames follow back to back. Version 2 frames: u32 payload length | u32 masked CRC32C
/// over (length ‖ LSN ‖ synced LSN ‖ payload) | u64 LSN | u64 synced LSN | payload. Version 1 frames
/// (segments written before the synced LSN existed) lack the synced LSN. All integers little-endian.
/// One frame is one committed transaction; LSNs rise by exactly one per frame, starting at the base LSN.
///
/// The synced LSN is the newest commit known to be on disk when the frame was appended. It lets recovery
/// tell a torn tail from damage: a frame can only be torn if it was never synced, and a later intact
/// frame whose synced LSN covers a damaged one proves the damaged one had been acknowledged.
///
/// Frames are not split into 32 KiB blocks as LevelDB's are: the reader stops at the first bad frame
/// (point-in-time recovery) instead of resynchronising, so block alignment would buy nothing.
enum LogFormat {
    static let magic: [UInt8] = Array("GRNLOG01".utf8)
    /// The version new segments are written with.
    static let version: UInt32 = 2
    static let fileHeaderSize = 24
    /// Larger payloads are refused by the writer and treated as corruption by the reader.
    static let maxPayloadSize = 1 << 30

    /// The frame header's size in segments of `version`.
    static func frameHeaderSize(version: UInt32) -> Int { version >= 2 ? 24 : 16 }

    /// The 24 header bytes of a segment whose first frame will carry `baseLSN`.
    static func fileHeader(baseLSN: UInt64, version: UInt32 = version) -> [UInt8] {
        var writer = ByteWriter(capacity: fileHeaderSize)
        writer.write(contentsOf: magic)
        writer.writeUInt32(version)
        writer.writeUInt64(baseLSN)
        writer.writeUInt32(CRC32C.mask(CRC32C.checksum(writer.bytes)))
        return writer.bytes
    }

    /// Checks the magic, version and checksum of a segment header and returns its base LSN and version.
    /// - Throws: `StorageError.corruption` for a wrong magic or checksum, `.unsupportedFormat` for an
    ///   unknown version (checked before the checksum: another version may lay its header out differently).
    static func decodeFileHeader(_ bytes: UnsafeRawBufferPointer, path: String) throws -> (baseLSN: UInt64, version: UInt32) {
        precondition(bytes.count >= fileHeaderSize)
        guard bytes[0..<8].elementsEqual(magic) else {
            throw StorageError.corruption(file: path, offset: 0, reason: "not a Granary log segment (bad magic)")
        }
        let version = bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian
        let stored = bytes.loadUnaligned(fromByteOffset: 20, as: UInt32.self).littleEndian
        let actual = CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<20])))
        guard version == 1 || version == 2 else {
            // A later version may lay its header out differently, but one whose checksum fails in this
            // layout is more likely a damaged version field than a newer store.
            if stored != actual {
                throw StorageError.corruption(file: path, offset: 8, reason:
                    "log segment header has unknown version \(version) and a checksum mismatch: the header is damaged")
            }
            throw StorageError.unsupportedFormat(file: path, version: Int(version))
        }
        guard stored == actual else {
            throw StorageError.corruption(file: path, offset: 0, reason: "log segment header checksum mismatch")
        }
        return (bytes.loadUnaligned(fromByteOffset: 12, as: UInt64.self).littleEndian, version)
    }

    /// The masked checksum of a frame laid out contiguously (header, then payload): it covers the length,
    /// the LSN (and synced LSN) and the payload, skipping the checksum field itself.
    static func frameChecksum(_ frame: UnsafeRawBufferPointer) -> UInt32 {
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: frame[0..<4]))
        return CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: frame[8...]), extending: crc))
    }
}
