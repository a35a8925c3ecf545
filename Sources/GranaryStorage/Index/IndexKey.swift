import Foundation

/// Order-preserving byte encodings of values: comparing two encodings with `memcmp` (as `ByteTree` does)
/// gives the same answer as comparing the values.
///
/// Secondary index keys are one encoded component per indexed column, followed by the row's primary key,
/// so that equal index values are unique keys ordered by row. Each component is a tag byte then a payload,
/// and is self-delimiting (no encoding is a proper prefix of another), which makes a concatenation compare
/// column by column and lets a descending column be stored byte-complemented.
///
/// Order within each type:
/// - null sorts first (its tag is the smallest), then false before true;
/// - integers by value; doubles by value with -0.0 equal to 0.0 and every NaN equal to one NaN that sorts
///   after +infinity; dates by their `timeIntervalSinceReferenceDate`, like doubles;
/// - strings by their UTF-8 bytes, which is Unicode scalar order: case-sensitive, not locale-aware and not
///   normalised ("é" as one scalar and "e" + combining accent differ). Byte arrays by their bytes. Either
///   way a prefix sorts before its extensions;
/// - UUIDs by their 16 bytes; references by table, then key.
///
/// Values of different types compare by tag. Tags are part of the snapshot format: never renumber them.
enum IndexKey {
    enum Tag: UInt8 {
        case null = 0x05
        case bool = 0x10
        case int = 0x20
        case double = 0x28
        case date = 0x30
        case string = 0x40
        case bytes = 0x48
        case uuid = 0x50
        case reference = 0x60
    }

    // MARK: Primary keys

    static let primaryKeyLength = 8

    /// `key` as 8 big-endian bytes with the sign bit flipped, so that byte order is numeric order.
    static func primaryKey(_ key: Int64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(primaryKeyLength)
        appendPrimaryKey(key, to: &bytes)
        return bytes
    }

    static func appendPrimaryKey(_ key: Int64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: orderedBits(key).bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Calls `body` with the encoded primary key on the stack: the allocation-free form for lookups.
    static func withPrimaryKey<R>(_ key: Int64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: orderedBits(key).bigEndian) { try body($0) }
    }

    /// Decodes the primary key in the last 8 bytes of `bytes`: a table key, or a secondary index key,
    /// which ends with the primary key of its row.
    static func primaryKey(from bytes: UnsafeRawBufferPointer) -> Int64 {
        precondition(bytes.count >= primaryKeyLength, "an index key holds at least the 8-byte primary key")
        let raw = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - primaryKeyLength, as: UInt64.self))
        return Int64(bitPattern: raw ^ (1 << 63))
    }

    static func primaryKey(from bytes: [UInt8]) -> Int64 {
        bytes.withUnsafeBytes { primaryKey(from: $0) }
    }

    private static func orderedBits(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: value) ^ (1 << 63)
    }

    /// IEEE 754 bits rearranged so that unsigned order is numeric order: negative numbers have every bit
    /// flipped (larger magnitude, smaller key), positive ones only the sign bit.
    private static func orderedBits(_ value: Double) -> UInt64 {
        var value = value
        if value == 0 { value = 0 }  // -0.0 == 0.0, so they must encode alike
        if value.isNaN { value = .nan }  // one positive quiet NaN, above +infinity
        let bits = value.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    // MARK: Components

    /// Appends the encoding of `value` as one key component.
    ///
    /// - Parameter descending: complement every byte, which reverses the component's order (encodings
    ///   are self-delimiting, so no complemented encoding is a prefix of another).
    /// - Throws: `StorageError.invalidArgument` for `.references`: a to-many relationship has no order
    ///   as a single value and cannot be indexed.
    static func append(_ value: Value, descending: Bool, to bytes: inout [UInt8]) throws {
        let start = bytes.count
        switch value {
        case .null:
            bytes.append(Tag.null.rawValue)
        case .bool(let b):
            bytes.append(Tag.bool.rawValue)
            bytes.append(b ? 1 : 0)
        case .int(let i):
            bytes.append(Tag.int.rawValue)
            appendPrimaryKey(i, to: &bytes)
        case .double(let d):
            bytes.append(Tag.double.rawValue)
            withUnsafeBytes(of: orderedBits(d).bigEndian) { bytes.append(contentsOf: $0) }
        case .date(let date):
            bytes.append(Tag.date.rawValue)
            withUnsafeBytes(of: orderedBits(date.timeIntervalSinceReferenceDate).bigEndian) { bytes.append(contentsOf: $0) }
        case .string(var s):
            bytes.append(Tag.string.rawValue)
            s.withUTF8 { appendEscaped($0, to: &bytes) }
            bytes.append(contentsOf: [0x00, 0x00])
        case .bytes(let b):
            bytes.append(Tag.bytes.rawValue)
            b.withUnsafeBufferPointer { appendEscaped($0, to: &bytes) }
            bytes.append(contentsOf: [0x00, 0x00])
        case .uuid(let u):
            bytes.append(Tag.uuid.rawValue)
            withUnsafeBytes(of: u.uuid) { bytes.append(contentsOf: $0) }
        case .reference(let r):
            bytes.append(Tag.reference.rawValue)
            withUnsafeBytes(of: r.table.rawValue.bigEndian) { bytes.append(contentsOf: $0) }
            appendPrimaryKey(r.key, to: &bytes)
        case .references:
            throw StorageError.invalidArgument(
                "a to-many relationship (.references) cannot be indexed: index the to-one relationship on the other side")
        }
        if descending { complement(&bytes, from: start) }
    }

    /// The encoding of the components in order, each ascending or descending.
    ///
    /// - Throws: `StorageError.invalidArgument` if a component is `.references`.
    static func make(_ components: [(value: Value, descending: Bool)]) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16 * components.count + primaryKeyLength)
        for component in components { try append(component.value, descending: component.descending, to: &bytes) }
        return bytes
    }

    /// The bytes every string component starting with `prefix` begins with: the tag and the escaped
    /// UTF-8 bytes, without the terminator.
    ///
    /// Use it for `BEGINSWITH` scans, from this key (inclusive) to `ByteTree.prefixSuccessor` of it
    /// (exclusive), after the encodings of any earlier columns.
    static func stringPrefix(_ prefix: String, descending: Bool) -> [UInt8] {
        var bytes: [UInt8] = [Tag.string.rawValue]
        var prefix = prefix
        prefix.withUTF8 { appendEscaped($0, to: &bytes) }
        if descending { complement(&bytes, from: 0) }
        return bytes
    }

    /// 0x00 becomes 0x00 0xFF, so that the terminator 0x00 0x00 sorts below any continuation and a
    /// string's encoding is a prefix of its extensions' encodings up to the terminator.
    private static func appendEscaped(_ source: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        bytes.reserveCapacity(bytes.count + source.count + 2)
        var runStart = 0
        for (i, byte) in source.enumerated() where byte == 0 {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart...i]))
            bytes.append(0xFF)
            runStart = i + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart...]))
    }

    private static func complement(_ bytes: inout [UInt8], from start: Int) {
        for i in start..<bytes.count { bytes[i] = ~bytes[i] }
    }
}
