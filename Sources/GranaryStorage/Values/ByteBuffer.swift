import Foundation

/// Appends little-endian integers, LEB128 varints and length-prefixed bytes to a growing buffer.
///
/// Every on-disk and in-memory encoding in the engine goes through this type and `ByteReader`, so that
/// byte order and varint rules live in one place.
struct ByteWriter {
    var bytes: [UInt8]

    init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    var count: Int { bytes.count }

    mutating func write(_ byte: UInt8) { bytes.append(byte) }

    mutating func write<S: Sequence>(contentsOf s: S) where S.Element == UInt8 { bytes.append(contentsOf: s) }

    mutating func writeUInt32(_ v: UInt32) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func writeUInt64(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func writeDouble(_ v: Double) { writeUInt64(v.bitPattern) }

    mutating func writeVarint(_ v: UInt64) {
        var v = v
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Zig-zag keeps small negative numbers short.
    mutating func writeSignedVarint(_ v: Int64) {
        writeVarint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    mutating func writeLengthPrefixed<C: Collection>(_ data: C) where C.Element == UInt8 {
        writeVarint(UInt64(data.count))
        bytes.append(contentsOf: data)
    }

    mutating func writeString(_ s: String) {
        var s = s
        s.withUTF8 { writeLengthPrefixed($0) }
    }
}

/// Reads what `ByteWriter` wrote, checking every length against the bytes that remain.
///
/// A failed check throws `StorageError.corruption` naming `context` (usually a file name) and the offset,
/// so that damaged input is reported, never trusted.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int
    /// Added to `offset` in error messages, when `bytes` is a slice of a larger file.
    let baseOffset: Int64
    let context: String

    init(_ bytes: UnsafeRawBufferPointer, context: String, baseOffset: Int64 = 0) {
        self.bytes = bytes
        self.offset = 0
        self.baseOffset = baseOffset
        self.context = context
    }

    var isAtEnd: Bool { offset >= bytes.count }
    var remaining: Int { bytes.count - offset }

    func corruption(_ reason: String) -> StorageError {
        .corruption(file: context, offset: baseOffset + Int64(offset), reason: reason)
    }

    mutating func need(_ n: Int) throws {
        if n < 0 || n > remaining { throw corruption("needs \(n) bytes but only \(remaining) remain") }
    }

    mutating func readByte() throws -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt32() throws -> UInt32 {
        try need(4)
        defer { offset += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    mutating func readUInt64() throws -> UInt64 {
        try need(8)
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    mutating func readDouble() throws -> Double { Double(bitPattern: try readUInt64()) }

    mutating func readVarint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try readByte()
            if shift == 63 && b > 1 { throw corruption("varint overflows 64 bits") }
            result |= UInt64(b & 0x7f) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw corruption("varint longer than 10 bytes") }
        }
    }

    mutating func readSignedVarint() throws -> Int64 {
        let u = try readVarint()
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    /// A length that must fit in what remains, so a damaged length cannot make us allocate gigabytes.
    mutating func readLength() throws -> Int {
        let n = try readVarint()
        guard n <= UInt64(remaining) else { throw corruption("length \(n) exceeds the \(remaining) bytes that remain") }
        return Int(n)
    }

    mutating func readBytes(_ n: Int) throws -> UnsafeRawBufferPointer {
        try need(n)
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + n])
    }

    mutating func readLengthPrefixed() throws -> UnsafeRawBufferPointer {
        try readBytes(try readLength())
    }

    /// Strings are written from Swift strings, which are always valid UTF-8, and every stored byte is
    /// under a checksum; so decoding repairs rather than validates (the generic validating initializer
    /// costs a runtime metadata lookup per string on the read path).
    mutating func readString() throws -> String {
        let raw = try readLengthPrefixed()
        return String(decoding: raw.bindMemory(to: UInt8.self), as: UTF8.self)
    }
}
