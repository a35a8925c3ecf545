import Foundation
import GranaryStorage

/// The framing of every file GranarySync writes to the cloud: a fixed header, the payload (LZ4-compressed
/// when that pays) and a CRC32C of everything before it.
///
/// ```
/// offset  size  field (integers little-endian)
///  0      4     magic "GSYN"
///  4      2     format version (SyncConstants.formatVersion)
///  6      1     kind (Kind)
///  7      1     flags: bit 0 = payload LZ4-compressed; other bits must be 0
///  8      8     payload length as stored
/// 16      8     payload length uncompressed
/// 24      n     payload
/// 24+n    4     CRC32C of bytes [0, 24+n)
/// ```
///
/// The version and lengths are readable without parsing the payload, and a torn or conflicted copy fails
/// the length or checksum test before any JSON is read, so a reader can treat it as not yet arrived.
struct EventFile: Sendable, Hashable {
    /// What a file holds.
    enum Kind: UInt8, Sendable {
        case eventPart = 1
        case baselinePart = 2
        case registration = 3
        /// A large attribute value: the raw bytes as payload, no JSON.
        case data = 4
    }

    var kind: Kind
    /// The payload, uncompressed.
    var payload: Data

    static let magic: [UInt8] = Array("GSYN".utf8)
    static let headerSize = 24
    static let checksumSize = 4
    static let compressedFlag: UInt8 = 1

    /// The bytes of the file. Deterministic: the same kind and payload always give the same bytes, so a
    /// re-upload after a crash writes exactly what another device may already have read.
    func encoded() -> Data {
        var stored = payload
        var flags: UInt8 = 0
        if payload.count > SyncConstants.compressionThreshold && payload.count <= LZ4.maxInputSize {
            let compressed = payload.withUnsafeBytes { LZ4.compress($0) }
            if compressed.count < payload.count {
                stored = Data(compressed)
                flags |= Self.compressedFlag
            }
        }
        var bytes = Data(capacity: Self.headerSize + stored.count + Self.checksumSize)
        bytes.append(contentsOf: Self.magic)
        append(SyncConstants.formatVersion, to: &bytes)
        bytes.append(kind.rawValue)
        bytes.append(flags)
        append(UInt64(stored.count), to: &bytes)
        append(UInt64(payload.count), to: &bytes)
        bytes.append(stored)
        let crc = bytes.withUnsafeBytes { CRC32C.checksum($0) }
        append(crc, to: &bytes)
        return bytes
    }

    /// The file in `bytes`, checked; `name` is only for errors.
    ///
    /// Checks in this order, so that each refusal says the most useful thing: length of the header,
    /// magic, format version (a newer writer may have changed everything after it), stored length
    /// against the file's length, checksum, then kind, flags and decompression.
    /// - Throws: `EventFileError.truncated`, `.notASyncFile`, `.unsupportedFormatVersion`,
    ///   `.checksumMismatch` or `.corrupt`, each naming `name` and the offset.
    init(decoding bytes: Data, name: String) throws(EventFileError) {
        let bytes = bytes.count == 0 || bytes.startIndex == 0 ? bytes : Data(bytes)
        guard bytes.count >= 6 else { throw .truncated(name: name, length: bytes.count, needed: Self.headerSize + Self.checksumSize) }
        guard bytes.prefix(4).elementsEqual(Self.magic) else { throw .notASyncFile(name: name) }
        let version = UInt16(bytes[4]) | UInt16(bytes[5]) << 8
        guard version <= SyncConstants.formatVersion else {
            throw .unsupportedFormatVersion(name: name, found: version, supported: SyncConstants.formatVersion)
        }
        guard version >= 1 else { throw .corrupt(name: name, offset: 4, reason: "format version 0") }
        guard bytes.count >= Self.headerSize + Self.checksumSize else {
            throw .truncated(name: name, length: bytes.count, needed: Self.headerSize + Self.checksumSize)
        }
        let storedLength = Self.uint64(bytes, at: 8), rawLength = Self.uint64(bytes, at: 16)
        let available = UInt64(bytes.count - Self.headerSize - Self.checksumSize)
        guard storedLength <= available else {
            // Compare without adding to `storedLength`, which a damaged header can make as large as 2^64 − 1.
            let needed = storedLength > UInt64(Int.max / 2) ? Int.max : Self.headerSize + Int(storedLength) + Self.checksumSize
            throw .truncated(name: name, length: bytes.count, needed: needed)
        }
        let end = Self.headerSize + Int(storedLength)
        guard end + Self.checksumSize == bytes.count else {
            throw .corrupt(name: name, offset: end + Self.checksumSize,
                           reason: "\(bytes.count - end - Self.checksumSize) bytes follow the checksum")
        }
        let computed = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<end])) }
        let stored = UInt32(truncatingIfNeeded: Self.uint64(bytes, at: end, size: 4))
        guard computed == stored else { throw .checksumMismatch(name: name, offset: end, stored: stored, computed: computed) }
        guard let kind = Kind(rawValue: bytes[6]) else { throw .corrupt(name: name, offset: 6, reason: "unknown kind \(bytes[6])") }
        let flags = bytes[7]
        guard flags & ~Self.compressedFlag == 0 else {
            throw .corrupt(name: name, offset: 7, reason: "unknown flag bits \(flags) for format version \(version)")
        }
        let storedPayload = bytes[Self.headerSize..<end]
        if flags & Self.compressedFlag != 0 {
            guard rawLength <= UInt64(LZ4.maxInputSize) else {
                throw .corrupt(name: name, offset: 16, reason: "uncompressed length \(rawLength) is beyond what LZ4 produces")
            }
            do {
                let raw = try storedPayload.withUnsafeBytes {
                    try LZ4.decompress($0, rawSize: Int(rawLength), context: name, offset: Int64(Self.headerSize))
                }
                payload = Data(raw)
            } catch {
                throw .corrupt(name: name, offset: Self.headerSize, reason: "the compressed payload does not expand (\(error))")
            }
        } else {
            guard rawLength == storedLength else {
                throw .corrupt(name: name, offset: 16, reason: "uncompressed length \(rawLength) differs from the stored \(storedLength)")
            }
            payload = Data(storedPayload)
        }
        self.kind = kind
    }

    init(kind: Kind, payload: Data) {
        self.kind = kind
        self.payload = payload
    }

    private static func uint64(_ bytes: Data, at offset: Int, size: Int = 8) -> UInt64 {
        var value: UInt64 = 0
        for i in (0..<size).reversed() { value = value << 8 | UInt64(bytes[offset + i]) }
        return value
    }
}

private func append<T: FixedWidthInteger>(_ value: T, to bytes: inout Data) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
}
